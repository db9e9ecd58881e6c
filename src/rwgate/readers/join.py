"""From a manuscript's cited keys and its bibliographies to the references that are judged.

Only cited works are judged; a cited key that no bibliography holds, in any spelling filters give
it (:mod:`rwgate.readers.keys`), becomes a ``missing`` reference (``missing_entry``).
"""

from __future__ import annotations

from pathlib import Path

from rwgate.contract.doi import find_in_text, try_normalize
from rwgate.contract.models import BibResult, CitedDocument, Problem, Reference
from rwgate.errors import UnknownFormat
from rwgate.readers import ReaderError, read_with
from rwgate.readers.bibliographies.bibscan import fold
from rwgate.readers.bibliographies.csl import references_from_csl_items
from rwgate.readers.bibliographies.parsed import load_remembered, load_stream
from rwgate.readers.builds.bibfind import unreadable
from rwgate.readers.keys import identifier_key, is_cross_reference, resolve_key

_LATEX = frozenset({".tex", ".ltx", ".aux", ".bcf"})


def _one_stream(doc: CitedDocument) -> bool:
    """Whether ``doc``'s .bib files are one stream of ``@string``s, as BibTeX reads the files of
    ``\\bibliography{IEEEabrv,refs}``; pandoc reads each file on its own (a macro of another file
    is read as its name)."""
    return doc.bibtex_keys or Path(doc.path).suffix.lower() in _LATEX


def _entries(doc: CitedDocument, cache_dir: Path | None = None) -> BibResult:
    """Every entry of every bibliography of ``doc``, one per key with the key's other definitions
    as its readings; with ``cache_dir``, from the parsed-entry cache (:mod:`.parsed`)."""
    out = BibResult(problems=list(doc.problems))
    seen: dict[str, Reference] = {}  # insertion order: the first definition's place
    results: list[BibResult] = []
    macros: dict[str, str] | None = {} if _one_stream(doc) else None
    for path in doc.bibliographies:
        try:
            if macros is not None and Path(path).suffix.lower() == ".bib":
                result, macros = load_stream(Path(path), cache_dir, macros)
                results.append(result)
            elif Path(path).suffix.lower() in (".tex", ".ltx"):  # its own thebibliography
                from rwgate.readers.builds.bbl import parse_embedded

                results.append(read_with(Path(path), parse_embedded))
            else:
                results.append(load_remembered(Path(path), cache_dir))
        except (ReaderError, UnknownFormat) as exc:  # unreadable: exit 2, the rest still judged
            out.problems.append(unreadable(str(exc)))
    if doc.inline_references:
        results.append(references_from_csl_items(doc.inline_references, doc.path))
    last_wins = not _one_stream(doc)
    for result in results:
        out.problems.extend(result.problems)
        for ref in result.references:
            if ref.key in seen:
                seen[ref.key] = _another_definition(seen[ref.key], ref, last_wins, out.problems)
            else:
                seen[ref.key] = ref
    out.references = list(seen.values())
    return out


def _another_definition(
    known: Reference, ref: Reference, last_wins: bool, problems: list[Problem]
) -> Reference:
    """A key defined again in a later bibliography (or inline): both definitions are judged,
    the most severe decides (DESIGN.md rule 1). The printed one leads: pandoc's citeproc prints
    the last definition (files in the order listed, then inline ``references:``), BibTeX and
    biber the first. Copies: a reference may be shared with the parsed-file cache."""
    printer = "pandoc prints the last" if last_wins else "BibTeX and biber print the first"
    problems.append(
        Problem(
            message=f"duplicate key {ref.key!r} (also at {known.location}); {printer}:"
            " every definition is judged, the most severe decides",
            location=ref.location,
        )
    )
    bare = known.model_copy(update={"readings": []})
    if last_wins:
        return ref.model_copy(update={"readings": [*ref.readings, bare, *known.readings]})
    return known.model_copy(update={"readings": [*known.readings, ref, *ref.readings]})


def _bibtex_match(
    key: str, by_key: dict[str, Reference], doc: CitedDocument, problems: list[Problem]
) -> str | None:
    """The entry BibTeX uses for ``key``: the one whose key differs only in ASCII case (BibTeX
    compares bytes, folding A-Z only; it warns and uses it, so the PDF prints that work); None
    when there is none, or several."""
    folded = [k for k in by_key if fold(k) == fold(key)]
    if len(folded) != 1:
        return None
    problems.append(
        Problem(
            message=f"cited as {key!r}, the entry is {folded[0]!r}: BibTeX matches keys "
            "case-insensitively and prints it (biber and pandoc would not)",
            location=doc.key_locations.get(key),
        )
    )
    return folded[0]


def _by_identifier(key: str, doc: CitedDocument) -> Reference | None:
    """A key that carries its identifier (``doi:…``, ``pmid:…``, ``arxiv:…``, ``url:…``) in no
    bibliography: the work it names. One rwgate cannot look up (an ISBN, an arXiv id, a URL
    without a DOI) is an entry with no DOI (``no_doi``), never dropped."""
    named = identifier_key(key)
    if named is None:
        return None
    kind, value = named
    where = doc.key_locations.get(key)
    if kind == "pmid":
        digits = value.lstrip("0")
        return Reference(key=key, pmid=digits, location=where) if digits.isdigit() else None
    if kind == "doi":
        found = try_normalize(value)
        return Reference(
            key=key, doi=found, raw_doi=None if found else value, doi_origin="key", location=where
        )
    if kind == "url" and (found := find_in_text(value)):
        return Reference(key=key, doi=found, doi_origin="key", url=value, location=where)
    return Reference(
        key=key,
        arxiv_id=value if kind == "arxiv" else None,
        url=value if kind == "url" else None,
        location=where,
    )


def cited_references(doc: CitedDocument, cache_dir: Path | None = None) -> BibResult:
    """The references ``doc`` cites, in first-citation order (all entries with ``@*``);
    ``cache_dir``: the user's cache folder, where parsed bibliographies are remembered."""
    entries = _entries(doc, cache_dir)
    by_key = {ref.key: ref for ref in entries.references}
    chosen: list[Reference] = []
    taken: set[str] = set()
    for key in dict.fromkeys(doc.keys):
        if key == "*":
            continue
        found = resolve_key(key, by_key)
        if found is None and doc.bibtex_keys:
            found = _bibtex_match(key, by_key, doc, entries.problems)
        if found is None and is_cross_reference(key):
            continue  # @fig-x, @sec:x: a cross-reference to the document itself
        if found is None:
            missing = Reference(key=key, missing=True, location=doc.key_locations.get(key))
            chosen.append(_by_identifier(key, doc) or missing)
        elif found not in taken:  # KEY--1 and KEY--2 (one per section) are one work
            taken.add(found)
            chosen.append(by_key[found])
    if doc.cite_all:
        chosen.extend(ref for ref in entries.references if ref.key not in taken)
    result = BibResult(references=chosen, problems=entries.problems)
    for part in doc.parts:
        _add_part(result, cited_references(part, cache_dir))
    return result


def _add_part(result: BibResult, part: BibResult) -> None:
    """A second bibliography of the same document (multibib's ``Meth.aux``): its works join the
    verdict; one already there (the same entry, cited in both lists) is judged once."""
    known = {(r.key, r.doi, str(r.location)) for r in result.references}
    result.references.extend(
        r for r in part.references if (r.key, r.doi, str(r.location)) not in known
    )
    seen = {str(p) for p in result.problems}
    result.problems.extend(p for p in part.problems if str(p) not in seen)
