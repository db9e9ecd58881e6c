"""Parsed bibliographies, remembered by content: a ``.bib`` is decoded once, not on every pass.

A LaTeX build reads its bibliography several times (the BibTeX hook, later passes, the gate after
latexmk), and LaTeX-decoding a 1,300-entry bibliography's titles takes about half a second. So a
reading is kept in the user's cache folder as a memo of :mod:`rwgate.settings.recorded`, named by
the file's path, suffix, digest and (for a file of a ``\\bibdata`` stream, :func:`load_stream`)
the macros it inherits, and replayed only while every input it recorded (the bytes, rwgate's
code) still holds. A file that changed while it was read is not remembered; ``RWGATE_NO_MEMO``
turns it off.
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
