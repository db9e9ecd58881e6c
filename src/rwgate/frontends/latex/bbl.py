"""Annotations written into the ``.bbl`` that BibTeX or biber just produced.

Editing the ``.bbl`` (not the user's ``.bib`` or ``.bst``) works with every bibliography style:
BibTeX styles all write ``\\bibitem[label]{KEY}`` blocks, and biber (or biblatex's BibTeX
backend) writes ``\\entry{KEY}...\\endentry`` blocks whose fields biblatex prints through the
style's own ``addendum`` slot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from rwgate.fsutil import write_atomic
from rwgate.readers.builds.bblscan import BIBITEM, END_BIB, balanced, bibitem_key
from rwgate.render.latex import without_doi_markup

MARK = "% rwgate"
_ADDENDUM = r"\field{addendum}{"


def carries(entry: str, note: str) -> bool:
    """Whether an entry already prints ``note`` (the style printed the ``note`` field of
    rw-filter's shadow .bib, pandoc ``--natbib`` output built by rw-latexmk): compared without
    braces, case and line breaks, as BibTeX and biber may rewrap, brace or lower-case it."""

    def flat(text: str) -> str:
        return " ".join(text.replace("{", "").replace("}", "").split()).casefold()

    return flat(without_doi_markup(note)) in flat(entry)


def _bibtex_lookup(notes: Mapping[str, str]) -> Callable[[str], str | None]:
    """BibTeX matches keys case-insensitively (it warns but uses the entry), so do we; biber's
    are case-sensitive (``Smith2010`` and ``smith2010`` are two works there)."""
    folded = {k.casefold(): v for k, v in notes.items()}
    # An entry with no key (``\bibitem{}``; BibTeX prints one per stream) is judged as
    # "(no key at refs.bib:N)" (references.bibtex.EMPTY_KEY): its note goes on that item.
    keyless = [v for k, v in notes.items() if k.startswith("(no key at ")]
    if keyless and "" not in folded:
        folded[""] = keyless[0]
    return lambda key: notes.get(key, folded.get(key.casefold()))


def annotate_bibtex(text: str, notes: Mapping[str, str]) -> tuple[str, list[str]]:
    """Append ``\\newblock \\textbf{NOTE}`` to each ``\\bibitem`` block whose key has a note."""
    items = list(BIBITEM.finditer(text))
    if not items:
        return text, []
    lookup = _bibtex_lookup(notes)
    end_match = END_BIB.search(text, items[-1].end())
    limit = end_match.start() if end_match else len(text)
    out: list[str] = [text[: items[0].start()]]
    done: list[str] = []
    for index, match in enumerate(items):
        stop = items[index + 1].start() if index + 1 < len(items) else limit
        block = text[match.start() : stop]
        parsed = bibitem_key(text, match.end())
        note = lookup(parsed[0]) if parsed else None
        if parsed and note is not None:
            added = f"\\newblock \\textbf{{{note}}}{MARK}"
            if added not in block and not carries(block, note):
                block = _with_note(block, added)
                done.append(parsed[0])
        out.append(block)
    out.append(text[limit:])
    return "".join(out), done


_SHUT = re.compile(r"\\BibitemShut\s*\{")


def _with_note(block: str, added: str) -> str:
    """The entry with its note at the end of its text: before revtex/apsrev's closing
    ``\\BibitemShut{...}`` (which prints the entry's final stop), else after the last line."""
    shut = list(_SHUT.finditer(block))
    if shut:
        at = shut[-1].start()
        return f"{block[:at].rstrip()}\n{added}\n  {block[at:]}"
    return f"{block.rstrip()}\n{added}\n\n"


def _entry_key(line: str) -> str | None:
    stripped = line.lstrip()
    if not stripped.startswith("\\entry{"):
        return None
    start = len(line) - len(stripped) + len("\\entry")
    end = balanced(line, start, "{", "}")
    return line[start + 1 : end - 1] if end > 0 else None


def _with_addendum(lines: list[str], indent: str, note: str) -> list[str] | None:
    """The entry's lines with ``note`` added to its ``addendum`` (kept, if it has one); None
    when the entry already carries this note, so annotating twice never doubles it."""
    if carries("".join(lines), note):
        return None
    added = f"\\textbf{{{note}}}"
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(_ADDENDUM) and stripped.endswith("}"):
            old = stripped[len(_ADDENDUM) : -1]
            if old.endswith(added):
                return None
            lines[i] = f"{indent}{_ADDENDUM}{old}\\adddot\\space{added}}}\n"
            return lines
    return [*lines, f"{indent}{_ADDENDUM}{added}}}\n"]


def annotate_biblatex(text: str, notes: Mapping[str, str]) -> tuple[str, list[str]]:
    """Give each ``\\entry{KEY}`` with a note an ``addendum`` (appended to an existing one)."""
    out: list[str] = []
    done: list[str] = []
    entry: list[str] | None = None
    note: str | None = None
    key = ""
    in_verb = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if in_verb:
            in_verb = stripped != "\\endverb"
        elif stripped.startswith("\\verb{") or stripped.startswith("\\lverb{"):
            in_verb = True
        elif (found := _entry_key(line)) is not None:
            key, note = found, notes.get(found)
            entry = []
        elif stripped == "\\endentry" and entry is not None:
            indent = line[: len(line) - len(line.lstrip())] + "  "
            noted = _with_addendum(entry, indent, note) if note is not None else None
            if noted is not None:
                entry = noted
                done.append(key)
            out.extend(entry)
            entry = None
        target = entry if entry is not None and not stripped.startswith("\\entry{") else out
        target.append(line)
    if entry is not None:
        out.extend(entry)
    return "".join(out), done


def is_biblatex(text: str) -> bool:
    """A biblatex ``.bbl`` (biber, or biblatex's BibTeX backend) rather than a thebibliography."""
    return "biblatex auxiliary file" in text[:400] or "\\endentry" in text


def annotated(path: Path, notes: Mapping[str, str]) -> tuple[bytes, list[str]]:
    """The bytes of ``path`` (a ``.bbl``, or a ``.tex`` holding a thebibliography) with the
    notes added, and the keys that got one (none: the bytes are the file's)."""
    text = path.read_bytes().decode("utf-8", errors="surrogateescape")
    annotate = annotate_biblatex if is_biblatex(text) else annotate_bibtex
    new, done = annotate(text, notes)
    return new.encode("utf-8", errors="surrogateescape"), done


def annotate_bbl(path: Path, notes: Mapping[str, str]) -> list[str]:
    """Annotate the ``.bbl`` at ``path`` in place (atomically); the keys that got a note."""
    if not notes:
        return []
    data, done = annotated(path, notes)
    if done:
        write_atomic(path, data)
    return done
