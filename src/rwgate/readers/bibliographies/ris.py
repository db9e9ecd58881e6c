"""RIS bibliographies (Zotero, EndNote, Mendeley and publishers' exports) -> references.

pandoc itself reads the file (``pandoc -f ris -t csljson``), so the keys and DOIs judged are those
its citeproc prints (a record's key is its ``ID``, else pandoc's ``Wakefield_Murch_1998``). pandoc
keeps no PubMed id, so those are read beside it from each record's own tags, in file order (pandoc
keeps the order): ``AN`` of a PubMed record (``DB``), or ``PMID: N`` in ``N1``, ``C1`` or ``C2``
(EndNote, Scopus). A record's line is that of its ``TY`` tag.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from rwgate.contract.models import BibResult, Location, Problem
from rwgate.readers import ReaderError
from rwgate.readers.bibliographies.csl import PMID_IN_TEXT, references_from_csl_items

_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")
_DIGITS = re.compile(r"^\d{1,10}$")


@dataclass
class _Record:
    line: int
    tags: dict[str, list[str]] = field(default_factory=dict)

    def first(self, tag: str) -> str:
        return (self.tags.get(tag) or [""])[0].strip()

    def pmid(self) -> str | None:
        accession = self.first("AN")
        if self.first("DB").lower() == "pubmed" and _DIGITS.match(accession):
            return accession.lstrip("0") or None
        for tag in ("N1", "C1", "C2"):
            for value in self.tags.get(tag, []):
                found = PMID_IN_TEXT.search(value)
                if found:
                    return found.group(1).lstrip("0") or None
        return None


def _scan(text: str) -> list[_Record]:
    """The records of a RIS file, each with its tags and the line of its ``TY``."""
    records: list[_Record] = []
    current: _Record | None = None
    last: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _TAG.match(line.rstrip())
        if match is None:
            if current is not None and last is not None and line.strip():
                current.tags[last][-1] += " " + line.strip()  # a continuation line
            continue
        tag, value = match.group(1), match.group(2) or ""
        if tag == "TY":
            current = _Record(line=number)
            records.append(current)
        elif tag == "ER":
            current, last = None, None
            continue
        if current is not None:
            current.tags.setdefault(tag, []).append(value)
            last = tag
    return records


def _pandoc_items(text: str, file: str) -> list[dict[str, object]]:
    from rwgate.readers.pandoc_exe import RIS_READER, PandocError, pandoc_path, run_bounded

    try:
        exe = pandoc_path(RIS_READER, "pandoc's RIS reader")
        args = ["--sandbox", "--from=ris", "--to=csljson"]
        done = run_bounded(args, file, text.encode("utf-8"), exe)
    except PandocError as exc:
        raise ReaderError(f"{file}: pandoc could not read it as RIS ({exc})") from None
    if done.returncode != 0:
        message = " ".join(done.stderr.decode("utf-8", "replace").split())[:200]
        raise ReaderError(f"{file}: not a RIS bibliography pandoc can read: {message}")
    try:
        items = json.loads(done.stdout)
    except (ValueError, RecursionError):
        raise ReaderError(f"{file}: pandoc's reading of it is not CSL JSON") from None
    if not isinstance(items, list):
        raise ReaderError(f"{file}: pandoc's reading of it is not a list of CSL items")
    return items


def parse_ris(text: str, file: str) -> BibResult:
    """RIS given as text: pandoc's items, with PubMed ids and line numbers from the records."""
    records = _scan(text)
    items = _pandoc_items(text, file)
    problems: list[Problem] = []
    if len(records) != len(items):
        problems.append(
            Problem(
                message=f"{len(records)} RIS records but pandoc read {len(items)};"
                " line numbers and PubMed ids are left out",
                location=Location(file=file),
            )
        )
        records = []
    lines: dict[str, int] = {}
    for item, record in zip(items, records, strict=False):
        if isinstance(item, dict):
            if "PMID" not in item and (pmid := record.pmid()):
                item["PMID"] = pmid
            lines.setdefault(str(item.get("id")), record.line)
    result = references_from_csl_items(items, file, lines)
    result.problems[:0] = problems
    return result
