"""``get_bibtex``: BibTeX for a DOI, several DOIs, or a title, from real registry records only.

Crossref's content negotiation (``/works/{doi}/transform/application/x-bibtex``) is asked first:
it is the publisher's own deposit. When Crossref has no rendering (a DataCite DOI such as an arXiv
preprint, or Crossref is down), the entry is built from the Crossref or OpenAlex record. A title
is resolved by verification: only a ``verified`` match gives an entry; anything less is reported
under ``not_found`` with the closest candidate named, never exported. What could not be looked up
because a registry failed is ``unverified``, never ``not_found``: an agent told to drop
``not_found`` references must not drop a real one because the network was down.
"""

from __future__ import annotations

from collections.abc import Sequence

from rwgate.contract import doi as doimod
from rwgate.contract.models import Reference
from rwgate.frontends.verify import bibtex_export, integrity
from rwgate.frontends.verify.models import BibtexEntry, BibtexResult, Work
from rwgate.frontends.verify.verify import match_one, opened
from rwgate.identify.crossref_search import SourceUnavailable
from rwgate.identify.ids import arxiv_doi, arxiv_id
from rwgate.identify.lookup import Registries, ask, doi_tasks
from rwgate.settings.config import Settings


def _heard(out: BibtexResult, answered: Sequence[str], failed: dict[str, str]) -> None:
    """Which sources answered (each once), and the first reason each other one failed."""
    for name in answered:
        if name not in out.sources_answered:
            out.sources_answered.append(name)
    for name, reason in failed.items():
        out.sources_failed.setdefault(name, reason)


def _resolve_title(regs: Registries, title: str, out: BibtexResult) -> str | None:
    result = match_one(regs, Reference(key="", title=title))
    _heard(out, result.sources_answered, result.sources_failed)
    if result.verdict == "verified" and result.matched and result.matched.doi:
        return result.matched.doi
    near = result.matched or result.closest
    hint = (
        f" (closest: {near.title!r}, doi:{near.doi}, score {result.confidence:.2f})" if near else ""
    )
    (out.unverified if result.verdict == "unverified" else out.not_found).append(title)
    out.warnings.append(f"title {title!r}: {result.verdict}{hint}; no entry made")
    return None


def _wanted(doi: str | None, dois: Sequence[str] | None, out: BibtexResult) -> list[str]:
    wanted: list[str] = []
    for raw in [*([doi] if doi else []), *(dois or [])]:
        found = doimod.try_normalize(raw)
        arxiv = None if found else arxiv_id(raw)
        if found is None and arxiv is None:
            out.not_found.append(raw)
            out.warnings.append(f"{raw!r} is neither a DOI nor an arXiv id")
            continue
        wanted.append(found or arxiv_doi(arxiv))  # type: ignore[arg-type]
    return list(dict.fromkeys(wanted))


def _registry_text(regs: Registries, doi: str, out: BibtexResult) -> str | None:
    if regs.crossref is None:
        return None
    try:
        text = regs.crossref.bibtex(doi)
    except SourceUnavailable as exc:
        _heard(out, [], {"crossref": str(exc)})
        return None
    _heard(out, ["crossref"], {})
    return text


def get_bibtex(
    settings: Settings,
    doi: str | None = None,
    dois: Sequence[str] | None = None,
    title: str | None = None,
) -> BibtexResult:
    """Entries for every DOI (and the verified match of ``title``), in the order given."""
    out = BibtexResult()
    with opened(settings) as (regs, srcs):
        wanted = _wanted(doi, dois, out)
        if title and title.strip():
            found = _resolve_title(regs, title.strip(), out)
            if found:
                wanted = list(dict.fromkeys([*wanted, found]))
        made = _entries(regs, wanted, out)
        citations = integrity.judge([(d, d) for d, _, _ in made], settings, srcs)
    keys = bibtex_export.unique_keys(key for _, key, _ in made)
    for (d, _, source), key, citation in zip(made, keys, citations, strict=True):
        if isinstance(source, Work):
            text = bibtex_export.from_work(source, key, citation)
            entry = BibtexEntry(doi=d, key=key, bibtex=text, origin="metadata", integrity=citation)
        else:
            negotiated = bibtex_export.from_registry_text(source, key, citation)
            assert negotiated is not None  # _entries kept only a rendering it could read
            entry = BibtexEntry(
                doi=d, key=key, bibtex=negotiated, origin="content_negotiation", integrity=citation
            )
        out.entries.append(entry)
    out.sources_failed = {
        k: v for k, v in out.sources_failed.items() if k not in out.sources_answered
    }
    return out


def _entries(
    regs: Registries, wanted: list[str], out: BibtexResult
) -> list[tuple[str, str, str | Work]]:
    """(doi, key, source) per DOI: Crossref's BibTeX text, or the registry record to build from.

    The key always comes from the record (``{lastname}{year}{word}``), so both ways agree.
    """
    made: list[tuple[str, str, str | Work]] = []
    for doi in wanted:
        tasks = doi_tasks(regs, doi)
        answers = ask(tasks, len(tasks))
        _heard(out, answers.answered, answers.failed)
        work = answers.doi_records.get(doi)
        if work is None and answers.failed:
            # A registry that could not be asked might hold it: unknown, never "not found".
            out.unverified.append(doi)
            why = "; ".join(f"{k}: {v}" for k, v in answers.failed.items())
            out.warnings.append(f"{doi}: unverified, a registry could not be asked ({why})")
            continue
        if work is None:
            out.not_found.append(doi)
            continue
        key = bibtex_export.make_key(work)
        text = _registry_text(regs, doi, out)
        usable = text if text and bibtex_export.parse_entry(text) else None
        made.append((doi, key, usable if usable is not None else work))
    return made
