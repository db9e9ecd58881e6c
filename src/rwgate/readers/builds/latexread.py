"""What every reader of a LaTeX document's files shares: the error, the roots check, and reading
a file's bytes as TeX and BibTeX read them (:func:`read_tex`), so a cited key reads the same
wherever it was found."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rwgate.errors import InputError
from rwgate.readers import decode_bytes
from rwgate.readers.locate import OUTSIDE, Allowed


class LatexError(InputError):
    """A LaTeX input file could not be read; the message is one line naming the file."""


def check_allowed(path: Path, allowed: Allowed | None, where: object = None) -> None:
    """Refuse ``path`` when it lies outside ``allowed`` (the MCP server's roots).

    Judged as the document names it (a symlink by its own name), never by what it points to;
    the refusal never names the file, and comes before any look at whether it exists."""
    if allowed is not None and not allowed(path):
        raise LatexError(f"{where or 'a file the document reads'} {OUTSIDE}")


def read_tex(path: Path, allowed: Allowed | None = None) -> str:
    """The text of a ``.tex``, ``.aux`` or ``.fls`` file as the ``.bib`` reader reads a file
    (:func:`rwgate.readers.decode_bytes`): TeX writes a key into the ``.aux`` byte for byte
    (``\\citation{m\\xfcller2010}``) and BibTeX matches it byte for byte with a Latin-1 ``.bib``'s,
    so equal bytes must be equal keys."""
    check_allowed(path, allowed)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LatexError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return decode_bytes(data.removeprefix(b"\xef\xbb\xbf"))[0]


def split_keys(text: str) -> list[str]:
    return [key.strip() for key in text.split(",") if key.strip()]


@dataclass
class Walk:
    """What one walk through a file and its includes carries along."""

    allowed: Allowed | None
    seen: set[Path] = field(default_factory=set)
    root: Path = Path()  # the folder included names are relative to: the main file's
    kpathsea: dict[str, Path] = field(default_factory=dict)
    """Included names kpathsea found (``TEXINPUTS``, the TeX tree), asked once per file."""
