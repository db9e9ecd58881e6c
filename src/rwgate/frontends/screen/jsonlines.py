"""Every record of a JSON lines input accounted for: screened, or unusable with its line quoted.

Each non-blank line is one record, read by DuckDB's ``read_json_objects``: a line that holds a
JSON object is screened, any other is an *unusable record*, quoted with its line number. The
records read are checked against the file's non-blank lines counted from its bytes (a file whose
lines do not add up is an error naming it). The engine reads the same objects
(:func:`objects_reader`), so a line counted as screened is a row of the screen.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

from rwgate.frontends.screen.doisql import lit, lit_list
from rwgate.frontends.screen.inputs import InputError, InputGroup

MAX_OBJECT = 33554432
"""Bytes of one line DuckDB sets aside (a Crossref work with its references: a few MB at most)."""
_BLANK = re.compile(rb"(?m)^[ \t\r\f\v]*\n")
_SHOWN = 120


def _open(path: Path) -> Any:
    with path.open("rb") as handle:
        gz = handle.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else path.open("rb")


def nonblank_lines(path: Path) -> int:
    """The lines of ``path`` holding anything but white space (DuckDB skips those), counted
    from its bytes in pieces, not by a JSON parser."""
    count = 0
    carry = b""
    with _open(path) as handle:
        while chunk := handle.read(1 << 22):
            buf = carry + chunk
            end = buf.rfind(b"\n") + 1
            whole, carry = buf[:end], buf[end:]
            count += whole.count(b"\n") - len(_BLANK.findall(whole))
    return count + (1 if carry.strip() else 0)


def gzip_arg(grp: InputGroup) -> str:
    """A JSON reader's argument for files gzipped but not named so (none for others)."""
    return ", compression = 'gzip'" if grp.compression == "gzip" else ""


def _source(paths: list[Path], grp: InputGroup) -> str:
    return (
        f"read_json_objects({lit_list(paths)}, format = 'newline_delimited', ignore_errors = true,"
        f" filename = 'rwgate_path', maximum_object_size = {MAX_OBJECT}{gzip_arg(grp)})"
    )


_OBJECT = "json_type(json) = 'OBJECT'"


def objects_reader(grp: InputGroup, structure: dict[str, str]) -> str:
    """The engine's read of JSON lines files: each line holding an object, as the columns of
    ``structure`` (name -> DuckDB type; a value of another type is NULL, its row kept), and
    ``rwgate_path``."""
    shape = lit(json.dumps(structure))
    return (
        f"(SELECT unnest(json_transform(json, {shape})), rwgate_path"
        f" FROM {_source(grp.files, grp)}"
        f" WHERE {_OBJECT})"
    )


def pretty_json(path: Path, compression: str) -> bool:
    """Whether a Crossref file is one object over many lines (the classic ``items`` files)."""
    gz = compression == "gzip" or path.name.endswith(".gz")
    opener: Any = gzip.open if gz else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        first = handle.readline()
    return first.strip() in ("{", "[")


def lines_json(grp: InputGroup) -> bool:
    """Whether a group is JSON lines files, read line by line (a Crossref group with a classic
    ``items`` file, one object over many lines, is not)."""
    if grp.container != "json":
        return False
    return grp.shape == "table" or not any(pretty_json(f, grp.compression) for f in grp.files)


def _why(text: str) -> str:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not JSON ({exc.msg} at column {exc.colno})"
    kinds = {dict: "object", list: "array", str: "string", bool: "true/false", type(None): "null"}
    return f"a JSON {kinds.get(type(value), 'number')}, not an object"


def _quoted(path: Path, ordinals: list[int]) -> list[tuple[int, str]]:
    """(line number, text) of the ``ordinals``-th non-blank lines of ``path`` (from 1)."""
    wanted = set(ordinals)
    out: list[tuple[int, str]] = []
    n = 0
    with _open(path) as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            n += 1
            if n in wanted:
                out.append((number, raw.decode("utf-8", errors="replace").rstrip("\r\n")))
                if len(out) == len(wanted):
                    break
    return out


def account_json(con: Any, error: type[Exception], grp: InputGroup) -> list[dict[str, Any]]:
    """Per file of a JSON lines group: records, screened, unusable (each quoted: line, text,
    why), checked against its non-blank lines. ``con``: a DuckDB connection."""
    paths = grp.files
    try:
        rows = con.execute(
            f"SELECT rwgate_path, count(*), count(*) FILTER (json_type(json) IS DISTINCT FROM"
            f" 'OBJECT') FROM {_source(paths, grp)} GROUP BY 1"
        ).fetchall()
    except error as exc:
        first = str(exc).splitlines()[0]
        raise InputError(f"{paths[0]}: unreadable as JSON lines: {first}") from None
    got = {str(p): (int(n), int(bad)) for p, n, bad in rows}
    out = []
    for path in paths:
        n, bad = got.get(str(path), (0, 0))
        lines = nonblank_lines(path)
        if n != lines:
            raise InputError(
                f"{path}: {lines} non-blank lines, but DuckDB read {n} JSON lines records:"
                " the file cannot be accounted for, so it is not screened"
            )
        unusable = []
        if bad:
            ordinals = con.execute(
                f"SELECT ordinality FROM {_source([path], grp)} WITH ORDINALITY"
                f" WHERE json_type(json) IS DISTINCT FROM 'OBJECT' ORDER BY 1"
            ).fetchall()
            for line, text in _quoted(path, [int(o) for (o,) in ordinals]):
                unusable.append({"line": line, "value": text[:_SHOWN], "why": _why(text)})
        out.append({"records": n, "screened": n - bad, "unusable": unusable, "lines": lines})
    return out
