"""DESIGN.md rule 2 for LaTeX: what BibTeX or biber printed is what rwgate judged.

rwgate and the bibliography tool both read the ``.bib`` files, and may part (a biber sourcemap
that sets a ``doi``, a ``.bib`` found through ``BIBINPUTS``, a ``crossref`` parent BibTeX adds).
So every entry of the ``.bbl`` the tool wrote is compared with what rwgate judged for its key:
one of the DOIs it prints must be one rwgate judged for the key (its DOI, another reading's, a
notice's; a URL may print the DOI with more after it, as bioRxiv's ``...696095v1``), and an
entry printing no DOI must print the judged title, when both have one (the pandoc front end's
rule). An entry rwgate did not judge stops the build, in one line naming the key and both
readings; a title read apart is a warning under the default policy and stops under strict. A
comparison that cannot be made (no DOI printed, no title read or judged) does not stop it:
styles leave titles or DOIs out, and the entry was judged by its key all the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from rwgate.contract.models import Citation, Reference
from rwgate.readers import decode_bytes
from rwgate.readers.bibliographies.bibtex import EMPTY_KEY
from rwgate.readers.bibliographies.texvalue import text
from rwgate.readers.builds.bbl import Entry, entries
from rwgate.readers.builds.bblentry import read_entry, without_notes
from rwgate.render.safe import term_safe
from rwgate.titles import normalize_title, title_similarity
from rwgate.verdicts.result import CheckResult

_STOPS = frozenset("<>[]{}\"' ")
SAME_TITLE = 0.9
"""How alike a printed and a judged title must be, where neither holds the other."""


def _judged_dois(ref: Reference | None, cited: Citation | None) -> set[str]:
    dois = {r.doi for r in ([ref, *ref.readings] if ref else []) if r.doi}
    if cited is not None:
        dois |= {cited.doi} if cited.doi else set()
        dois |= {n.doi.lower() for n in cited.notices if n.doi}
    return {d.lower() for d in dois}


def _same_doi(doi: str, judged: set[str]) -> bool:
    """A printed DOI is a judged one, or the part of it running text lets a reader find (a
    SICI DOI's ``<`` ends it there: ``10.1002/(sici)...35:4<473::aid-jbm7>3.0.co;2-a``)."""
    return doi in judged or any(
        j.startswith(doi) and j[len(doi) : len(doi) + 1] in _STOPS for j in judged
    )


def _words(raw: str) -> str:
    return f" {normalize_title(raw)} "


def _prints_title(entry: Entry, printed: str, judged: Iterable[str]) -> bool:
    """Whether the entry prints one of the judged titles: its words inside the entry's text (as
    written, or TeX-decoded), or the title read from it close to one."""
    block = without_notes(entry.block)
    written, decoded = _words(block), None  # decoded only when the text as written falls short
    for title in judged:
        wanted = _words(title)
        if wanted.strip() and wanted in written:
            return True
        if decoded is None:
            decoded = _words(text(block) or "")
        if wanted.strip() and wanted in decoded:
            return True
        if (title_similarity(printed, title) or 0.0) >= SAME_TITLE:
            return True
    return False


def _reading(ref: Reference | None) -> str:
    """What rwgate judged for a key, in a few words."""
    if ref is None or ref.missing:
        return "no entry (rwgate found none for this key)"
    said = f"doi:{ref.doi}" if ref.doi else f"'{ref.title}'" if ref.title else "no DOI, no title"
    more = [f"doi:{r.doi}" for r in ref.readings if r.doi]
    where = f" ({ref.location})" if ref.location else ""
    return ", ".join([said, *more]) + where


def _mismatch(
    entry: Entry, ref: Reference | None, cited: Citation | None, note: str | None
) -> tuple[str, bool] | None:
    """Why ``entry`` is not what rwgate judged for its key, or None when it is (or cannot say).
    ``note``: rwgate's own note on the entry (an annotated ``.bbl``), not what the style printed."""
    if note:
        entry = replace(entry, block=entry.block.replace(note, ""))
    printed = read_entry(entry.block, entry.biblatex, entry.label)
    if ref is None or ref.missing:
        shown = ", ".join(f"doi:{d}" for d in printed.dois) or f"'{printed.title or entry.key}'"
        return f"prints {shown}; rwgate judged {_reading(ref)}", False
    judged = _judged_dois(ref, cited)
    if printed.dois and not any(_same_doi(d.lower(), judged) for d in printed.dois):
        return f"prints doi:{', doi:'.join(printed.dois)}; rwgate judged {_reading(ref)}", False
    if printed.dois or not printed.title:
        return None
    titles = [t for t in (r.title for r in (ref, *ref.readings)) if t]
    if titles and not _prints_title(entry, printed.title, titles):
        return f"prints '{printed.title}'; rwgate judged {_reading(ref)}", True
    return None


def unjudged(
    bbl: Path,
    result: CheckResult,
    refs: Mapping[str, Reference],
    bibtex_keys: bool,
    notes: Mapping[str, str] | None = None,
) -> tuple[list[str], list[str]]:
    """The entries of ``bbl`` that rwgate did not judge for their key (``result``, ``refs``):
    the lines that stop the build, and the warnings (a title read apart, unless the policy fails
    what it cannot judge). Keys are matched as the tool matches them (BibTeX: in any case);
    ``notes``: the notes rwgate wrote into ``bbl``, by key."""
    try:  # bytes as BibTeX wrote them: a Latin-1 key is the key rwgate read from the .bib
        data = decode_bytes(bbl.read_bytes())[0]
    except OSError:
        return [], []
    strict = result.policy.action("unverified") == "fail"
    fold = str.casefold if bibtex_keys else str
    by_key = {fold(k): r for k, r in refs.items()}
    cited = {fold(c.key): c for c in result.citations}
    noted = {fold(k): v for k, v in (notes or {}).items()}
    stops: list[str] = []
    warnings: list[str] = []
    keyless = [k for k in by_key if k.startswith(fold(EMPTY_KEY))]
    for entry in entries(data):
        key = fold(entry.key)
        if not key.strip() and keyless:  # BibTeX prints an entry with no key: judged as such
            found = min(
                (_mismatch(entry, by_key[k], cited.get(k), noted.get(k)) for k in keyless),
                key=lambda said: said is not None,
            )
        else:
            found = _mismatch(entry, by_key.get(key), cited.get(key), noted.get(key))
        if found is None:
            continue
        why, by_title = found
        if by_title and not strict:
            warnings.append(term_safe(f"{entry.key}: {bbl.name} {why} (strict stops the build)"))
        else:
            stops.append(
                term_safe(
                    f"{entry.key}: {bbl.name} {why}: a printed entry rwgate did not judge;"
                    " the build stops"
                )
            )
    return stops, warnings
