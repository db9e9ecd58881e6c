"""BibTeX / BibLaTeX files -> references, read as BibTeX reads them (:mod:`.bibscan`), so the
entries judged are the entries the PDF prints; a broken entry costs that entry (or the rest of
it), never the file. A DOI has its TeX escapes undone as the styles print it, a title is decoded
to Unicode (:mod:`.texvalue`).
"""

from __future__ import annotations

import re
from pathlib import Path

from rwgate.contract import doi as doimod
from rwgate.contract.models import BibResult, Location, Problem, Reference
from rwgate.readers import read_with
from rwgate.readers.bibliographies.bibscan import BibEntry, BibScan, scan
from rwgate.readers.bibliographies.csl import FIRST_YEAR, PMID, PMID_IN_TEXT
from rwgate.readers.bibliographies.texvalue import doi_readings, has_control_word
from rwgate.readers.bibliographies.texvalue import identifier as _identifier
from rwgate.readers.bibliographies.texvalue import text as _text

# biblatex's (and BibTeX's) non-work entries: they hold macros or shared fields, nobody cites them.
_NOT_WORKS = frozenset({"xdata"})
_TEXT_DOI_FIELDS = ("note", "howpublished", "addendum")
_NAME_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_NAME_COMMA = re.compile(r",")
_NAME_SPACE = re.compile(r"[\s~]+")
_NOT_PEOPLE = frozenset({"others", "et al.", "et al"})


def read_bib_stream(path: Path, macros: dict[str, str]) -> tuple[BibResult, dict[str, str]]:
    """Read a .bib file as the next of one ``\\bibdata`` stream: it starts from the ``@string``
    table the earlier files left (``macros``); the table after it is returned with the result."""
    after: dict[str, str] = {}

    def parse(text: str, file: str) -> BibResult:
        scanned = scan(text, macros)
        after.update(scanned.macros)
        return _result(scanned, file)

    return read_with(path, parse), after


def parse_bib(text: str, file: str) -> BibResult:
    """References in BibTeX source ``text``; ``file`` names it in locations and problems."""
    return _result(scan(text), file)


EMPTY_KEY = "(no key at "


def _result(scanned: BibScan, file: str) -> BibResult:
    result = BibResult(
        problems=[_problem(file, line, message, sev) for line, message, sev in scanned.problems]
    )
    for entry in scanned.entries:
        if entry.type in _NOT_WORKS:
            continue
        if not entry.key:
            # BibTeX prints it under \nocite{*}: it is judged, under a key that says where it is.
            name = f"{EMPTY_KEY}{Path(file).name}:{entry.line})"
            message = f"@{entry.type} entry has no key; judged as {name!r}"
            result.problems.append(_problem(file, entry.line, message, "warning"))
            entry.key = name
        result.references.append(_reference(entry, file))
    return result


def _problem(file: str, line: int, message: str, severity: str) -> Problem:
    return Problem(
        message=message,
        location=Location(file=file, line=line),
        severity="error" if severity == "error" else "warning",
    )


def _reference(entry: BibEntry, file: str) -> Reference:
    fields = entry.fields
    doi, raw_doi, origin = _find_doi(fields)
    where = Location(file=file, line=entry.line)
    if origin and origin in entry.inherited:
        origin = f"{origin} (from {entry.inherited[origin]})"
    readings = [
        Reference(key=entry.key, doi=other, doi_origin="doi", location=where)
        for other in _other_dois(fields, doi)
    ]
    if entry.other is not None:  # the other tool's reading: judged too, the more severe decides
        other, other_raw = _find_doi(entry.other)[:2]
        readings.append(
            Reference(
                key=entry.key,
                doi=other,
                raw_doi=other_raw,
                pmid=_find_pmid(entry.other),
                title=_text(entry.other.get("title")),
                year=_find_year(entry.other),
                location=where,
            )
        )
    arxiv, url = _links(fields, doi)
    return Reference(
        key=entry.key,
        doi=doi,
        raw_doi=raw_doi,
        doi_origin=origin,
        pmid=_find_pmid(fields),
        title=_text(fields.get("title")),
        journal=_text(
            fields.get("journal") or fields.get("journaltitle") or fields.get("booktitle")
        ),
        year=_find_year(fields),
        location=where,
        authors=family_names(fields.get("author") or fields.get("editor") or ""),
        conflict=entry.conflict,
        readings=readings,
        arxiv_id=arxiv,
        url=url,
    )


def _links(fields: dict[str, str], doi: str | None) -> tuple[str | None, str | None]:
    """Where else a DOI-less entry names its work (:func:`rwgate.identify.ids.read_ids` reads
    them, for check and verify alike): an arXiv ``eprint``, and the URL as written."""
    if doi is not None:
        return None, None
    kind = (fields.get("archiveprefix") or fields.get("eprinttype") or "").strip().lower()
    arxiv = _identifier(fields.get("eprint", "")) if kind == "arxiv" else ""
    return arxiv or None, _identifier(fields.get("url", "")) or None


def family_names(names: str) -> list[str]:
    """Family names of a BibTeX name list, in order, decoded from LaTeX.

    ``and`` separates people only outside braces (``{Barnes and Noble}`` is one), ``others`` is
    not a person, and both of BibTeX's forms are read: ``von Last, Jr, First`` and
    ``First von Last`` (the family starts at the first lower-case word: ``van der Berg``).
    """
    people = [
        n for n in _split_outside_braces(names, _NAME_AND) if n and n.lower() not in _NOT_PEOPLE
    ]
    return [family for family in map(_text, map(_family_part, people)) if family]


def _family_part(name: str) -> str:
    parts = _split_outside_braces(name, _NAME_COMMA)
    if len(parts) > 1:
        return parts[0]
    words = [w for w in _split_outside_braces(name, _NAME_SPACE) if w]
    von = (i for i, word in enumerate(words[:-1]) if _starts_lower(word))
    return " ".join(words[next(von, len(words) - 1) :])


def _starts_lower(word: str) -> bool:
    """BibTeX's "von" test: a braced group like ``{van}`` counts as upper case, ``{\\'e}`` by
    its letter."""
    if word.startswith("{") and not word.startswith("{\\"):
        return False
    letters = [c for c in (_text(word) or "") if c.isalpha()]
    return bool(letters) and letters[0].islower()


def _split_outside_braces(text: str, separator: re.Pattern[str]) -> list[str]:
    """``text`` split where ``separator`` matches outside ``{...}`` groups, parts stripped."""
    masked, depth = [], 0
    for i, char in enumerate(text):
        escaped = i > 0 and text[i - 1] == "\\"
        if char == "{" and not escaped:
            depth += 1
        inside = depth > 0
        if char == "}" and not escaped:
            depth = max(depth - 1, 0)
        masked.append("x" if inside else char)
    parts, start = [], 0
    for match in separator.finditer("".join(masked)):
        parts.append(text[start : match.start()].strip())
        start = match.end()
    parts.append(text[start:].strip())
    return parts


def _other_dois(fields: dict[str, str], doi: str | None) -> list[str]:
    """The other DOIs a ``doi`` field may print (:func:`doi_readings`): ``S0140\\-6736`` is
    ``S0140-6736`` to the author and ``S01406736`` to TeX; each is judged, the worst decides."""
    if doi is None or ("\\" not in fields.get("doi", "") and "~" not in fields.get("doi", "")):
        return []
    found = (
        doimod.try_normalize(r) for r in doi_readings(fields["doi"]) if not has_control_word(r)
    )
    return [d for d in dict.fromkeys(found) if d and d != doi]


def _find_doi(fields: dict[str, str]) -> tuple[str | None, str | None, str | None]:
    """(canonical DOI, DOI as written if malformed, field it came from).

    A malformed ``doi`` field is final: falling through to ``url`` would hide the user's typo
    behind a guess, and the core reports it as ``invalid_doi`` instead.
    """
    readings = doi_readings(fields.get("doi", ""))
    if readings[0]:  # as the styles print it: TeX escapes undone, ``~`` a space (or a tilde)
        for written in readings:
            found = None if has_control_word(written) else doimod.try_normalize(written)
            if found:
                return found, None, "doi"
        return None, readings[-1], "doi"
    found = doimod.find_in_text(_identifier(fields.get("url", "")))
    if found:
        return found, None, "url"
    eprint = _identifier(fields.get("eprint", ""))
    if eprint:
        kind = (fields.get("eprinttype") or fields.get("archiveprefix") or "").strip().lower()
        found = doimod.try_normalize(eprint)
        if found:
            return found, None, "eprint"
        if kind == "doi":
            return None, eprint, "eprint"
    for name in _TEXT_DOI_FIELDS:
        found = doimod.find_in_text(_identifier(fields.get(name, "")))
        if found:
            return found, None, name
    return None, None, None


def _find_pmid(fields: dict[str, str]) -> str | None:
    """The PubMed id: a ``pmid`` field, a PubMed ``eprint``, or ``PMID: N`` in a note (Zotero
    writes it in ``extra``/``note``); digits without leading zeros, as the snapshot keys them."""
    candidates = [fields.get("pmid", "")]
    kind = (fields.get("eprinttype") or fields.get("archiveprefix") or "").strip().lower()
    if kind in {"pubmed", "pmid"}:
        candidates.append(fields.get("eprint", ""))
    for candidate in candidates:
        match = PMID.match(_identifier(candidate))
        if match and int(match.group(1)):
            return str(int(match.group(1)))
    for name in ("note", "extra", "annote", "annotation", "addendum"):
        match = PMID_IN_TEXT.search(fields.get(name, ""))
        if match and int(match.group(1)):
            return str(int(match.group(1)))
    return None


def _find_year(fields: dict[str, str]) -> int | None:
    for name in ("year", "date"):
        match = FIRST_YEAR.search(_identifier(fields.get(name, "")))
        if match:
            return int(match.group(1))
    return None
