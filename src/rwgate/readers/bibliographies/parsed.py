"""Parsed bibliographies, remembered by content: a ``.bib`` is decoded once, not on every pass.

A LaTeX build reads its bibliography several times (the BibTeX hook, a later pass, the gate after
latexmk) and every rebuild reads it again; LaTeX-decoding the titles of a 1,300-entry IEEE
bibliography takes about half a second each time. So what a reader made of a file is kept in the
invoking user's cache folder as a memo of :mod:`rwgate.settings.recorded`: named by the request (the
file's path, its suffix, its bytes' digest and, for a file read as part of a stream, the macros
it inherits), with the record of everything the reading read (the file's bytes, rwgate's code:
an edited reader is new code, whatever the version says). It is read back (validated) only when
every recorded input still holds; one that does not validate is read again from the file. A
file that changed while it was read is not remembered. ``RWGATE_NO_MEMO`` turns it off.

The ``.bib`` files of one ``\\bibdata`` are one stream of ``@string``s (:func:`load_stream`):
a file's reading then depends on the macros the files before it defined, so those are part of
the request, and the table the file leaves is remembered with its entries.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rwgate.contract.models import BibResult
from rwgate.readers import load_bibliography
from rwgate.settings import recorded
from rwgate.settings.files import memo_disabled

FOLDER = "parsed"
LAYOUT = 2
MAX_IDLE = 30 * 86400.0

T = TypeVar("T", bound=BaseModel)


class _Streamed(BaseModel):
    result: BibResult
    macros: dict[str, str]


def _remembered(
    path: Path,
    cache_dir: Path | None,
    macros: dict[str, str] | None,
    model: type[T],
    read: Callable[[], T],
) -> T:
    """``read()``'s answer, replayed from the memo when every input its record names holds.
    Replayed records' inputs join the run around (:func:`rwgate.settings.recorded.replay`)."""
    if cache_dir is None or str(path) == "-" or not path.is_file() or memo_disabled():
        return read()
    try:
        before = recorded.read_bytes(path)
    except OSError:
        return read()  # it says why, in one line
    request: dict[str, Any] = {"layout": LAYOUT, "path": str(path), "suffix": path.suffix}
    request["sha1"] = recorded.digest(before)
    if macros is not None:  # the @strings inherited from the earlier files of the stream
        request["macros"] = macros
    entry = recorded.memo_path(cache_dir, FOLDER, request)
    payload = recorded.replay(entry, cache_dir)
    if payload is not None:
        with contextlib.suppress(ValidationError, ValueError, TypeError):
            return model.model_validate(payload)
    with recorded.recording() as run:  # (recorders nest: the run around notes it all too)
        result = read()
    with contextlib.suppress(OSError):
        if path.read_bytes() == before:  # not one edited while it was read
            payload = result.model_dump(mode="json")
            recorded.remember(entry, run, payload, MAX_IDLE, cache_dir)
    return result


def load_stream(
    path: Path, cache_dir: Path | None, macros: dict[str, str]
) -> tuple[BibResult, dict[str, str]]:
    """A ``.bib`` read as the next file of one ``\\bibdata`` (BibTeX's one stream of
    ``@string``s): its result and the macro table after it, from the cache when the bytes and
    the inherited ``macros`` were read before."""
    from rwgate.readers.bibliographies.bibtex import read_bib_stream

    path = Path(path)

    def read() -> _Streamed:
        result, after = read_bib_stream(path, macros)
        return _Streamed(result=result, macros=after)

    kept = _remembered(path, cache_dir, macros, _Streamed, read)
    return kept.result, kept.macros


def load_remembered(path: Path, cache_dir: Path | None) -> BibResult:
    """:func:`~rwgate.readers.load_bibliography`, from the cache when ``path``'s bytes were
    read before (``cache_dir`` None: always from the file)."""
    path = Path(path)
    return _remembered(path, cache_dir, None, BibResult, lambda: load_bibliography(path))
