"""The limits an MCP client cannot talk its way past.

An agent passes arguments it may have read from anywhere (a web page, a prompt injection), so
every path is confined to the roots the user chose when starting the server, after resolving
symlinks and ``..``; every list and text has a size bound; and every refusal is one line naming
the argument, which the SDK returns as a tool error instead of a traceback.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path

from rwgate.errors import UsageError
from rwgate.readers.locate import OUTSIDE

MAX_BATCH = 1000
MAX_TEXT_BYTES = 2 * 1024 * 1024
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_MANUSCRIPT_BYTES = 5 * 1024 * 1024
MAX_WORKS = 1000  # works judged per call, whatever the input (text, .bib, a nocite manuscript)
MAX_LIMIT = 1000
MAX_NAME = 300
MAX_QUERY = 1000
MAX_PATH = 4096
_UPDATE_TYPE = re.compile(r"^[a-z][a-z_-]{1,40}$")
_NOT_FOUND = "bibliography file not found: "  # rwgate.readers.manuscripts.manuscript's words


class BadArgument(UsageError):
    """A tool argument that is refused; the message is one line."""


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message: what a tool error may say."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def printable(text: str) -> str:
    """``text`` with line breaks and other control characters escaped, so that an argument
    echoed in a refusal cannot split the tool error into several lines."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class Roots:
    """The folders whose files the tools may read (resolved once, at start-up)."""

    def __init__(self, roots: Sequence[Path]) -> None:
        resolved: list[Path] = []
        for root in roots or [Path.cwd()]:
            path = Path(root).expanduser().resolve()
            if not path.is_dir():
                raise BadArgument(f"--root {root}: not a folder")
            resolved.append(path)
        self.paths = list(dict.fromkeys(resolved))

    def confine(self, raw: str, argument: str = "path") -> Path:
        """The real file ``raw`` names (relative to the first root), if it lies under a root."""
        text = raw.strip()
        if not text or "\x00" in text:
            raise BadArgument(f"{argument}: give a file path")
        if len(text) > MAX_PATH:
            raise BadArgument(f"{argument}: longer than {MAX_PATH} characters")
        shown = printable(text)
        try:
            candidate = Path(text).expanduser()
            if not candidate.is_absolute():
                candidate = self.paths[0] / candidate
            real = candidate.resolve()
            if not any(real.is_relative_to(root) for root in self.paths):
                raise BadArgument(f"{argument}: the file {OUTSIDE}")
            if not real.is_file():
                raise BadArgument(f"{argument}: {shown}: no such file")
            size = real.stat().st_size
        except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop, ...
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "unreadable"
            raise BadArgument(f"{argument}: {shown}: {reason}") from None
        if size > MAX_FILE_BYTES:
            raise BadArgument(f"{argument}: {shown} is {size} bytes; the limit is {MAX_FILE_BYTES}")
        return real

    def hides_a_bibliography(self, problems: Sequence[str], document: Path) -> bool:
        """Is a bibliography ``document`` names "not found" only because its place beside the
        document lies outside the roots (a symlink out)? Pandoc would read it there, so it is
        refused as any path outside is, in the same words whether it exists or not; "not found"
        would say whether it does."""
        for message in problems:
            if message.startswith(_NOT_FOUND):
                written = Path(message[len(_NOT_FOUND) :])
                place = written if written.is_absolute() else document.parent / written
                if not self.allows(place):
                    return True
        return False

    def allows(self, path: Path) -> bool:
        """Does ``path``, symlinks followed, lie under a root? (A path that cannot be resolved,
        such as a symlink loop, does not.)"""
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            return False
        return any(real.is_relative_to(root) for root in self.paths)


def works_within_limit(references: Sequence[object], argument: str) -> None:
    """At most :data:`MAX_WORKS` works per call (30,000 took 80 s and answered 14 MB)."""
    if len(references) > MAX_WORKS:
        raise BadArgument(
            f"{argument}: {len(references)} works; the limit is {MAX_WORKS} per call: "
            "split the bibliography (by chapter or letter) or run `rwgate check` on it"
        )


def text_within_limit(text: str, argument: str) -> None:
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_TEXT_BYTES:
        raise BadArgument(f"{argument}: {size} bytes; the limit is {MAX_TEXT_BYTES}")


def batch_within_limit(items: Sequence[str], argument: str) -> list[str]:
    """At least one value, none too long (the tools' schemas bound the list to MAX_BATCH; the
    ``rwgate://notice`` resource's DOI has no schema)."""
    if not items:
        raise BadArgument(f"{argument}: give at least one value")
    for i, item in enumerate(items):
        if len(item) > MAX_QUERY:
            raise BadArgument(f"{argument}[{i}]: longer than {MAX_QUERY} characters")
    return list(items)


def short_text(value: str | None, argument: str, limit: int = MAX_QUERY) -> str | None:
    if value is None:
        return None
    text = " ".join(value.split())
    if len(text) > limit:
        raise BadArgument(f"{argument}: longer than {limit} characters")
    return text or None


def update_types(values: Sequence[str] | None) -> list[str]:
    """Crossref update types (``retraction``, ``expression_of_concern``, ...), checked."""
    checked = []
    for value in values or []:
        text = value.strip().lower().replace(" ", "_")
        if not _UPDATE_TYPE.match(text):
            raise BadArgument(f"update_types: {value!r} is not an update type such as 'retraction'")
        checked.append(text)
    if len(checked) > 20:
        raise BadArgument("update_types: at most 20 types")
    return list(dict.fromkeys(checked))


def date_text(value: str | None, argument: str) -> str | None:
    if value is None or not value.strip():
        return None
    text = value.strip()
    for form, length in (("%Y-%m-%d", 10), ("%Y-%m", 7), ("%Y", 4)):
        try:
            if len(text) == length:
                dt.datetime.strptime(text, form)
                return text
        except ValueError:
            break
    raise BadArgument(f"{argument}: {value!r} is not a date (YYYY, YYYY-MM or YYYY-MM-DD)")


def year_text(value: int | None, argument: str) -> str | None:
    if value is None:
        return None
    if not 1500 <= value <= 2200:
        raise BadArgument(f"{argument}: {value} is not a plausible year")
    return str(value)
