"""BibTeX for real works: Crossref's own rendering when it has one, else built from the record.

Rules every entry follows, whichever way it was made:

- the key is ``{lastname}{year}{word}`` (first author's family name, year, first significant
  title word; ASCII letters), each part left out when the record lacks it, with ``a``, ``b``, ...
  appended when two entries of one export would collide;
- every value is plain text escaped by the one LaTeX escaper (:mod:`rwgate.render.latex`, which
  the ``.bbl`` annotation uses too): braces come out balanced, so a registry title holding ``}``,
  ``\\input{x}``, ``%`` or ``#`` cannot end the field early or run anything; Crossref's own BibTeX
  rendering is first read back to plain text (pylatexenc), then escaped the same way;
- in the title, every capitalised word and acronym (except a plain capitalised first word) is
  wrapped in braces so that BibTeX styles do not lower-case ``DNA`` or ``Nature``;
- no field is ever guessed: a field is written only when the registry record has it;
- a retracted (withdrawn, removed, ...) work carries its notice in ``note``, in the same words the
  build annotation uses, so the warning travels with the entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rwgate.contract.models import Citation
from rwgate.frontends.verify.integrity import SERIOUS
from rwgate.frontends.verify.models import Work
from rwgate.identify.same import fold, normalize_title
from rwgate.render.annotate import annotate
from rwgate.render.latex import escape_text as escape  # the one LaTeX escaper (module doc)
from rwgate.render.safe import one_line

_TYPES = {
    "journal-article": "article",
    "article": "article",
    "proceedings-article": "inproceedings",
    "book": "book",
    "monograph": "book",
    "edited-book": "book",
    "book-chapter": "incollection",
    "dissertation": "phdthesis",
    "report": "techreport",
}
_VENUE_FIELD = {"article": "journal", "inproceedings": "booktitle", "incollection": "booktitle"}
_STOP = re.compile(r"a|an|the|on|of|in|for|and|to|with|from|by|at|as|is|are|its|into|via|towards?")
_WORD = re.compile(r"\S+")
_MONTH = re.compile(r"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec")  # BibTeX's macros
_ENTRY = re.compile(r"^\s*@\s*(\w+)\s*\{\s*([^,\s]*)\s*,", re.DOTALL)


def _from_latex(value: str) -> str:
    """A value of Crossref's BibTeX rendering as plain text (``{\'e}`` -> ``é``), to be
    escaped again by :func:`escape`: its markup is not trusted."""
    from pylatexenc.latex2text import LatexNodes2Text

    try:
        return str(LatexNodes2Text(math_mode="verbatim").latex_to_text(value))
    except Exception:  # pylatexenc gives up on some malformed input: keep the characters
        return value


def _needs_braces(word: str, first: bool) -> bool:
    letters = [c for c in word if c.isalpha()]
    if not letters or not any(c.isupper() for c in letters):
        return False
    # "Molecular" opening the title: styles keep a first word's capital anyway.
    return not (first and letters[0].isupper() and not any(c.isupper() for c in letters[1:]))


def protect_title(title: str) -> str:
    """Plain ``Molecular Structure of DNA`` -> ``Molecular {Structure} of {DNA}``, escaped."""
    parts = []
    for index, match in enumerate(_WORD.finditer(title)):
        word = match.group(0)
        core = word.rstrip(":;,.?!")
        tail = word[len(core) :]
        if _needs_braces(core, index == 0):
            parts.append(f"{{{escape(core)}}}{escape(tail)}")
        else:
            parts.append(escape(word))
    return " ".join(parts)


def make_key(work: Work) -> str:
    """``{lastname}{year}{word}``; parts the record lacks are left out, never invented."""
    family = fold(work.authors[0].family) if work.authors else ""
    last = "".join(c for c in family.split(" ")[-1] if c.isascii() and c.isalpha())
    words = [w for w in normalize_title(work.title).split() if not _STOP.fullmatch(w)]
    word = next(("".join(c for c in w if c.isascii() and c.isalnum()) for w in words), "")
    key = f"{last}{work.year or ''}{word}"
    if not key and work.doi:
        key = "doi" + re.sub(r"[^a-z0-9]+", "", work.doi)
    return key or "ref"


def unique_keys(keys: Iterable[str]) -> list[str]:
    """Keys made unique within one export by ``a``, ``b``, ... suffixes."""
    seen: dict[str, int] = {}
    out = []
    for key in keys:
        count = seen.get(key, 0)
        seen[key] = count + 1
        out.append(key if count == 0 else f"{key}{chr(ord('a') + count - 1)}")
    return out


def _verbatim(value: str) -> str:
    """A DOI or URL as BibTeX keeps it verbatim (styles pass it to ``\\url``): only what could
    end the field or break the entry is dropped (braces, controls)."""
    return one_line(value).replace("{", "").replace("}", "")


def _value(name: str, value: str) -> str:
    """Braced, except BibTeX's month macros (``month = feb``), which braces would turn to text."""
    return value if name == "month" and _MONTH.fullmatch(value.lower()) else f"{{{value}}}"


def render(entry_type: str, key: str, fields: list[tuple[str, str]]) -> str:
    body = ",\n".join(f"  {name:<9} = {_value(name, value)}" for name, value in fields)
    return f"@{entry_type}{{{key},\n{body}\n}}\n"


def _with_notice(
    fields: list[tuple[str, str]], integrity: Citation | None
) -> list[tuple[str, str]]:
    """The notice of a retracted work in ``note`` (after a note the entry has)."""
    if integrity is None or integrity.status not in SERIOUS:
        return fields
    text = escape(annotate(integrity).text)
    for i, (name, value) in enumerate(fields):
        if name == "note":
            fields[i] = (name, f"{value}. {text}")
            return fields
    return [*fields, ("note", text)]


def from_work(work: Work, key: str | None = None, integrity: Citation | None = None) -> str:
    """An entry built from registry metadata alone."""
    entry_type = "misc" if work.arxiv_id else _TYPES.get(work.type or "", "misc")
    fields: list[tuple[str, str]] = []
    if work.authors:
        fields.append(("author", escape(" and ".join(a.bibtex() for a in work.authors))))
    if work.title:
        fields.append(("title", protect_title(work.title)))
    if work.venue and entry_type in _VENUE_FIELD:
        fields.append((_VENUE_FIELD[entry_type], escape(work.venue)))
    if work.year:
        fields.append(("year", str(work.year)))
    for name, value in (("volume", work.volume), ("number", work.issue)):
        if value:
            fields.append((name, escape(value)))
    if work.pages:
        fields.append(("pages", escape(work.pages.replace("-", "--").replace("----", "--"))))
    if work.publisher and entry_type not in ("article",):
        fields.append(("publisher", escape(work.publisher)))
    if work.doi:
        fields.append(("doi", _verbatim(work.doi)))
    if work.arxiv_id:
        fields += [("eprint", work.arxiv_id), ("archiveprefix", "arXiv")]
    return render(entry_type, key or make_key(work), _with_notice(fields, integrity))


def _strip_value(raw: str) -> str:
    value = raw.strip()
    if len(value) >= 2 and value[0] + value[-1] in ("{}", '""'):
        return value[1:-1]
    return value


def parse_entry(text: str) -> tuple[str, list[tuple[str, str]]] | None:
    """(type, fields in order) of the first entry in ``text``; None when there is none."""
    from bibtexparser.model import Entry
    from bibtexparser.splitter import Splitter

    if not _ENTRY.match(text):
        return None
    try:
        blocks = Splitter(text.strip()).split().blocks
    except Exception:  # a registry answer we cannot read is treated as no answer
        return None
    for block in blocks:
        if isinstance(block, Entry):
            fields = [(f.key.strip().lower(), _strip_value(str(f.value))) for f in block.fields]
            return block.entry_type.lower(), fields
    return None


def from_registry_text(text: str, key: str, integrity: Citation | None = None) -> str | None:
    """Crossref's content-negotiated entry, re-keyed, title protected, notice added."""
    parsed = parse_entry(text)
    if parsed is None:
        return None
    entry_type, raw_fields = parsed
    fields: list[tuple[str, str]] = []
    for name, value in raw_fields:
        value = " ".join(value.split())
        if name == "title":
            value = protect_title(_from_latex(value))
        elif name in ("url", "doi"):
            value = _verbatim(value)
        elif name != "month":
            value = escape(_from_latex(value))
        fields.append((name, value))
    return render(entry_type, key, _with_notice(fields, integrity))
