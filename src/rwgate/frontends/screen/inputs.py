"""Reference tables as they are published: what each file is, checked before an engine reads it.

Three shapes, many files and globs each: ``table`` (Parquet, CSV, JSON lines; its columns found
by :mod:`~rwgate.frontends.screen.columns`); ``opencitations``, the OpenCitations Index CSV dump
(``oci,citing,cited,creation,...``, cells of bare DOIs or of prefixed identifiers); ``crossref``,
Crossref public data file records with their ``reference`` lists (JSON lines or the classic
``{"items": [...]}`` files, gzipped or not). A file that is not what it claims to be, or cannot
be opened, is a one-line error naming it (exit 2), never a half-read corpus.

A CSV's :class:`Dialect` (header, delimiter, quote, escape) comes from DuckDB's sniffer or the
user's flags, its encoding from a flag or a byte-order mark, and its rows are read in exactly
that dialect (``auto_detect = false``), so the columns the screen resolves are the rows' own.
Windows-1252, which DuckDB reads only through an extension it would download, is decoded to a
UTF-8 copy first (:func:`transcode`).
"""

from __future__ import annotations

import codecs
import glob
import gzip
import json
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from rwgate.errors import RwgateError
from rwgate.frontends.screen.doisql import lit

OC_COLUMNS = ("oci", "citing", "cited", "creation")
_PEEK = 64 * 1024
_CROSSREF_KEYS = frozenset({"items", "reference", "reference-count", "references-count"})


class InputError(RwgateError):
    """A reference file that cannot be read as what it claims to be (exit 2, one line)."""


NATIVE = {"utf-8": "utf-8", "utf8": "utf-8", "utf-16": "utf-16", "utf16": "utf-16",
          "latin-1": "latin-1", "latin1": "latin-1", "iso-8859-1": "latin-1"}  # fmt: skip
"""Encodings DuckDB's CSV reader knows without an extension, by the names a user may give."""
TRANSCODED = {"windows-1252": "cp1252", "cp1252": "cp1252", "win-1252": "cp1252"}
"""Encodings decoded to UTF-8 in Python first (DuckDB would need its ``encodings`` extension)."""
MAX_LINE = 16 * 1024 * 1024


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
        raise InputError(f"--encoding {given!r}: not one the screen reads ({known})")
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return "utf-16"
    return "utf-8"


def _one_char(flag: str, value: str | None) -> str | None:
    if value is None:
        return None
    value = {"\\t": "\t", "tab": "\t"}.get(value, value)
    if len(value) > 1:
        raise InputError(f"{flag} {value!r}: one character, or '' for none")
    return value


def sniff(
    path: Path,
    read_as: Path,
    encoding: str,
    delimiter: str | None = None,
    quote: str | None = None,
    compression: str = "auto",
) -> Dialect:
    """The dialect of ``read_as`` (``path`` itself, or its UTF-8 copy) by DuckDB's sniffer, the
    flags standing where given. A file the sniffer found no quote in is read with RFC 4180's
    ``"`` (a table exported with quoted cells would otherwise be split at a comma in a cell):
    ``--quote ''`` reads it without."""
    import duckdb

    delimiter = _one_char("--delimiter", delimiter)
    quote = _one_char("--quote", quote)
    native = "utf-8" if encoding in TRANSCODED.values() else encoding
    args = f"encoding = {lit(native)}, store_rejects = true"
    if compression != "auto":
        args += f", compression = {lit(compression)}"
    if delimiter:
        args += f", delim = {lit(delimiter)}"
    if quote is not None:
        args += f", quote = {lit(quote)}"
    with duckdb.connect() as con:
        try:
            row = con.execute(
                "SELECT Delimiter, Quote, Escape, Columns FROM sniff_csv("
                f"{lit(str(read_as))}, {args})"
            ).fetchone()
        except duckdb.Error as exc:
            first = str(exc).splitlines()[0].removeprefix("Invalid Input Error: ")
            hint = "" if encoding != "utf-8" else " (another encoding? name it with --encoding)"
            raise InputError(f"{path}: not a CSV DuckDB can read: {first}{hint}") from None
    assert row is not None
    found_delim, found_quote, found_escape, columns = row
    found_quote = "" if found_quote == "(empty)" else found_quote
    found_escape = "" if found_escape == "(empty)" else found_escape
    if quote is None and not found_quote:
        found_quote, found_escape = '"', '"'
    return Dialect(
        delimiter=delimiter or found_delim,
        quote=found_quote if quote is None else quote,
        escape="" if quote == "" else found_escape or found_quote,
        encoding=native,
        compression=compression,
        columns=tuple(str(c["name"]) for c in columns),
    )


def transcode(path: Path, encoding: str, folder: Path, gzipped: bool) -> Path:
    """``path`` decoded from ``encoding`` (Windows-1252) to a UTF-8 file in ``folder``; a byte the
    encoding does not define is an error naming its offset (fail closed, never a guess)."""
    out = folder / f"{len(list(folder.iterdir()))}-{path.name.removesuffix('.gz')}"
    decoder = codecs.getincrementaldecoder(encoding)()
    opener = gzip.open if gzipped else open
    offset = 0
    with opener(path, "rb") as src, out.open("w", encoding="utf-8", newline="") as dst:
        while chunk := src.read(1 << 20):
            try:
                dst.write(decoder.decode(chunk))
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{path}: not {encoding} text (byte {offset + exc.start}): name its"
                    " encoding with --encoding"
                ) from None
            offset += len(chunk)
        dst.write(decoder.decode(b"", final=True))
    return out


@dataclass
class InputGroup:
    """Files of one shape and container, read together by one engine call."""

    shape: str  # table | opencitations | crossref
    container: str  # parquet | csv | json
    files: list[Path] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)  # a table's columns, from its first file
    dialect: Dialect | None = None
    """A CSV group's dialect, as DuckDB's sniffer found it (or the flags said)."""
    read_as: dict[Path, Path] = field(default_factory=dict)
    """A file read from another path: its UTF-8 copy (Windows-1252), or the rest of a file after
    an unterminated quote (:mod:`rwgate.frontends.screen.records`)."""
    numbers: list[int] | None = None
    """Each file's number when not its place among all inputs (a file's recovered rest)."""
    compression: str = "auto"
    """``gzip``: files gzipped but named without ``.gz`` (DuckDB and Spark tell gzip by the
    name; a CSV's is in its dialect too)."""

    def paths(self) -> list[Path]:
        """The paths an engine reads, in the order of ``files``."""
        return [self.read_as.get(f, f) for f in self.files]


@dataclass(frozen=True)
class CsvOptions:
    """What the user said about CSV files (each None: DuckDB's sniffer decides)."""

    encoding: str | None
    delimiter: str | None
    quote: str | None
    folder: Path
    """Where decoded copies are written (the screen's temporary folder)."""


def expand(patterns: list[str]) -> list[Path]:
    """Files named or matched by glob patterns, in order, each once; a pattern that names nothing
    is an error (a typo must not make a smaller corpus look screened)."""
    out: dict[str, Path] = {}  # by absolute path: a file named twice (``a.csv``, ``$PWD/a.csv``)
    for pattern in patterns:
        matches = sorted(glob.glob(pattern, recursive=True)) if glob.has_magic(pattern) else []
        if not matches and not glob.has_magic(pattern):
            matches = [pattern]
        if not matches:
            raise InputError(f"{pattern}: no file matches")
        for match in matches:
            out.setdefault(os.path.abspath(match), Path(match))
    return list(out.values())


def _head(path: Path) -> tuple[bytes, bool]:
    """The first bytes of ``path`` (decompressed when gzipped), and whether it is gzipped: known
    by its bytes, whatever its name."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(_PEEK)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if raw[:2] != b"\x1f\x8b":
        return raw, False
    try:
        return zlib.decompressobj(wbits=31).decompress(raw, _PEEK), True
    except zlib.error:
        raise InputError(f"{path}: not a gzip file (corrupt gzip header)") from None


def _text(path: Path, head: bytes) -> str:
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return head.decode("utf-16", errors="replace")
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start > len(head) - 4:  # a character cut by the peek
            return head[: exc.start].decode("utf-8")
        raise InputError(
            f"{path}: not UTF-8 text (byte {exc.start}): name its encoding with --encoding"
            " (windows-1252, latin-1, utf-16), or it is not CSV or JSON"
        ) from None


def _container(path: Path, head: bytes) -> str:
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith((".csv", ".tsv")):
        return "csv"
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "json"
    if head[:4] == b"PAR1":
        return "parquet"
    text = _text(path, head).lstrip()
    return "json" if text.startswith(("{", "[")) else "csv"


def _compression(path: Path, gzipped: bool) -> str:
    """DuckDB tells gzip by the name: a gzipped file named without ``.gz`` is said to be one."""
    return "gzip" if gzipped and not path.name.endswith(".gz") else "auto"


def _csv_dialect(
    path: Path, head: bytes, gzipped: bool, opts: CsvOptions
) -> tuple[Dialect, Path | None]:
    """The dialect DuckDB's sniffer finds (the flags standing), and the UTF-8 copy read in the
    file's place when its encoding is one DuckDB does not read."""
    encoding = encoding_of(path, head, opts.encoding)
    if encoding == "utf-8":
        _text(path, head)  # not UTF-8: one line naming --encoding
    copy = None
    if encoding in TRANSCODED.values():
        copy = transcode(path, encoding, opts.folder, gzipped)
    compression = _compression(path, gzipped and copy is None)
    dialect = sniff(path, copy or path, encoding, opts.delimiter, opts.quote, compression)
    if not dialect.columns or not any(c.strip() for c in dialect.columns):
        raise InputError(f"{path}: not a CSV file (no header line)")
    return dialect, copy


def _check_parquet(path: Path, head: bytes) -> None:
    if head[:4] != b"PAR1":
        raise InputError(f"{path}: not a Parquet file (no PAR1 magic)")
    try:
        with path.open("rb") as handle:
            handle.seek(-4, 2)
            tail = handle.read(4)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if tail != b"PAR1":
        raise InputError(f"{path}: not a whole Parquet file (no PAR1 footer: truncated?)")


def _json_shape(path: Path, head: bytes) -> str:
    text = _text(path, head).lstrip()
    if not text.startswith("{"):
        raise InputError(f"{path}: not JSON lines (the first record is not a JSON object)")
    line = text.splitlines()[0]
    try:
        first = json.loads(line)
    except ValueError:
        first = None  # a pretty-printed file: one object over many lines
    if isinstance(first, dict):  # a work without references still has a reference-count
        return "crossref" if _CROSSREF_KEYS & first.keys() else "table"
    return "crossref" if any(f'"{key}"' in text for key in _CROSSREF_KEYS) else "table"


def classify(path: Path, claimed: str, opts: CsvOptions) -> InputGroup:
    """One file as a group of its own: shape, container, columns, dialect, the copy it is read
    from (if any); InputError when it is not what it claims."""
    head, gzipped = _head(path)
    container = "csv" if opts.encoding and path.suffix != ".parquet" else _container(path, head)
    columns: list[str] = []
    dialect = copy = None
    if container == "parquet":
        _check_parquet(path, head)
        shape = "table"
    elif container == "csv":
        dialect, copy = _csv_dialect(path, head, gzipped, opts)
        columns = list(dialect.columns)
        shape = "opencitations" if set(OC_COLUMNS) <= set(columns) else "table"
    else:
        shape = _json_shape(path, head)
    if claimed != "auto" and claimed != shape:
        if claimed == "crossref" or shape == "crossref" or container == "parquet":
            raise InputError(f"{path}: not a {claimed} file (it reads as a {container} {shape})")
        if claimed == "opencitations":
            raise InputError(
                f"{path}: not an OpenCitations CSV (header lacks {', '.join(OC_COLUMNS)})"
            )
        shape = claimed
    compression = dialect.compression if dialect else _compression(path, gzipped)
    read_as = {path: copy} if copy else {}
    return InputGroup(shape, container, [path], columns, dialect, read_as, compression=compression)


def group(paths: list[Path], claimed: str, opts: CsvOptions) -> list[InputGroup]:
    """Files checked and gathered by shape, container, dialect and (a table's) header, in the
    order first seen: tables whose columns differ are read apart, each with the columns it has,
    so a file whose DOI column has another name is never read as NULLs beside its neighbours."""
    groups: dict[tuple[object, ...], InputGroup] = {}
    for path in paths:
        c = classify(path, claimed, opts)
        columns = tuple(c.columns) if c.shape == "table" else ()
        key = (c.shape, c.container, columns, c.dialect, c.compression)
        grp = groups.setdefault(key, replace(c, files=[], read_as={}))
        grp.files.append(path)
        grp.read_as.update(c.read_as)
    return list(groups.values())


def split_by_columns(
    groups: list[InputGroup], columns_of: Callable[[InputGroup], dict[Path, list[str]]]
) -> list[InputGroup]:
    """Each group of two or more Parquet tables split by the columns each file has
    (``columns_of``: an engine's reading of the files' footers), so each part is read with the
    columns it has, not one file's."""
    out: list[InputGroup] = []
    for grp in groups:
        if grp.container != "parquet" or grp.shape != "table" or len(grp.files) < 2:
            out.append(grp)
            continue
        by_file = columns_of(grp)
        parts: dict[tuple[str, ...], InputGroup] = {}
        for path in grp.files:
            names = tuple(by_file.get(path, []))
            part = parts.setdefault(
                names, InputGroup(grp.shape, grp.container, columns=list(names))
            )
            part.files.append(path)
        out += parts.values()
    return out
