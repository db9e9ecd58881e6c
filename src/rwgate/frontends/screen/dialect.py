"""How a CSV table is written, as DuckDB reads it: one reader for the header and the data.

The header, delimiter, quote and escape come from DuckDB's sniffer (``sniff_csv``) or the user's
flags, the encoding from a flag or a byte-order mark; the rows are then read with exactly that
dialect (``auto_detect = false``), so the columns the screen resolves are the ones the rows have.
Encodings: UTF-8 (a BOM is read), UTF-16 by its BOM, those DuckDB knows by name (``latin-1``);
Windows-1252, which DuckDB reads only through an extension it would download, is decoded to a
UTF-8 copy first (:func:`transcode`).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, replace
from pathlib import Path

from rwgate.errors import RwgateError

NATIVE = {"utf-8": "utf-8", "utf8": "utf-8", "utf-16": "utf-16", "utf16": "utf-16",
          "latin-1": "latin-1", "latin1": "latin-1", "iso-8859-1": "latin-1"}  # fmt: skip
"""Encodings DuckDB's CSV reader knows without an extension, by the names a user may give."""
TRANSCODED = {"windows-1252": "cp1252", "cp1252": "cp1252", "win-1252": "cp1252"}
"""Encodings decoded to UTF-8 in Python first (DuckDB would need its ``encodings`` extension)."""
MAX_LINE = 16 * 1024 * 1024


class DialectError(RwgateError):
    """A CSV whose dialect cannot be found or that the flags describe wrongly (exit 2)."""


@dataclass(frozen=True)
class Dialect:
    """A CSV file's dialect as DuckDB reads it; ``columns`` is its header, as DuckDB read it."""

    delimiter: str
    quote: str
    escape: str
    encoding: str = "utf-8"
    compression: str = "auto"
    columns: tuple[str, ...] = ()

    def options(self) -> str:
        """``read_csv``'s arguments for exactly this dialect (nothing left to detect)."""
        from rwgate.frontends.screen.doisql import lit

        cols = ", ".join(f"{lit(c)}: 'VARCHAR'" for c in self.columns)
        return (
            f"auto_detect = false, header = true, delim = {lit(self.delimiter)},"
            f" quote = {lit(self.quote)}, escape = {lit(self.escape)},"
            f" encoding = {lit(self.encoding)}, compression = {lit(self.compression)},"
            f" columns = {{{cols}}}, strict_mode = true, max_line_size = {MAX_LINE}"
        )


def encoding_of(path: Path, head: bytes, given: str | None) -> str:
    """The encoding to read ``path`` with: the flag's, else UTF-16 by its BOM, else UTF-8."""
    if given:
        name = given.strip().lower().replace("_", "-")
        if name in NATIVE:
            return NATIVE[name]
        if name in TRANSCODED:
            return TRANSCODED[name]
        known = ", ".join(sorted({*NATIVE.values(), "windows-1252"}))
        raise DialectError(f"--encoding {given!r}: not one the screen reads ({known})")
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return "utf-16"
    return "utf-8"


def _one_char(flag: str, value: str | None) -> str | None:
    if value is None:
        return None
    value = {"\\t": "\t", "tab": "\t"}.get(value, value)
    if len(value) > 1:
        raise DialectError(f"{flag} {value!r}: one character, or '' for none")
    return value


def sniff(
    path: Path,
    read_as: Path,
    encoding: str,
    delimiter: str | None = None,
    quote: str | None = None,
) -> Dialect:
    """The dialect of ``read_as`` (``path`` itself, or its UTF-8 copy) by DuckDB's sniffer, the
    flags standing where given. A file the sniffer found no quote in is read with RFC 4180's
    ``"`` (a table exported with quoted cells would otherwise be split at a comma in a cell):
    ``--quote ''`` reads it without."""
    import duckdb

    from rwgate.frontends.screen.doisql import lit

    delimiter = _one_char("--delimiter", delimiter)
    quote = _one_char("--quote", quote)
    native = "utf-8" if encoding in TRANSCODED.values() else encoding
    args = f"encoding = {lit(native)}, store_rejects = true"
    if delimiter:
        args += f", delim = {lit(delimiter)}"
    if quote is not None:
        args += f", quote = {lit(quote)}"
    con = duckdb.connect()
    try:
        row = con.execute(
            f"SELECT Delimiter, Quote, Escape, Columns FROM sniff_csv({lit(str(read_as))}, {args})"
        ).fetchone()
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0].removeprefix("Invalid Input Error: ")
        hint = "" if encoding != "utf-8" else " (another encoding? name it with --encoding)"
        raise DialectError(f"{path}: not a CSV DuckDB can read: {first}{hint}") from None
    finally:
        con.close()
    assert row is not None
    found_delim, found_quote, found_escape, columns = row
    found_quote = "" if found_quote == "(empty)" else found_quote
    found_escape = "" if found_escape == "(empty)" else found_escape
    if quote is None and not found_quote:
        found_quote, found_escape = '"', '"'
    dialect = Dialect(
        delimiter=delimiter or found_delim,
        quote=found_quote if quote is None else quote,
        escape=found_escape if found_escape or not found_quote else found_quote,
        encoding=native,
        columns=tuple(str(c["name"]) for c in columns),
    )
    if quote == "":
        dialect = replace(dialect, escape="")
    return dialect


def transcode(path: Path, encoding: str, folder: Path) -> Path:
    """``path`` decoded from ``encoding`` (Windows-1252) to a UTF-8 file in ``folder``; a byte the
    encoding does not define is an error naming its offset (fail closed, never a guess)."""
    import gzip

    out = folder / f"{len(list(folder.iterdir()))}-{path.name.removesuffix('.gz')}"
    decoder = codecs.getincrementaldecoder(encoding)()
    opener = gzip.open if path.name.endswith(".gz") else open
    offset = 0
    with opener(path, "rb") as src, out.open("w", encoding="utf-8", newline="") as dst:
        while chunk := src.read(1 << 20):
            try:
                dst.write(decoder.decode(chunk))
            except UnicodeDecodeError as exc:
                raise DialectError(
                    f"{path}: not {encoding} text (byte {offset + exc.start}): name its"
                    " encoding with --encoding"
                ) from None
            offset += len(chunk)
        dst.write(decoder.decode(b"", final=True))
    return out
