"""Downloading the Retraction Watch CSV: streamed, resumable, conditional.

The full export is ~67 MB and changes daily, so the download must not start over after a dropped
connection (a ``.part`` file plus a ``Range``/``If-Range`` request picks up where it stopped) and
must not fetch or re-import an unchanged file (``If-None-Match``/``If-Modified-Since`` from the
last import's provenance). Without network it fails within the connect timeout with a one-line
message instead of hanging. httpx is imported inside :func:`download` so that commands that never
download do not pay for it.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rwgate.errors import DataError

CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 60.0
MAX_BYTES = 1 << 30
"""The export is ~70 MB: a body past 1 GiB (decompressed) is a compression bomb, not the export."""


class DownloadError(DataError):
    """The download failed; the message is one line naming the URL and what to do."""


@dataclass
class Downloaded:
    """A finished download (``path``) or a server's "not modified" (``path`` is ``None``)."""

    path: Path | None
    etag: str | None = None
    last_modified: str | None = None
    resumed_from: int = 0


def part_paths(url: str, directory: Path) -> tuple[Path, Path]:
    """The partial file and its validators sidecar for ``url`` (one pair per URL)."""
    tag = hashlib.sha256(url.encode()).hexdigest()[:12]
    part = directory / f".rwgate-download-{tag}.csv.part"
    return part, part.with_name(part.name + ".json")


def discard_part(url: str, directory: Path) -> None:
    for path in part_paths(url, directory):
        path.unlink(missing_ok=True)


class TerminalProgress:
    """A one-line progress bar on stderr; silent unless stderr is a terminal."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()

    def __call__(self, done: int, total: int | None) -> None:
        if not self.enabled:
            return
        mb = done / 1e6
        text = (
            f"{mb:.1f}/{total / 1e6:.1f} MB ({100 * done // total}%)" if total else f"{mb:.1f} MB"
        )
        self.stream.write(f"\rdownloading: {text}  ")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _validators(sidecar: Path) -> dict[str, str | None]:
    """The ETag/Last-Modified saved beside a ``.part``; empty when missing or damaged."""
    try:
        saved = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(saved, dict):
        return {}
    return {k: v for k, v in saved.items() if k in ("etag", "last_modified") and isinstance(v, str)}


def _resume_headers(part: Path, sidecar: Path) -> tuple[dict[str, str], int]:
    """Range headers for an unfinished ``.part``; a part without validators is started over."""
    offset = part.stat().st_size if part.exists() else 0
    validator = None
    if offset and sidecar.exists():
        saved = _validators(sidecar)
        validator = saved.get("etag") or saved.get("last_modified")
    if not offset or not validator:
        return {}, 0
    return {"Range": f"bytes={offset}-", "If-Range": validator}, offset


def download(
    url: str,
    directory: Path,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> Downloaded:
    """Fetch ``url`` into a ``.part`` file in ``directory`` (the snapshot's: the rename is cheap).

    ``etag``/``last_modified`` are the validators of the last import; when the server says
    "not modified", nothing is downloaded. Raises :class:`DownloadError`; an interrupted transfer
    keeps its ``.part`` file so the next call resumes it.
    """
    import httpx

    directory.mkdir(parents=True, exist_ok=True)
    part, sidecar = part_paths(url, directory)
    headers, offset = _resume_headers(part, sidecar)
    if not offset:
        headers.update({"If-None-Match": etag} if etag else {})
        headers.update({"If-Modified-Since": last_modified} if last_modified else {})
    headers["User-Agent"] = "rwgate"
    timeout = httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT)
    try:
        with (
            httpx.Client(
                timeout=timeout,
                follow_redirects=True,
                max_redirects=3,
                event_hooks={"request": [_same_host_only(url)]},
            ) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            return _receive(response, url, part, sidecar, offset, progress)
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        raise DownloadError(f"cannot download {url!r}: {exc}") from None
    except httpx.ConnectError as exc:
        raise DownloadError(f"cannot reach {url} ({exc or 'connection failed'})") from None
    except httpx.TimeoutException:
        raise DownloadError(f"{url}: timed out; check the network and try again") from None
    except httpx.HTTPError as exc:
        size = part.stat().st_size if part.exists() else 0
        raise DownloadError(
            f"download of {url} interrupted after {size} bytes ({exc or type(exc).__name__}); "
            "run `rwgate data update` again to resume"
        ) from None


def _same_host_only(origin: str) -> Callable[[Any], None]:
    """A request hook: a redirect is followed only to the same scheme and host, so the export
    comes from the server the user named, not from wherever an answer points. (A request hook,
    because httpx builds the redirect's request only after the response hooks have run.)"""
    import httpx

    first = httpx.URL(origin)

    def check(request: Any) -> None:
        if (request.url.scheme, request.url.host) != (first.scheme, first.host):
            raise DownloadError(f"{origin}: redirect to another host ({request.url.host}) refused")

    return check


def _receive(
    response: Any,
    url: str,
    part: Path,
    sidecar: Path,
    offset: int,
    progress: Callable[[int, int | None], None] | None,
) -> Downloaded:
    status = response.status_code
    etag = response.headers.get("etag")
    modified = response.headers.get("last-modified")
    if status == 304:
        return Downloaded(path=None, etag=etag, last_modified=modified)
    saved = _validators(sidecar)
    if status == 416 and offset:
        # Complete only if the server says the file is exactly the bytes held (``bytes */N``);
        # any other 416 means the part is not a prefix of today's file: start over.
        if _range_total(response.headers.get("content-range")) == offset and saved.get("etag"):
            return Downloaded(part, saved.get("etag"), saved.get("last_modified"), offset)
        discard_part(url, part.parent)
        raise DownloadError(f"{url}: the server refused to resume the download; run again")
    if status == 206 and (not saved.get("etag") or etag != saved["etag"]):
        # Resuming is only safe with a strong validator the server confirms: without it a server
        # that ignores If-Range would splice the old export and a new one.
        discard_part(url, part.parent)
        raise DownloadError(f"{url}: the server did not confirm the file it resumes; run again")
    if status == 206 and _range_start(response.headers.get("content-range")) == offset:
        mode = "ab"
    elif status == 206:
        discard_part(url, part.parent)
        raise DownloadError(f"{url}: the server resumed at the wrong offset; run again to restart")
    elif status == 200:
        mode, offset, saved = "wb", 0, {}
        sidecar.write_text(json.dumps({"etag": etag, "last_modified": modified}), encoding="utf-8")
    else:
        raise DownloadError(f"{url}: HTTP {status} {response.reason_phrase}".rstrip())
    length = response.headers.get("content-length")
    total = offset + int(length) if length and length.isdigit() else None
    done = offset
    with part.open(mode) as handle:
        for chunk in response.iter_bytes():
            handle.write(chunk)
            done += len(chunk)
            if done > MAX_BYTES:
                break
            if progress:
                progress(done, total)
    if done > MAX_BYTES:
        discard_part(url, part.parent)
        raise DownloadError(
            f"{url}: more than {MAX_BYTES >> 20} MiB; not a Retraction Watch export"
        )
    sent = response.num_bytes_downloaded  # as sent (compressed or not): what Content-Length counts
    if length and length.isdigit() and sent != int(length):
        raise DownloadError(
            f"{url}: received {sent} of {length} bytes; run `rwgate data update` again to resume"
        )
    return Downloaded(
        part, saved.get("etag") or etag, saved.get("last_modified") or modified, offset
    )


def _range_total(content_range: str | None) -> int | None:
    """The length of the whole file in ``Content-Range: bytes */TOTAL`` (or ``START-END/TOTAL``)."""
    total = (content_range or "").rpartition("/")[2].strip()
    return int(total) if total.isdigit() else None


def _range_start(content_range: str | None) -> int | None:
    """The first byte of ``Content-Range: bytes START-END/TOTAL``."""
    if not content_range or not content_range.startswith("bytes "):
        return None
    start = content_range[6:].split("-", 1)[0]
    return int(start) if start.isdigit() else None
