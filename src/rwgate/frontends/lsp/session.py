"""The server's memory between messages, without the protocol: the open manuscripts as the build
reads them, each document's last verdicts, and what each file shows: the union of what every pass
said about it (a ``.bib`` shows the verdicts of every open manuscript citing from it).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Container, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate.errors import RwgateError
from rwgate.frontends.kit import KeptSources
from rwgate.frontends.lsp import analysis
from rwgate.frontends.lsp.analysis import Manuscript, Note, Said, Verdicts

if TYPE_CHECKING:
    from rwgate.settings.config import Settings

TextOf = Callable[[str], str | None]
"""An open buffer's text by absolute path (None when the file is not open in the editor)."""


class Session:
    """State shared by the passes; the lock keeps a pass's reads and writes of it whole (the
    offline and network passes run on worker threads)."""

    def __init__(self, overrides: Mapping[str, Any], text_of: TextOf) -> None:
        self.overrides = dict(overrides)
        self.text_of = text_of
        self.manuscripts: dict[str, Manuscript | Exception] = {}
        self.verdicts: dict[str, Verdicts] = {}
        self.shown: dict[str, dict[str, list[Note]]] = {}  # file -> origin document -> notes
        self.lock = threading.RLock()
        self.kept = KeptSources()
        """The offline passes' sources, open for the server's life (closed at shutdown)."""
        self.files: dict[str, tuple[tuple[int, int, int], list[str]]] = {}
        """Saved files' lines, by their modification time, size and inode."""
        self.said = Said()
        """What the offline passes' last verdict says (those passes run on one worker)."""

    # --- reading -----------------------------------------------------------------------------

    def lines(self, path: str) -> list[str]:
        """A file's lines as the editor has them: its buffer when open, else the saved file's
        (the same list while the file is unchanged on disk: callers do not modify it)."""
        text = self.text_of(path)
        if text is not None:
            return text.splitlines()
        state = os.stat(path)
        stamp = (state.st_mtime_ns, state.st_size, state.st_ino)
        known = self.files.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        lines = Path(path).read_bytes().decode("utf-8", "replace").splitlines()
        self.files[path] = (stamp, lines)
        return lines

    def lines_cache(self) -> Callable[[str], list[str]]:
        """:meth:`lines`, each file split once (for one pass or one publication: a manuscript
        of 10,000 words is split once, not once per diagnostic)."""
        return functools.cache(self.lines)

    def forget(self, path: str) -> None:
        """Read the saved manuscript again at the next pass (opened, saved, or its config)."""
        with self.lock:
            self.manuscripts.pop(path, None)
        self.kept.forget()

    def _manuscript(self, path: Path) -> Manuscript:
        key = str(path)
        with self.lock:
            known = self.manuscripts.get(key)
        if known is None:
            try:
                known = analysis.read_manuscript_file(path)
            except (RwgateError, OSError, ValueError) as exc:
                known = exc
            with self.lock:
                self.manuscripts[key] = known
        if isinstance(known, Exception):
            raise known
        return known

    def settings(self, path: Path, metadata: Mapping[str, Any] | None, offline: bool) -> Settings:
        """The build's settings for ``path`` (``rwgate check``'s layers and the server's flags);
        ``offline``: the first pass, from the snapshot and the cache alone."""
        from rwgate.settings.config import load_settings

        settings = load_settings(
            path,
            overrides=self.overrides,
            metadata=metadata,
            metadata_name=f"{path}: rwgate metadata",
        )
        return settings.model_copy(update={"offline": True}) if offline else settings

    def wants_network(self, path: Path) -> bool:
        """Whether the user's settings allow the network (then a later pass asks it)."""
        try:
            return not self.settings(path, None, offline=False).offline
        except RwgateError:
            return False

    # --- judging -----------------------------------------------------------------------------

    def judge(self, path: Path, text: str, offline: bool) -> Verdicts:
        """One pass over the document at ``path`` whose buffer holds ``text``. Never raises for
        the user's input: what cannot be read is a diagnostic saying so."""
        from rwgate.readers.bibliographies.registry import is_manuscript

        lines = self.lines_cache()
        # Offline passes (one worker) keep their sources open; a network pass, a second apart,
        # opens its own, so what its sources say of their look-ups is said of that pass alone.
        kept = self.kept if offline else None
        try:
            if is_manuscript(path):
                manuscript = self._manuscript(path)
                settings = self.settings(path, manuscript.doc.metadata, offline)
                said = self.said if offline else None
                return analysis.judge_manuscript(manuscript, text, settings, lines, kept, said)
            settings = self.settings(path, None, offline)
            return analysis.judge_bibliography(path, text, settings, lines, kept)
        except (RwgateError, OSError, ValueError) as exc:
            return analysis.unreadable(path, exc)
        finally:
            if not offline:  # its answers are in the cache now: the next offline pass sees them
                self.kept.forget()

    def record(self, verdicts: Verdicts) -> list[str]:
        """Keep ``verdicts`` as its document's latest; the files whose diagnostics changed."""
        origin = str(verdicts.path)
        by_file: dict[str, list[Note]] = {}
        for note in verdicts.notes:
            by_file.setdefault(note.place.path, []).append(note)
        with self.lock:
            self.verdicts[origin] = verdicts
            changed = self._unshow(origin, by_file)
            for file, notes in by_file.items():
                self.shown.setdefault(file, {})[origin] = notes
            return sorted({*changed, *by_file})

    def close(self, path: str) -> list[str]:
        """A document closed: its own verdicts go; the files it spoke about are shown again."""
        with self.lock:
            self.verdicts.pop(path, None)
            self.manuscripts.pop(path, None)
            return self._unshow(path)

    def _unshow(self, origin: str, kept: Container[str] = ()) -> list[str]:
        """Forget what ``origin`` said about each file but ``kept``; those files."""
        changed = [f for f, notes in self.shown.items() if origin in notes and f not in kept]
        for file in changed:
            del self.shown[file][origin]
        return changed

    def notes_for(self, path: str) -> list[Note]:
        """What the file at ``path`` shows: every open document's notes about it, once each."""
        with self.lock:
            origins = dict(self.shown.get(path, {}))
        first: dict[tuple[object, ...], Note] = {}
        for notes in origins.values():
            for note in notes:
                first.setdefault((note.place, note.message, note.severity), note)
        return list(first.values())

    def citing(self, path: str) -> list[str]:
        """The other documents whose last pass found entries of the works they cite in the file
        at ``path`` (a bibliography: saved, it changes their verdicts)."""
        with self.lock:
            return [
                origin
                for origin, verdicts in self.verdicts.items()
                if origin != path and any(p.path == path for p in verdicts.entries.values())
            ]

    def citation_at(self, path: str, line: int, column: int) -> tuple[Verdicts, Any] | None:
        """The verdicts and the verdict on the key under the cursor in ``path``: from the file's
        own pass, else from a manuscript that cites the entry written there."""
        with self.lock:
            candidates = [self.verdicts[path]] if path in self.verdicts else []
            candidates += [v for p, v in self.verdicts.items() if p != path]
        for verdicts in candidates:
            if str(verdicts.path) == path:
                found = verdicts.citation_at(line, column)
            else:  # an entry written here, of a work that manuscript cites
                entries = verdicts.entries.items()
                keys = [k for k, p in entries if p.path == path and p.span.contains(line, column)]
                found = verdicts.citations.get(keys[0]) if keys else None
            if found is not None:
                return verdicts, found
        return None
