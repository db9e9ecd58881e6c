"""DESIGN.md rule 2 for pandoc: what citeproc printed is what rwgate judged.

rwgate judges every definition it reads for a key (the worst decides); citeproc prints the one it
picks, with its own reader. So after citeproc has run, every rendered entry
(``Div#ref-KEY.csl-entry``) is read back from the AST (never from a second emulation of citeproc)
and compared with what was judged for KEY (the reference and its ``readings``):

* the entry prints a DOI: one of the printed DOIs must be a judged DOI, else the build stops
  (the printed work was never judged);
* no DOI printed: a judged title (folded by :func:`rwgate.titles.title_key`, since CSL styles
  change case and quotes) in the entry's text verifies it; the title of another cited work
  instead, and none of the judged ones, stops the build (it positively names another work); in
  a style that prints titles (another entry of the document shows its judged title), an entry
  without its judged title prints some other work: a stop under a policy that fails what it
  cannot judge (strict), a warning otherwise (a title folded otherwise than printed must not
  stop a default build);
* neither: the style prints nothing rwgate can compare (APS prints no article titles or DOIs);
  one warning names those entries, under every policy: a stop there would fail every build in
  such a style, whatever it cites.

A printed entry whose key rwgate judged no reference for stops the build. Before citeproc nothing
is printed yet: nothing to verify here (``rw-latexmk`` checks what BibTeX or biber writes).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rwgate.contract.doi import find_in_text, try_normalize
from rwgate.frontends.pandoc.lua import attr, rendered_entries
from rwgate.readers.keys import resolve_key
from rwgate.titles import title_key

if TYPE_CHECKING:
    from rwgate.contract.models import Reference

NOTICE = "rw-notice"  # a notice already placed (a second rw-filter): its DOI is not the entry's
_MIN_OTHER_WORDS = 3  # words another work's title needs to count as named ("Nature" is a journal)
_SHOWN = 90


@dataclass(frozen=True)
class Entry:
    """One rendered entry: its ``ref-`` identifier, the DOIs it prints (canonical, in order), and
    its text (``words``: folded as :func:`rwgate.titles.title_key` folds titles)."""

    ident: str
    dois: tuple[str, ...]
    text: str
    words: str = field(repr=False)


def _texts(node: Any, parts: list[str], links: list[str]) -> None:
    """Plain text of ``node`` (inlines joined as printed, so ``Ca``+superscript ``2+`` stays one
    word) and every link target, without placed notices."""
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
            continue
        if not isinstance(item, dict):
            continue
        tag, content = item.get("t"), item.get("c")
        if tag == "Str" and isinstance(content, str):
            parts.append(content)
        elif tag in ("Space", "SoftBreak", "LineBreak"):
            parts.append(" ")
        elif tag in ("Code", "Math") and isinstance(content, list) and len(content) == 2:
            parts.append(str(content[1]))
        elif tag == "Span" and NOTICE in attr(item)[1]:
            continue
        elif tag == "Link" and isinstance(content, list) and len(content) == 3:
            target = content[2]
            if isinstance(target, list) and target and isinstance(target[0], str):
                links.append(target[0])
            stack.append(content[1])
        elif tag in ("Para", "Plain"):
            parts.append(" ")
            stack.append(content)
        elif tag not in ("Note", "RawInline", "RawBlock"):
            stack.append(content)


def _dois(text: str, links: Sequence[str]) -> tuple[str, ...]:
    """Every DOI printed: in a link's target (``https://doi.org/...``) or in the text
    (``doi:10...``). A DOI holds no white space, so the text is looked at word by word."""
    found = (find_in_text(word) for word in [*links, *text.split()] if "10." in word)
    return tuple(dict.fromkeys(doi for doi in found if doi is not None))


def printed_entries(ast: Mapping[str, Any]) -> list[Entry]:
    """The entries citeproc rendered (none before citeproc: no ``Div.csl-bib-body``)."""
    out = []
    for div in rendered_entries(ast.get("blocks")) or []:
        parts: list[str] = []
        links: list[str] = []
        _texts(div.get("c", [None, []])[1], parts, links)
        text = " ".join("".join(parts).split())
        out.append(Entry(attr(div)[0], _dois(text, links), text, title_key(text)))
    return out


def request_part(entries: Sequence[Entry]) -> list[list[Any]]:
    """What the entries print, for the verdict memo's name (another CSL style is verified again)."""
    return [[e.ident, list(e.dois), e.words] for e in entries]


@dataclass
class Verification:
    """``errors`` (the build stops), ``warnings``, and the keys of entries that print nothing to
    compare (one warning for them all)."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unverifiable: list[str] = field(default_factory=list)


def _readings(ref: Reference) -> list[Reference]:
    return [ref, *ref.readings]


def _judged_dois(ref: Reference) -> set[str]:
    return {
        doi
        for unit in _readings(ref)
        for doi in (unit.doi, try_normalize(unit.raw_doi), find_in_text(unit.raw_doi))
        if doi
    }


def _contains(words: str, title: str) -> bool:
    return bool(title) and f" {title} " in f" {words} "


def _judged(ref: Reference) -> str:
    """What rwgate judged for the key, in words: each reading's DOI, else its title."""
    said = []
    for unit in _readings(ref):
        where = f" ({unit.location})" if unit.location else ""
        if unit.doi or unit.raw_doi:
            said.append(f"doi:{unit.doi or unit.raw_doi}{where}")
        elif unit.title:
            said.append(f'"{_short(unit.title)}"{where}')
        else:
            said.append(f"an entry with neither DOI nor title{where}")
    return " and ".join(dict.fromkeys(said))


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1].rstrip() + "…"


def _other_titles(refs: Mapping[str, Reference]) -> Iterator[tuple[str, str]]:
    for key, ref in refs.items():
        for unit in _readings(ref):
            words = title_key(unit.title)
            if len(words.split()) >= _MIN_OTHER_WORDS:
                yield key, words


def _titled(entry: Entry, ref: Reference) -> bool:
    return any(_contains(entry.words, title_key(unit.title)) for unit in _readings(ref))


def _check(entry: Entry, key: str, refs: Mapping[str, Reference]) -> str | None:
    """None when ``entry`` is a judged reading of ``key``; else what it prints instead, or ""
    when it prints nothing to compare."""
    ref = refs[key]
    if entry.dois:
        if _judged_dois(ref).intersection(entry.dois):
            return None
        return "doi:" + ", doi:".join(entry.dois)
    if _titled(entry, ref):
        return None
    for other, words in _other_titles(refs):
        if other != key and _contains(entry.words, words):
            return f'"{_short(entry.text)}" (the title of {other}\'s entry)'
    return ""


def verify(
    entries: Sequence[Entry], refs: Mapping[str, Reference], strict: bool = False
) -> Verification:
    """Each printed entry against what was judged for its key (see the module docstring);
    ``strict``: the policy fails what it cannot judge."""
    out = Verification()
    found: list[tuple[Entry, str]] = []
    titles = False  # whether the style prints titles
    for entry in entries:
        key = resolve_key(entry.ident[4:], refs)
        if key is None:
            out.errors.append(
                f'{entry.ident[4:]}: the bibliography prints "{_short(entry.text)}", an entry '
                "rwgate judged no reference for: the printed work was never checked"
            )
            continue
        titles = titles or _titled(entry, refs[key])
        printed = _check(entry, key, refs)
        if printed == "":
            found.append((entry, key))
        elif printed is not None:
            out.errors.append(_line(key, printed, refs[key]))
    for entry, key in found:
        if not titles:
            out.unverifiable.append(key)
            continue
        said = _line(key, f'"{_short(entry.text)}"', refs[key])
        (out.errors if strict else out.warnings).append(said)
    return out


def _line(key: str, printed: str, ref: Reference) -> str:
    return (
        f"{key}: the bibliography prints {printed}, but rwgate judged {_judged(ref)}: the"
        " printed work was never checked (make every definition of the key name one work, or"
        " give the printed one its DOI)"
    )


def unverifiable_line(keys: Sequence[str]) -> str:
    """The warning for entries that print neither a DOI nor a judged title."""
    listed = ", ".join(dict.fromkeys(keys))
    return (
        f"cannot verify that the printed entries of {listed} are the works judged: the CSL style"
        " prints neither their DOI nor their title"
    )
