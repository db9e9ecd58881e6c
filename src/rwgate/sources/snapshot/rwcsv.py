"""Reading the Retraction Watch CSV as Crossref publishes it.

Real exports are not tidy: the header has 20 fields in 2023 exports and 21 (a trailing comma) in
current ones, lines end in CRLF, dates are ``M/D/YYYY H:MM``, list fields end with a stray ``;``,
older Reason values carry a ``+`` prefix, missing DOIs are blank or ``unavailable``, missing PubMed
ids are ``0``, and DOIs come in any case and sometimes percent-encoded. This module absorbs all of
that so the snapshot stores one clean shape.

Rows are streamed (the full export is ~67 MB): :func:`iter_rows` yields either an :class:`RWRow` or
a :class:`~rwgate.contract.models.Problem` naming the line of a malformed row, which the caller
reports and skips while the rest of the file still imports. Columns are found by name, not
position, so a reordered export still reads.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rwgate.contract.doi import try_normalize
from rwgate.contract.evidence import normalize_type
from rwgate.contract.models import Location, Problem
from rwgate.errors import DataError

SOURCE_NAME = "retraction-watch-csv"
"""The notice ``source`` for rows read from a Retraction Watch CSV file."""

REQUIRED_COLUMNS = ("Record ID", "RetractionNature", "OriginalPaperDOI", "RetractionDate")
EXPORT_COLUMNS = (
    "Record ID", "Title", "Subject", "Institution", "Journal", "Publisher", "Country", "Author",
    "URLS", "ArticleType", "RetractionDate", "RetractionDOI", "RetractionPubMedID",
    "OriginalPaperDate", "OriginalPaperDOI", "OriginalPaperPubMedID", "RetractionNature",
    "Reason", "Paywalled", "Notes",
)  # fmt: skip
"""The export's header: 20 names (2023 exports), or 21 fields with a trailing comma (current)."""


def has_export_header(path: Path) -> bool:
    """Whether the file starts with the Retraction Watch export's own header, either variant."""
    try:
        with Path(path).open(encoding="utf-8-sig", newline="") as handle:
            header = next(csv.reader(handle), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    names = [name.strip() for name in header]
    if names and not names[-1]:
        names.pop()
    return tuple(names) == EXPORT_COLUMNS


_MISSING_DOI = {"", "unavailable", "n/a", "na", "none", "0"}
_US_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?$")
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ].*)?$")


class CSVFormatError(DataError):
    """The file as a whole cannot be read as a Retraction Watch CSV (message names the file)."""


class RowError(DataError):
    """One row is malformed; the message names the field."""


@dataclass(frozen=True, slots=True)
class RWRow:
    """One Retraction Watch record: a notice (``notice_type``) about an original paper."""

    line: int
    record_id: str
    notice_type: str
    nature: str
    title: str | None
    journal: str | None
    notice_doi: str | None
    notice_pmid: str | None
    notice_date: dt.date | None
    doi: str | None
    pmid: str | None
    original_date: dt.date | None
    reasons: list[str] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)

    @property
    def year(self) -> int | None:
        return self.original_date.year if self.original_date else None


RowResult = RWRow | Problem
"""What :func:`iter_rows` yields: a clean row, or the problem that made a row unusable."""


def parse_date(text: str) -> dt.date | None:
    """``M/D/YYYY H:MM`` (or ISO) as a date; blank is ``None``; else :class:`RowError`."""
    text = text.strip()
    if not text:
        return None
    us, iso = _US_DATE.match(text), _ISO_DATE.match(text)
    try:
        if us:
            return dt.date(int(us[3]), int(us[1]), int(us[2]))
        if iso:
            return dt.date(int(iso[1]), int(iso[2]), int(iso[3]))
    except ValueError:
        pass
    raise RowError(f"unparsable date {text!r}")


def parse_list(text: str) -> list[str]:
    """A ``;``-separated field as a list, without the trailing empty item or ``+`` prefixes."""
    items = (part.strip().lstrip("+").strip() for part in text.split(";"))
    return [item for item in items if item]


def parse_doi(text: str) -> str | None:
    """Canonical DOI, or ``None`` for the spellings of "no DOI" and for values that are not DOIs."""
    if text.strip().lower() in _MISSING_DOI:
        return None
    return try_normalize(text)


def parse_pmid(text: str) -> str | None:
    """PubMed id as digits without leading zeros; ``0`` and blank mean none."""
    text = text.strip()
    if not text.isdigit() or int(text) == 0:
        return None
    return str(int(text))


def _blank_to_none(text: str | None) -> str | None:
    text = (text or "").strip()
    return text or None


def _record_id(text: str) -> str:
    text = text.strip()
    if not text.isdigit() or int(text) == 0:
        raise RowError(f"bad Record ID {text!r}")
    return str(int(text))


def _build_row(line: int, cells: dict[str, str]) -> RWRow:
    nature = " ".join(cells.get("RetractionNature", "").split())
    if not nature:
        raise RowError("RetractionNature is empty")
    record_id = _record_id(cells.get("Record ID", ""))
    notice_date = _date_cell(cells, "RetractionDate")
    original_date = _date_cell(cells, "OriginalPaperDate")
    reasons = parse_list(cells.get("Reason", ""))
    return RWRow(
        line=line,
        record_id=record_id,
        notice_type=notice_type_of(nature, reasons),
        nature=nature,
        title=_blank_to_none(cells.get("Title")),
        journal=_blank_to_none(cells.get("Journal")),
        notice_doi=parse_doi(cells.get("RetractionDOI", "")),
        notice_pmid=parse_pmid(cells.get("RetractionPubMedID", "")),
        notice_date=notice_date,
        doi=parse_doi(cells.get("OriginalPaperDOI", "")),
        pmid=parse_pmid(cells.get("OriginalPaperPubMedID", "")),
        original_date=original_date,
        reasons=reasons,
        authors=parse_list(cells.get("Author", "")),
    )


def _date_cell(cells: dict[str, str], name: str) -> dt.date | None:
    try:
        return parse_date(cells.get(name, ""))
    except RowError as exc:
        raise RowError(f"{name}: {exc}") from None


def notice_type_of(nature: str, reasons: list[str]) -> str:
    """The notice type a row stands for, read with its Reason as Retraction Watch records it.

    Retract-and-replace is recorded as nature ``Reinstatement`` (or ``Correction``) with the reason
    "Retract and Replace": the cited version was retracted and replaced, not reinstated. A
    withdrawal is often recorded as nature ``Retraction`` with the reason "Withdrawal".
    """
    kind = normalize_type(nature)
    lowered = [r.lower() for r in reasons]
    if kind in ("reinstatement", "correction") and "retract and replace" in lowered:
        return "retract_and_replace"
    if kind == "retraction" and any(r.startswith("withdrawal") for r in lowered):
        return "withdrawal"
    return kind


def _columns(path: Path, header: list[str]) -> list[str]:
    """The named columns of the header; the trailing comma of current exports adds an empty one."""
    names = [name.strip() for name in header]
    while names and not names[-1]:
        names.pop()
    missing = [col for col in REQUIRED_COLUMNS if col not in names]
    if missing:
        raise CSVFormatError(
            f"{path}: line 1: not a Retraction Watch CSV (header lacks {', '.join(missing)})"
        )
    return names


def iter_rows(path: Path) -> Iterator[RowResult]:
    """Stream the records of a Retraction Watch CSV file.

    Raises :class:`CSVFormatError` (naming the file and line) when the file cannot be read at all:
    not UTF-8, no Retraction Watch header, or broken CSV quoting. Per-row problems are yielded.
    """
    path = Path(path)
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        start = 1
        try:
            header = next(reader, None)
            if header is None:
                raise CSVFormatError(f"{path}: the file is empty")
            names = _columns(path, header)
            start = reader.line_num + 1
            for row in reader:
                line, start = start, reader.line_num + 1
                if not any(cell.strip() for cell in row):
                    continue
                yield _row_or_problem(path, line, names, row)
        except UnicodeDecodeError:
            raise CSVFormatError(f"{path}: line {start}: not UTF-8 text") from None
        except csv.Error as exc:
            raise CSVFormatError(f"{path}: line {start}: {exc}") from None


def _row_or_problem(path: Path, line: int, names: list[str], row: list[str]) -> RowResult:
    where = Location(file=str(path), line=line)
    # A row may carry the trailing empty field that the 21-field header announces.
    if len(row) != len(names) and not (len(row) == len(names) + 1 and not row[-1].strip()):
        return Problem(
            message=f"expected {len(names)} fields, found {len(row)}; row skipped",
            location=where,
        )
    try:
        return _build_row(line, dict(zip(names, row, strict=False)))
    except RowError as exc:
        return Problem(message=f"{exc}; row skipped", location=where)
