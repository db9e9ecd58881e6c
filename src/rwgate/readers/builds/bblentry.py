"""What one ``.bbl`` entry prints: every DOI in it (in order: each is a work the reader may
follow, and each is judged), and when it prints none its title, year and journal, read from the
formatted text as a reader of the PDF finds them.

BibTeX styles keep no field names: ``plain``, ``alpha``, ``unsrt``, ``plainnat``, ``apalike``...
print ``AUTHORS. \\newblock TITLE. \\newblock JOURNAL, YEAR`` (the title is the second block);
``ieeetr``-like styles quote it (````TITLE,''``, which wins); revtex's ``apsrev`` and several
publishers' name it (``\\bibinfo{title}{...}``), biber has ``\\field{title}{...}``. The year is the
last year-like number after the title (else in the label), the journal the first emphasised text
after it. A heuristic: a wrong title matches no registry work, so the entry stays ``no_doi``
(strict does not pass it), never ``clean``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rwgate.contract.doi import find_in_text, try_normalize
from rwgate.readers.bibliographies.texvalue import printed, text
from rwgate.readers.builds.bblscan import balanced, group

_VERB_DOI = re.compile(r"\\verb\{doi\}\s*\n\s*\\verb\s+(\S+)")
_FIELD_DOI = re.compile(r"\\field\{doi\}\{([^{}]*)\}")
_DOI_START = re.compile(r"10\.\d{4,9}")
_NOTE = re.compile(r"\\newblock \\textbf\{[^\n]*\}% rwgate")  # rwgate's annotator's note
_NEWBLOCK = re.compile(r"\\newblock(?![A-Za-z@])")
_QUOTED = re.compile(r"``(.+?)''", re.S)
_YEAR = re.compile(r"(?<![\d.:/-])(1[5-9]\d\d|20\d\d)(?![\d])")
_EMPH = re.compile(r"\{\\(?:em|it|sl)\s+|\\(?:emph|textit|textsl)\s*\{")
_END_PUNCT = " \t\n.,;:"


@dataclass
class Printed:
    dois: list[str] = field(default_factory=list)
    raw_doi: str | None = None  # a biblatex ``doi`` field that is no DOI (``invalid_doi``)
    title: str | None = None
    year: int | None = None
    journal: str | None = None


def without_notes(block: str) -> str:
    """The entry as its style printed it: rwgate's own note lines taken out."""
    return _NOTE.sub("", block) if "% rwgate" in block else block


def all_dois(flat: str) -> list[str]:
    """Every distinct DOI in running text, in order (a ``\\href`` names one twice: kept once)."""
    found = (find_in_text(flat[start.start() :]) for start in _DOI_START.finditer(flat))
    return list(dict.fromkeys(doi for doi in found if doi))


def read_entry(block: str, biblatex: bool, label: str = "") -> Printed:
    """What the entry ``block`` prints (the text after its key); ``label`` is the
    ``\\bibitem[label]`` (a natbib label holds the year)."""
    block = without_notes(block)
    if biblatex:
        return _biblatex(block)
    out = Printed(dois=all_dois(_flat(block)))
    if not out.dois:
        _title_of(block, label, out)
    return out


def _flat(block: str) -> str:
    """The entry's text as TeX prints it, for its DOIs (``\\_`` prints ``_``)."""
    return printed(block.replace("\\_", "_").replace("{\\textunderscore}", "_"))


def _biblatex(block: str) -> Printed:
    """biber's fields: the ``doi`` field first, then any other DOI in the entry (its ``url``,
    ``eprint``, a note)."""
    out = Printed()
    found = _VERB_DOI.search(block) or _FIELD_DOI.search(block)
    if found:
        doi = try_normalize(found.group(1))
        if doi:
            out.dois.append(doi)
        else:
            out.raw_doi = found.group(1)
    out.dois += [doi for doi in all_dois(_flat(block)) if doi not in out.dois]
    if not out.dois and out.raw_doi is None:
        out.title = _decoded(_field(block, "title"))
        year = _field(block, "year") or ""
        out.year = int(year) if year.isdigit() else None
        out.journal = _decoded(_field(block, "journaltitle") or _field(block, "journal"))
    return out


def _field(block: str, name: str) -> str | None:
    """The value of biber's ``\\field{name}{...}`` (braces nest)."""
    at = block.find(f"\\field{{{name}}}{{")
    found = group(block, at + len(name) + len("\\field{}")) if at >= 0 else None
    return found[0] if found else None


def _bibinfo(block: str, name: str) -> tuple[str, int] | None:
    """The value of ``\\bibinfo{name}{...}`` (revtex, natbib-based publisher styles) and where
    it ends."""
    match = re.search(r"\\bibinfo\s*\{" + name + r"\}\s*\{", block)
    return group(block, match.end() - 1) if match else None


def _title_of(block: str, label: str, out: Printed) -> None:
    """The title, year and journal of a formatted entry (module docstring)."""
    named = _bibinfo(block, "title")
    if named is not None:
        out.title, rest = _decoded(named[0]), block[named[1] :]
        journal = _bibinfo(block, "journal")
        out.journal = _decoded(journal[0]) if journal else None
        year = _bibinfo(block, "year")
        out.year = _year(year[0] if year else rest)
        return
    quoted = _QUOTED.search(block)
    blocks = _NEWBLOCK.split(block)
    if quoted is not None:
        raw, rest = quoted.group(1), block[quoted.end() :]
    elif len(blocks) >= 2:
        raw, rest = blocks[1], "".join(blocks[2:])
    else:
        return
    out.title = _decoded(raw)
    out.year = _year(rest) or _year(label)
    out.journal = _emphasised(rest)


def _year(fragment: str) -> int | None:
    years = _YEAR.findall(fragment)
    return int(years[-1]) if years else None


def _emphasised(fragment: str) -> str | None:
    """The first emphasised text (``{\\em X}``, ``\\emph{X}``): where styles print the journal."""
    match = _EMPH.search(fragment)
    if match is None:
        return None
    start = match.end() - 1 if match.group(0).endswith("{") else match.start()
    end = balanced(fragment, start, "{", "}")
    if end < 0:
        return None
    inner = fragment[start + 1 : end - 1]
    if not match.group(0).endswith("{"):
        inner = inner[match.end() - match.start() - 1 :]
    return _decoded(inner.replace("\\/", ""))


def _decoded(raw: str | None) -> str | None:
    """A printed fragment as text: TeX decoded, outer quotes and the style's final stop gone."""
    if raw is None:
        return None
    decoded = text(raw.replace("\\newblock", " "))
    if decoded is None:
        return None
    decoded = decoded.strip(_END_PUNCT + "\"'`\u201c\u201d").strip()
    return decoded or None
