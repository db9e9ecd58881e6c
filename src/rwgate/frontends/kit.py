"""The front-end kit: the one path every front end takes from input to exit code.

    gather references  ->  judge  ->  annotations / failure lines / reports  ->  exit code

``rwgate check``, ``rw-filter``, the LaTeX hooks, ``rw-latexmk``, the MCP server and the language
server all go through these functions, so they cannot disagree on a verdict, on which works get a
note, on how a failing citation is described or on which exit code an error means. Heavy modules
(the models, the core) are imported inside the functions that need them: ``rwgate bibtex`` and
``rw-filter`` start on every build.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate.contract.vocab import FLAGGED_STATUSES, STATUSES
from rwgate.errors import RwgateError
from rwgate.render.emit import write_output

if TYPE_CHECKING:
    from rwgate.contract.models import Citation, CitedDocument, Problem, Reference
    from rwgate.render.annotation import Annotation
    from rwgate.settings.config import Settings
    from rwgate.sources import OpenSources
    from rwgate.sources.interface import Progress
    from rwgate.verdicts.result import CheckResult

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
Judged = tuple["CheckResult", dict[str, "Reference"]]

# The settings the shared flags (add_check_options) carry into the last configuration layer.
_FLAG_KEYS = (
    "policy",
    "fail_on",
    "offline",
    "no_cache",
    "no_memo",
    "cache_dir",
    "snapshot",
    "crossref_url",
    "recover_dois",
    "since",
    "lock",
)


def add_check_options(p: argparse.ArgumentParser) -> None:
    """Flags shared by every command that judges citations (check, verify, latexmk, hooks)."""

    def switch(name: str, text: str | None = None) -> None:
        # None when absent: the setting is left to the configuration (flag_overrides)
        p.add_argument(name, action="store_true", default=None, help=text)

    p.add_argument("--policy", choices=["default", "strict", "permissive"])
    p.add_argument("--fail-on", action="append", choices=STATUSES, metavar="STATUS")
    switch("--offline", "no network: cache/snapshot")
    switch("--no-cache")
    switch("--no-memo", "replay no remembered verdict or parsed bibliography (as RWGATE_NO_MEMO=1)")
    p.add_argument("--cache-dir", type=Path)
    p.add_argument("--snapshot", type=Path, help="Retraction Watch snapshot (SQLite)")
    p.add_argument("--crossref-url")
    switch("--recover-dois", "look up entries without a DOI by title; judge verified matches")


def flag_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Command-line flags as the last configuration layer."""
    return {k: getattr(args, k) for k in _FLAG_KEYS if getattr(args, k, None) is not None}


# --- judge -------------------------------------------------------------------------------------


def judge(
    references: Sequence[Reference],
    settings: Settings,
    problems: Sequence[Problem] = (),
    progress: Progress | None = None,
    sources: OpenSources | None = None,
) -> CheckResult:
    """The verdict on ``references``: the core's one batched check, then the lockfile's."""
    from rwgate.core import check

    warnings: list[str] = list(settings.warnings)  # keys a document set that it may not
    result = check(references, settings, progress, problems, sources, warnings=warnings)
    offline_hint(result, settings)
    return against_lock(result, settings)


def offline_hint(result: CheckResult, settings: Settings) -> None:
    """Offline without a snapshot, one warning says how to check the works not in the cache."""
    if not settings.offline or any(s.name == "snapshot" for s in result.sources):
        return
    from rwgate.sources.cache import OFFLINE

    stuck = sum(c.status == "unverified" and OFFLINE in (c.reason or "") for c in result.citations)
    if not stuck:
        return
    from rwgate.settings.paths import default_snapshot_path

    where = Path(settings.snapshot or default_snapshot_path())
    if where.is_file():
        return  # a snapshot that would not open has its own warning
    works = "1 work" if stuck == 1 else f"{stuck} works"
    result.warnings.append(
        f"offline, and no Retraction Watch snapshot at {where}: {works} not in the cache could "
        "not be checked; `rwgate data update` downloads the registry once, then checks run offline"
    )


def against_lock(result: CheckResult, settings: Settings) -> CheckResult:
    """With the ``since`` setting, ``result`` compared with that lockfile: only what changed
    gates. A lockfile not written yet counts as empty (everything is new)."""
    if settings.since is None:
        return result
    from rwgate.verdicts.lock import read_lock, since

    works = read_lock(settings.since)
    if works is None:
        result.warnings.append(f"{settings.since}: no lockfile yet: every citation counts as new")
    return since(result, works or {}, str(settings.since))


def record_lock(result: CheckResult, settings: Settings) -> None:
    """Write the ``lock`` setting's lockfile. Only a build's last step does (never the LaTeX
    hooks, mid-build), so its final gate compares with the lock the build started from."""
    if settings.lock is not None:
        from rwgate.verdicts.lock import render_lock

        write_output(settings.lock, render_lock(result))


def judge_document(
    doc: CitedDocument, settings: Settings, sources: OpenSources | None = None
) -> Judged:
    """The verdict on what a manuscript cites, and its references by key (for placement).
    Parsed bibliographies are remembered in the cache folder (a memo: not with ``no_cache`` or
    ``no_memo``)."""
    from rwgate.readers.join import cited_references

    memo = not (settings.no_cache or settings.no_memo)
    bib = cited_references(doc, settings.cache_folder if memo else None)
    result = judge(bib.references, settings, bib.problems, sources=sources)
    return result, {ref.key: ref for ref in bib.references}


def judge_documents(docs: Sequence[CitedDocument], settings: Settings) -> list[Judged]:
    """:func:`judge_document` for each of ``docs`` (a build's main document and its parts), the
    sources opened once for all; whether every source answered (:attr:`CheckResult.complete`)
    is said of them all (one build is remembered as one)."""
    from rwgate.sources import open_sources

    with closing(open_sources(settings)) as sources:
        judged = [judge_document(doc, settings, sources) for doc in docs]
    for result, _ in judged:
        result.complete = not sources.failed
    return judged


# --- what to show ------------------------------------------------------------------------------


def should_annotate(citation: Citation) -> bool:
    """Flagged works the policy annotates or fails (an allowed work is annotated, never failed)."""
    return citation.status in FLAGGED_STATUSES and citation.action in ("annotate", "fail")


def annotations_for(citations: Sequence[Citation], template: str | None) -> dict[str, Annotation]:
    """Key -> annotation of every work that gets a note (raises ConfigError for a bad template)."""
    from rwgate.render.annotate import annotate

    return {c.key: annotate(c, template) for c in citations if should_annotate(c)}


def describe(citation: Citation, detail: bool = False) -> str:
    """``KEY: retracted 2010, notice doi:...``: one terminal-safe line about one citation, in
    the words of the annotation; ``detail`` adds what a LaTeX user needs to find the entry
    (published year, DOI, the ``.bib`` file:line)."""
    from rwgate.contract.vocab import status_label
    from rwgate.render.annotate import deciding_notice, preprint_values
    from rwgate.render.safe import term_safe

    said = status_label(citation.status)
    notice = deciding_notice(citation)
    if notice is not None and citation.status == "unknown_notice":
        said += f" '{notice.type}'"  # verbatim, as the annotation shows it
    if notice is not None and notice.date:
        said += f" {notice.date.year}"
    preprint = preprint_values(citation, notice)  # the note's words for a preprint
    if preprint["notice_record"] and not (notice and notice.doi):
        said += f" ({preprint['notice_record']})"
        said += f": {preprint['notice_reason']}" if preprint["notice_reason"] else ""
    parts: list[str] = [said]
    if notice is not None and notice.doi:
        parts.append(f"notice doi:{notice.doi}")
    if preprint["published_doi"]:
        parts.append(f"published as doi:{preprint['published_doi']}")
    if citation.allowed:
        parts.append("allowed")
    text = f"{citation.key}: {', '.join(parts)}"
    if citation.reason and notice is None:
        text += f" ({citation.reason})"
    if detail:
        extra = [f"published {citation.year}"] if citation.year else []
        if citation.doi:
            extra.append(f"doi:{citation.doi}")
        extra.append(str(citation.location) if citation.location else "no .bib location")
        text += "; " + "; ".join(extra)
    return term_safe(text)


def failure_lines(result: CheckResult, detail: bool = False) -> list[str]:
    return [describe(c, detail) for c in result.citations if c.action == "fail"]


# --- outputs and exit codes --------------------------------------------------------------------


def print_error(prog: str, exc: BaseException) -> int:
    """``PROG: error: MESSAGE`` on one line; returns 2 for an RwgateError, 3 for a bug."""
    from rwgate.render.safe import term_safe

    code = exc.exit_code if isinstance(exc, RwgateError) else EXIT_INTERNAL
    label = "error" if code != EXIT_INTERNAL else f"internal error ({type(exc).__name__})"
    print(f"{prog}: {label}: {term_safe(exc)}", file=sys.stderr)
    return code


# --- sources kept open (a front end that lives: the language server) ---------------------------


SAME_VERDICT_SECONDS = 30.0
"""How long :class:`KeptSources` gives an unchanged document its last verdict again."""


class KeptSources:
    """The sources opened once and kept open across checks, for a front end that judges again
    on every keystroke (``rwgate lsp``): opening and closing the snapshot and the look-up cache
    was half of a pass. They are opened again when the settings that chose them change or the
    snapshot on disk is another file (``rwgate data update``); :meth:`close` at the end of the
    front end's life. Not shared between threads: each worker keeps its own."""

    def __init__(self) -> None:
        self._sources: OpenSources | None = None
        self._identity: tuple[object, ...] | None = None
        self._last: tuple[tuple[object, ...], float, Judged] | None = None

    def judge_document(self, doc: CitedDocument, settings: Settings) -> Judged:
        """:func:`judge_document` with the kept sources. Most keystrokes cite no other key: the
        same document under the same settings, snapshot and bibliography files gets the last
        verdict again, for at most :data:`SAME_VERDICT_SECONDS` (a verdict may expire; the cache
        may learn from another run) and until :meth:`forget`. Callers must not modify it."""
        identity = _document_identity(doc, settings)
        last = self._last
        if last and last[0] == identity and time.monotonic() - last[1] < SAME_VERDICT_SECONDS:
            return last[2]
        self._last = None
        sources = self._open(settings)
        try:
            result, refs = judge_document(doc, settings, sources)
        except BaseException:
            self.close()  # a source in an unknown state is not kept
            raise
        judged = (self._after(result, sources), refs)
        self._last = (identity, time.monotonic(), judged)
        return judged

    def forget(self) -> None:
        """Judge afresh next time (the cache learnt answers, a file was saved); thread-safe."""
        self._last = None

    def judge(
        self, references: Sequence[Reference], settings: Settings, problems: Sequence[Problem] = ()
    ) -> CheckResult:
        """:func:`judge` with the kept sources."""
        sources = self._open(settings)
        try:
            result = judge(references, settings, problems, sources=sources)
        except BaseException:
            self.close()
            raise
        return self._after(result, sources)

    def close(self) -> None:
        self._last = None
        if self._sources is not None:
            self._sources.close()
        self._sources, self._identity = None, None

    def _open(self, settings: Settings) -> OpenSources:
        identity = (settings.model_dump_json(), _file_identity(settings.snapshot))
        if self._sources is None or identity != self._identity:
            from rwgate.sources import open_sources

            self.close()
            self._sources, self._identity = open_sources(settings), identity
        sources = self._sources
        # What one check says of its look-ups (failures, expiries) is said of that check alone.
        sources.any_error, sources.first_end = False, float("inf")
        sources.tally, sources.titles_asked = {}, False
        return sources

    def _after(self, result: CheckResult, sources: OpenSources) -> CheckResult:
        result.complete = not sources.failed
        if sources.cache.warning is not None:  # a cache that gave out is opened afresh next time
            self.close()
        return result


def _file_identity(snapshot: Path | None) -> tuple[object, ...] | None:
    """Which file the snapshot is: another when replaced."""
    from rwgate.settings.paths import default_snapshot_path

    return _stat(Path(snapshot or default_snapshot_path()))


def _stat(path: Path) -> tuple[object, ...] | None:
    """(device, inode, size, modification) of ``path``, None when it is not there."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


def _document_identity(doc: CitedDocument, settings: Settings) -> tuple[object, ...]:
    """Everything a document's verdict is judged from but the cache and the clock."""
    files: list[str] = []
    stack = [doc]
    while stack:
        part = stack.pop()
        files += part.bibliographies
        stack += part.parts
    stats = tuple((f, _stat(Path(f))) for f in files)
    snapshot = _file_identity(settings.snapshot)
    return (doc.model_dump_json(), settings.model_dump_json(), snapshot, stats)
