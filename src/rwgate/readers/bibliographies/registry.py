"""Citation readers: the family, listed once (:data:`READERS`), found by name or by suffix.

A suffix no reader claims is an :class:`~rwgate.errors.UnknownFormat` error naming the file and
the known suffixes (exit 2), never a guess: ``rwgate check paper.typ`` must not read a Typst paper
as a list of malformed DOIs and pass. ``-`` (standard input) is a DOI list. A *bibliography*
reader turns a file into references (all its entries), a *manuscript* reader a document into the
keys it cites and the bibliographies it names; ``.md`` is both (a manuscript on the command line,
CSL YAML as pandoc's ``bibliography:``). Adding a reader: its module, one :class:`Reader` line in
:data:`READERS`, and its test; the CLI, the filter, the LaTeX hooks and MCP all find it here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from rwgate.errors import UnknownFormat
from rwgate.readers import read_with

if TYPE_CHECKING:
    from rwgate.contract.models import BibResult, CitedDocument
    from rwgate.readers.locate import Allowed

Kind = Literal["bibliography", "manuscript"]
STDIN = "-"


@dataclass(frozen=True)
class Reader:
    """One reader: its name, the suffixes it claims, and ``function`` (``module:function``,
    imported when used): a bibliography's text parser, or a manuscript's file reader.
    ``pandoc_format`` is the ``-f`` pandoc reads a manuscript with."""

    name: str
    kind: Kind
    suffixes: tuple[str, ...]
    function: str
    pandoc_format: str | None = None

    def _function(self) -> Callable[..., Any]:
        module, _, name = self.function.partition(":")
        return getattr(importlib.import_module(module), name)

    def read(self, path: Path) -> BibResult:
        """The references of a bibliography file (raises InputError when it cannot be read)."""
        return read_with(Path(path), self.read_text)

    def read_text(self, text: str, file: str = "<text>") -> BibResult:
        if self.kind != "bibliography":
            raise UnknownFormat(f"{file}: {self.name} text cannot be read inline")
        return self._function()(text, file)

    def read_manuscript(self, path: Path, allowed: Allowed | None = None) -> CitedDocument:
        """What a manuscript cites; ``allowed``: the files besides it that may be read."""
        extra = {"pandoc_format": self.pandoc_format} if self.pandoc_format else {}
        return self._function()(Path(path), allowed=allowed, **extra)


_BIBS = "rwgate.readers.bibliographies"
_BUILDS = "rwgate.readers.builds"
_MSS = "rwgate.readers.manuscripts"
READERS: tuple[Reader, ...] = (
    Reader("bibtex", "bibliography", (".bib", ".biblatex", ".bibtex"), f"{_BIBS}.bibtex:parse_bib"),
    Reader("bbl", "bibliography", (".bbl",), f"{_BUILDS}.bbl:parse_bbl"),
    Reader("csl-json", "bibliography", (".json", ".csljson"), f"{_BIBS}.csl:parse_csl_json"),
    Reader(
        "csl-yaml",
        "bibliography",
        (".yaml", ".yml", ".md", ".markdown"),
        f"{_BIBS}.csl:parse_csl_yaml",
    ),
    Reader("ris", "bibliography", (".ris",), f"{_BIBS}.ris:parse_ris"),
    Reader("doi-list", "bibliography", (".txt", ".dois"), f"{_BIBS}.doilist:parse_doi_list"),
    Reader("latex", "manuscript", (".tex", ".ltx"), f"{_MSS}.manuscript:read_latex_manuscript"),
    Reader(
        "markdown",
        "manuscript",
        (".md", ".markdown", ".qmd", ".rmd", ".rmarkdown"),
        f"{_MSS}.manuscript:read_markdown",
        "markdown",
    ),
    Reader("rst", "manuscript", (".rst",), f"{_MSS}.manuscript:read_markdown", "rst"),
    Reader("org", "manuscript", (".org",), f"{_MSS}.manuscript:read_markdown", "org"),
)


def suffixes(kinds: Iterable[Kind] = ("manuscript", "bibliography")) -> list[str]:
    """Every suffix a reader of ``kinds`` claims, sorted (for messages and MCP descriptions)."""
    wanted = set(kinds)
    return sorted({s for r in READERS if r.kind in wanted for s in r.suffixes})


def by_name(name: str) -> Reader:
    for reader in READERS:
        if reader.name == name:
            return reader
    known = ", ".join(r.name for r in READERS)
    raise UnknownFormat(f"no reader named {name!r} (known: {known})")


def reader_for(path: Path | str, kinds: Iterable[Kind] = ("manuscript", "bibliography")) -> Reader:
    """The reader for ``path`` by its suffix, trying ``kinds`` in order; ``-`` is a DOI list;
    anything else is UnknownFormat."""
    if str(path) == STDIN:
        return by_name("doi-list")
    order = list(kinds)
    suffix = Path(path).suffix.lower()
    for kind in order:
        for reader in READERS:
            if reader.kind == kind and suffix in reader.suffixes:
                return reader
    what = " or ".join(order)
    raise UnknownFormat(
        f"{path}: no {what} reader for {suffix or 'a file without a suffix'!r}"
        f" (known: {', '.join(suffixes(order))}; '-' reads DOIs from standard input)"
    )


def is_manuscript(path: Path | str) -> bool:
    return str(path) != STDIN and any(
        r.kind == "manuscript" and Path(path).suffix.lower() in r.suffixes for r in READERS
    )


__all__ = ["READERS", "STDIN", "Reader", "by_name", "is_manuscript", "reader_for", "suffixes"]
