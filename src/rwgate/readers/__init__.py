"""Citation sources -> references.

Each reader turns one kind of bibliography into :class:`~rwgate.contract.models.Reference` objects
that remember where they were written (``refs.bib:42``). What a reader cannot read is reported as a
:class:`~rwgate.contract.models.Problem` and the reading goes on; only a file that cannot be
opened, or is not JSON/YAML at all, raises :class:`ReaderError` (one line, naming it).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rwgate.errors import InputError
from rwgate.settings import recorded

if TYPE_CHECKING:  # the models (Pydantic) load with the first reader, not with this package
    from rwgate.contract.models import BibResult, Problem

_BIB_BLOCK = re.compile(r"^\s*@\w+\s*[{(]", re.MULTILINE)
_CSL_YAML = re.compile(r"^(?:references\s*:|-\s+id\s*:)", re.MULTILINE)
_RIS_START = re.compile(r"TY  - ")


class ReaderError(InputError):
    """A bibliography that cannot be read at all; the message is one line naming the file."""


_BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)


def sniff_encoding(data: bytes) -> tuple[str | None, int]:
    """(encoding, length of its BOM) from a byte-order mark or NUL-interleaved text; (None, 0)
    for 8-bit text. A UTF-16 .bib must not read as Latin-1 noise with no entries (a silent pass)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    head = data[:4096]
    if head.count(0) * 4 < len(head):
        return None, 0
    quads = [head[i : i + 4] for i in range(0, len(head) - 3, 4)]
    if quads and all(q[2:] == b"\0\0" for q in quads):  # BMP characters: b0 b1 00 00
        return "utf-32-le", 0
    if quads and all(q[:2] == b"\0\0" for q in quads):
        return "utf-32-be", 0
    odd, even = head[1::2].count(0), head[0::2].count(0)
    return ("utf-16-le", 0) if odd > even else ("utf-16-be", 0)


def read_text(path: Path) -> tuple[str, list[Problem]]:
    """The text of a user file: UTF-8, UTF-16 or UTF-32 (by BOM or by NUL interleaving); in an
    8-bit file that is not all UTF-8, each byte that is not UTF-8 is read as Latin-1, with a
    warning (:func:`decode_bytes`): refusing a Latin-1 .bib would stop a build over an accent. A
    UTF-16/32 file that does not decode is a one-line error naming the file and byte offset.
    """
    try:
        if str(path) == "-":
            recorded.note_unrecordable("a bibliography read from standard input")
            data = sys.stdin.buffer.read()
        else:
            data = recorded.read_bytes(path)  # a memo replays only while these bytes hold
    except FileNotFoundError:
        raise ReaderError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ReaderError(f"{path}: is a directory, not a bibliography file") from None
    except OSError as exc:
        raise ReaderError(f"{path}: cannot read: {exc.strerror or exc}") from None
    encoding, skip = sniff_encoding(data)
    if encoding is not None and encoding != "utf-8":
        try:
            return data[skip:].decode(encoding), []
        except UnicodeDecodeError as exc:
            offset = skip + exc.start
            raise ReaderError(f"{path}: not valid {encoding.upper()} at byte {offset}") from None
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        text, bad = decode_bytes(data[skip:])
        if "texmf-dist" in Path(path).parts:  # a TeX distribution's own (IEEEabrv.bib is Latin-1)
            return text, []
        from rwgate.contract.models import Location, Problem

        more = f" and {bad - 1} more" if bad > 1 else ""
        problem = Problem(
            message=f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}{more});"
            " each such byte read as Latin-1, the rest as UTF-8",
            location=Location(file=str(path), line=data.count(b"\n", 0, exc.start) + 1),
            severity="warning",
        )
        return text, [problem]


_ESCAPED = re.compile("[\udc80-\udcff]")
_UNESCAPE = {0xDC00 + b: b for b in range(0x80, 0x100)}


def decode_bytes(data: bytes) -> tuple[str, int]:
    """``data`` as UTF-8 wherever it is UTF-8, each byte that is not read as Latin-1, and how many
    such bytes there were. BibTeX reads bytes: a stray byte changes only itself, never the key
    (``müller2010``) or DOI beside it. Linear (the codec's own loop)."""
    text = data.decode("utf-8", errors="surrogateescape")
    bad = len(_ESCAPED.findall(text))
    return (text.translate(_UNESCAPE) if bad else text), bad


def read_with(path: Path, parse: Callable[[str, str], BibResult]) -> BibResult:
    """Read ``path`` with :func:`read_text` and ``parse`` it; decoding problems come first."""
    text, problems = read_text(Path(path))
    result = parse(text, str(path))
    result.problems[:0] = problems
    return result


def load_bibliography(path: Path) -> BibResult:
    """Read a bibliography file with the reader its suffix names; a suffix no bibliography
    reader claims is an UnknownFormat error (exit 2), never a guess."""
    from rwgate.readers.bibliographies.registry import reader_for

    path = Path(path)
    reader = reader_for(path, ["bibliography"])
    if str(path) != "-" and not path.exists():
        raise ReaderError(f"{path}: no such file")
    return reader.read(path)


def parse_bibliography(text: str, file: str = "<text>") -> BibResult:
    """A bibliography given as text (an MCP tool argument), its format told by its content: CSL
    JSON starts with ``[``/``{``, BibTeX has a line starting ``@type{``, RIS starts with ``TY  -``,
    CSL YAML has ``references:``, ``- id:`` or front matter; anything else is a DOI list."""
    from rwgate.readers.bibliographies.registry import by_name

    text = text.lstrip("\ufeff")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("%")]
    body = "\n".join(lines).strip()
    if body.startswith(("[", "{")):
        name = "csl-json"
    elif _BIB_BLOCK.search(body):
        name = "bibtex"
    elif _RIS_START.match(body):
        name = "ris"
    elif body.startswith("---") or _CSL_YAML.search(body):
        name = "csl-yaml"
    else:
        name = "doi-list"
    return by_name(name).read_text(text, file)


__all__ = ["ReaderError", "load_bibliography", "parse_bibliography", "read_text", "read_with"]
