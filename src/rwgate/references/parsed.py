"""Parsed bibliographies, remembered by content: a ``.bib`` is decoded once, not on every pass.

A LaTeX build reads its bibliography several times (the BibTeX hook, a later pass, the gate after
latexmk) and every rebuild reads it again; LaTeX-decoding the titles of a 1,300-entry IEEE
bibliography takes about half a second each time. So what a reader made of a file is kept in the
invoking user's cache folder under a key over the file's bytes, its path (locations name it),
its suffix (which reader) and rwgate's version, and read back (validated) when all of those are
the same. A file that changed while it was read is not remembered; an entry that does not
validate is read again from the file. Entries unused for 30 days are removed.

The ``.bib`` files of one ``\\bibdata`` are one stream of ``@string``s (:func:`load_stream`):
a file's reading then depends on the macros the files before it defined, so those are part of
the key, and the table the file leaves is remembered with its entries.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from pydantic import BaseModel

from rwgate import __version__
from rwgate.models import BibResult
from rwgate.references import load_bibliography

FOLDER = "parsed"
LAYOUT = 1
MAX_IDLE = 30 * 86400.0


def _key(path: Path, data: bytes, macros: dict[str, str] | None = None) -> str:
    digest = hashlib.sha256(f"{LAYOUT}\0{__version__}\0{path}\0{path.suffix}\0".encode())
    if macros is not None:  # the @strings inherited from the earlier files of the stream
        digest.update(b"macros\0" + json.dumps(macros, sort_keys=True).encode() + b"\0")
    digest.update(data)
    return digest.hexdigest()


class _Streamed(BaseModel):
    result: BibResult
    macros: dict[str, str]


def load_stream(
    path: Path, cache_dir: Path | None, macros: dict[str, str]
) -> tuple[BibResult, dict[str, str]]:
    """A ``.bib`` read as the next file of one ``\\bibdata`` (BibTeX's one stream of
    ``@string``s): its result and the macro table after it, from the cache when the bytes and
    the inherited ``macros`` were read before."""
    from rwgate.references.bibtex import read_bib_stream

    path = Path(path)
    if cache_dir is None or not path.is_file():
        return read_bib_stream(path, macros)
    try:
        before = path.read_bytes()
    except OSError:
        return read_bib_stream(path, macros)  # it says why, in one line
    entry = cache_dir / FOLDER / f"{_key(path, before, macros)}.json"
    with contextlib.suppress(OSError, ValueError):
        kept = _Streamed.model_validate_json(entry.read_bytes())
        entry.touch()
        return kept.result, kept.macros
    result, after = read_bib_stream(path, macros)
    with contextlib.suppress(OSError):
        if path.read_bytes() == before:  # not one edited while it was read
            from rwgate.fsutil import write_atomic

            write_atomic(entry, _Streamed(result=result, macros=after).model_dump_json())
            _prune(entry.parent)
    return result, after


def load_remembered(path: Path, cache_dir: Path | None) -> BibResult:
    """:func:`~rwgate.references.load_bibliography`, from the cache when ``path``'s bytes were
    read before (``cache_dir`` None: always from the file)."""
    path = Path(path)
    if cache_dir is None or str(path) == "-" or not path.is_file():
        return load_bibliography(path)
    try:
        before = path.read_bytes()
    except OSError:
        return load_bibliography(path)  # it says why, in one line
    entry = cache_dir / FOLDER / f"{_key(path, before)}.json"
    with contextlib.suppress(OSError, ValueError):
        result = BibResult.model_validate_json(entry.read_bytes())
        entry.touch()
        return result
    result = load_bibliography(path)
    with contextlib.suppress(OSError):
        if path.read_bytes() == before:  # not one edited while it was read
            from rwgate.fsutil import write_atomic

            write_atomic(entry, result.model_dump_json())
            _prune(entry.parent)
    return result


def _prune(folder: Path) -> None:
    """Drop entries past any possible expiry (each change of the inputs leaves one behind)."""
    from rwgate.fsutil import prune_older

    prune_older(folder, MAX_IDLE)
