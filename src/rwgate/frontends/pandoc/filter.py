"""``rw-filter``: the pandoc JSON filter that annotates flagged references or stops the build.

pandoc runs it as ``rw-filter FORMAT`` with the document's JSON AST on stdin and expects the
(possibly changed) AST on stdout; a non-zero exit makes pandoc stop and write nothing, which is how
the gate works. The filter is only an adapter: it reads the cited keys and bibliographies from the
AST exactly as ``rwgate check`` does
(:func:`rwgate.readers.manuscripts.manuscript.document_from_ast`), asks the core for every verdict
in one batched call, and renders the result as AST elements.

The rule, whatever the pipeline (:mod:`rwgate.frontends.pandoc.render`): a flagged work that the
output shows carries its notice, or the build stops. The notice goes into its rendered bibliography
entry (``--citeproc`` before the filter); where there is none (the filter before citeproc,
``suppress-bibliography``, ``--natbib``/``--biblatex``, whose list BibTeX or biber formats later,
with a style that may never print ``note``) it follows each citation of the work, in every format,
LaTeX included (and, in LaTeX, also goes into a shadow .bib's ``note``). A work whose notice can go
nowhere the output shows it (cited only through ``nocite`` with no rendered entry; ``-t csljson``)
stops the build, exit 1, with an ``ERROR`` line saying which pipeline shows it; an allowed work gets
a ``WARNING`` line instead and never fails. Each annotated work gets one line saying where its
notice went (``(notice after each citation)``), said after the placement, never before it.

pandoc tells a JSON filter neither the input file nor ``--resource-path``, so bibliography paths
and the configuration file are looked up from the working directory (plus
``RWGATE_RESOURCE_PATH``). Startup time matters because the filter runs on every build: heavy
modules are imported only on the path that needs them, and a document with nothing to annotate is
passed through byte for byte without being parsed into panflute objects.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate.errors import RwgateError, UsageError
from rwgate.frontends.pandoc.log import announce, lines_since, mark, say, write_line
from rwgate.frontends.pandoc.lua import lua_answer, lua_entries, store_for_lua
from rwgate.frontends.pandoc.memo import (
    DOCUMENT,
    MEMO_DIR,
    Verdict,
    request,
    resource_path,
    verdict_of,
)
from rwgate.frontends.pandoc.printed import (
    Entry,
    printed_entries,
    request_part,
    unverifiable_line,
    verify,
)
from rwgate.readers.pandoc_exe import check_filter_env
from rwgate.settings import recorded

if TYPE_CHECKING:
    from rwgate.contract.models import CitedDocument, Reference
    from rwgate.frontends.pandoc.render import Mode, Shadowing
    from rwgate.render.annotation import Annotation
    from rwgate.settings.config import Settings
    from rwgate.verdicts.result import CheckResult


class FilterError(UsageError):
    """Bad input or configuration: reported as one ``rw-filter: ERROR:`` line, exit status 2."""


def _parse(source: bytes) -> dict[str, Any]:
    try:
        ast = json.loads(source)
    except ValueError as exc:
        raise FilterError(f"stdin is not a pandoc JSON document ({exc})") from None
    except RecursionError:
        raise FilterError("the document is nested too deeply to be checked") from None
    if not isinstance(ast, dict) or "blocks" not in ast or "pandoc-api-version" not in ast:
        raise FilterError("stdin is not a pandoc JSON document (run me as `pandoc --filter`)")
    return ast


def bibliography_files(ast: dict[str, Any], resource_path: list[Path]) -> list[tuple[str, str]]:
    """Each ``bibliography`` name as written, with the file it resolves to ("" if none)."""
    from rwgate.readers.manuscripts.manuscript import resolve_bibliography
    from rwgate.readers.manuscripts.pandoc_ast import bibliography_paths

    return [
        (name, str(resolve_bibliography(name, DOCUMENT, resource_path) or ""))
        for name in bibliography_paths(ast)
    ]


def report_messages(result: CheckResult, verbose: bool = False) -> None:
    """Warnings for problems, source trouble and every citation the policy warns about (entries
    without a DOI as one summary line unless ``verbose``); a work to annotate is said here only
    when the build stops, else once its notice is placed (:func:`announce`)."""
    from rwgate.frontends.kit import describe
    from rwgate.render.report import no_doi_summary, unlisted_no_doi

    for problem in result.problems:
        say("WARNING", str(problem))
    for warning in result.warnings:
        say("WARNING", warning)
    summary = None if verbose else no_doi_summary(result.citations, "RWGATE_VERBOSE=1")
    if summary is not None:
        say("WARNING", summary)
    for citation in result.citations:
        if summary is not None and unlisted_no_doi(citation):
            continue
        if citation.action == "warn" or (citation.action == "annotate" and result.exit_code):
            say("WARNING", describe(citation))


@dataclass
class Run:
    """One full run as it goes through the three phases (:meth:`Filter.check_document`)."""

    settings: Settings
    cited: CitedDocument
    bookmark: int
    result: CheckResult | None = None
    refs: dict[str, Reference] = field(default_factory=dict)
    verdict: Verdict | None = None
    """What to remember (None: :func:`rwgate.verdicts.remembered.refusal` says it may not be)."""


@dataclass(frozen=True)
class Filter:
    """One rw-filter run, chosen once from its arguments (:meth:`of`): the output format, the
    environment (every read recorded), and who runs it: pandoc, or the Lua filter, which may ask
    for the ``verdicts`` only and name a ``memo`` of its own (:mod:`.lua`). The phases read the
    mode here: it is never a parameter handed on from one function to the next."""

    fmt: str
    env: Mapping[str, str]
    verdicts: bool = False
    memo: Path | None = None

    @classmethod
    def of(cls, args: Sequence[str], env: Mapping[str, str]) -> Filter:
        """From ``FORMAT [--verdicts] [--lua-memo FILE]`` (pandoc itself passes the format
        alone; the other two are the Lua filter's)."""
        fmt, options = (args[0], list(args[1:])) if args else ("html", [])
        rest = [a for a in options if a != "--verdicts"]
        memo = Path(rest[1]) if len(rest) == 2 and rest[0] == "--lua-memo" else None
        return cls(fmt, recorded.environ(env), "--verdicts" in options, memo)

    def untouched(self, source: bytes) -> bytes:
        """The answer that leaves the document as it came."""
        return lua_answer({}, {}) if self.verdicts else source

    def process(self, source: bytes) -> tuple[int, bytes | None]:
        """Filter one document: (exit status, output AST or None when the gate stops the build),
        replayed from the memo or run and remembered (:mod:`rwgate.verdicts.remembered`)."""
        from rwgate.readers.manuscripts.pandoc_ast import cited_keys
        from rwgate.verdicts.remembered import door, memo_base, through

        ast = _parse(source)
        keys = cited_keys(ast)  # one walk of the document for the memo's name and the check
        printed = printed_entries(ast)
        asked = request(ast, self.fmt, keys, request_part(printed))
        entry = None if asked is None else door(memo_base(self.env), MEMO_DIR, asked)

        def for_lua(run: recorded.Recorder, payload: Any) -> None:
            verdict = verdict_of(payload)
            if self.memo is not None and verdict is not None:
                store_for_lua(self.memo, run, verdict)

        return through(
            entry,
            lambda data: replay(data, source, self.fmt),
            lambda: self.check_document(ast, source, keys, printed),
            for_lua if self.memo is not None else None,
        )

    def check_document(
        self, ast: dict[str, Any], source: bytes, keys: list[str], printed: list[Entry]
    ) -> tuple[tuple[int, bytes | None], dict[str, Any] | None]:
        """The full run in three phases: ((status, output AST or None), payload to remember)."""
        run = self.prepare(ast, keys)
        if not run.cited.keys and not run.cited.cite_all and run.settings.report is None:
            run.verdict = self._verdict(run, 0, None)  # nothing to judge: as it came
            return (0, self.untouched(source)), _payload(run.verdict)
        result = self.judge(run)
        if not verify_printed(run, printed):
            return (result.exit_code or 1, None), None
        if result.exit_code != 0:
            return (result.exit_code, None), _payload(run.verdict)
        output = self.finalize(run, ast, source)
        if output is None:
            return (1, None), None
        return (0, output), _payload(run.verdict)

    def prepare(self, ast: dict[str, Any], keys: list[str]) -> Run:
        """Phase 1: the settings (defaults < rwgate.toml/pyproject.toml upward from the working
        directory < env < metadata) and what the document cites (no source asked yet)."""
        from rwgate.readers.manuscripts.manuscript import document_from_ast
        from rwgate.readers.manuscripts.pandoc_ast import rwgate_block_malformed, rwgate_metadata
        from rwgate.settings.config import ConfigError, load_settings

        bookmark = mark()
        if rwgate_block_malformed(ast):
            raise FilterError("metadata rwgate: must be a map (e.g. rwgate: {policy: strict})")
        try:
            settings = load_settings(Path.cwd(), env=self.env, metadata=rwgate_metadata(ast))
        except ConfigError as exc:
            raise FilterError(str(exc)) from None
        cited = document_from_ast(ast, DOCUMENT, resource_path(self.env), keys=keys)
        return Run(settings, cited, bookmark)

    def judge(self, run: Run) -> CheckResult:
        """Phase 2: the verdict on every cited work (one batched core call, as ``rwgate
        check``), its messages, report and lockfile, and whether it may be remembered."""
        from rwgate.frontends.kit import failure_lines, judge_document, record_lock
        from rwgate.render.emit import write_output

        settings = run.settings
        result, run.refs = judge_document(run.cited, settings)
        report_messages(result, verbose=self.env.get("RWGATE_VERBOSE", "") not in ("", "0"))
        for line in failure_lines(result) if result.exit_code else ():
            say("ERROR", line)
        report = None
        if settings.report is not None:
            report = result.report().to_json() + "\n"
            write_output(settings.report, report)
        record_lock(result, settings)
        run.result = result
        run.verdict = self._verdict(run, result.exit_code, report)
        return result

    def finalize(self, run: Run, ast: dict[str, Any], source: bytes) -> bytes | None:
        """Phase 3: the notices placed (here, or by the Lua filter when it can and asked); the
        output, or None when a flagged work would be shown without its notice (exit 1)."""
        from rwgate.frontends.kit import annotations_for

        assert run.result is not None
        fmt, inline = self.fmt, run.settings.inline
        annotations = annotations_for(run.result.citations, run.settings.template)
        if not annotations:
            return self.untouched(source)
        entries = lua_entries(ast, fmt, annotations, inline) if self.verdicts else None
        if entries is not None:
            placed = {key: "in its bibliography entry" for key in annotations}
            announce(run.result.citations, placed, fmt, "")
            _placed(run.verdict, run.bookmark, annotations, "entries", None, False)
            return lua_answer(annotations, entries)
        from rwgate.frontends.pandoc.render import load, place, placement_mode, write_shadows

        doc = load(source, fmt)
        mode = placement_mode(doc, fmt)
        shadowing, complete = None, True
        if mode == "shadow":
            files = bibliography_files(ast, resource_path(self.env))
            shadowing, complete = write_shadows(annotations, run.refs, files)
        placement = place(doc, mode, annotations, shadowing, inline)
        for line in placement.messages:
            write_line(line)
        if announce(run.result.citations, placement.placed, fmt, mode):
            return None
        if complete:
            _placed(run.verdict, run.bookmark, annotations, mode, shadowing, inline)
        else:
            run.verdict = None  # a shadow .bib not written: the next build tries again
        return placement.output

    def _verdict(self, run: Run, code: int, report: str | None) -> Verdict | None:
        """What to remember of a full run: None when :func:`rwgate.verdicts.remembered.refusal`
        says it may not be. rw-filter replays a failing verdict and a report."""
        from rwgate.verdicts.remembered import memo_base, refusal

        settings = run.settings
        base = memo_base(self.env)
        if refusal(settings, run.result, base, replays_failure=True, replays_report=True):
            return None
        return Verdict(
            exit_code=code,
            lines=lines_since(run.bookmark),
            report_path=str(settings.report) if settings.report is not None else None,
            report_text=report,
        )


def _placed(
    verdict: Verdict | None,
    bookmark: int,
    annotations: dict[str, Annotation],
    mode: Mode,
    shadowing: Shadowing | None,
    inline: bool,
) -> None:
    """Note in the verdict to remember where the notices went, and every line said so far."""
    if verdict is not None:
        verdict.lines = lines_since(bookmark)
        verdict.annotations, verdict.mode = annotations, mode
        verdict.shadowing, verdict.inline = shadowing, inline


def verify_printed(run: Run, printed: list[Entry]) -> bool:
    """DESIGN.md rule 2 (:mod:`.printed`). False: an ``ERROR`` line per entry that is not what
    was judged, and the build stops with nothing remembered (the next build verifies again)."""
    if not printed:
        return True  # before citeproc: nothing printed yet
    assert run.result is not None
    strict = run.result.policy.action("unverified") == "fail"
    checked = verify(printed, run.refs, strict)
    for error in checked.errors:
        say("ERROR", error)
    for warning in checked.warnings:
        say("WARNING", warning)
    if checked.unverifiable:
        say("WARNING", unverifiable_line(checked.unverifiable))
    if checked.errors:
        run.verdict = None
        return False
    if run.verdict is not None:
        run.verdict.lines = lines_since(run.bookmark)
    return True


def _payload(verdict: Verdict | None) -> dict[str, Any] | None:
    return None if verdict is None else asdict(verdict)


def replay(data: Any, source: bytes, fmt: str) -> tuple[int, bytes | None] | None:
    """A memo hit: the full run's lines, report, exit status and placements; None if it can't."""
    verdict = verdict_of(data)
    if verdict is None:
        return None  # not one this version wrote
    output = source
    if verdict.exit_code == 0 and verdict.annotations and verdict.mode is not None:
        from rwgate.frontends.pandoc.render import load, place, placement_mode

        doc = load(source, fmt)
        if placement_mode(doc, fmt) != verdict.mode:  # (a cleaned .rwgate/: the record says)
            return None  # e.g. --citeproc moved: check again
        placement = place(doc, verdict.mode, verdict.annotations, verdict.shadowing, verdict.inline)
        if placement.placed.keys() != verdict.annotations.keys() or not all(
            line in verdict.lines for line in placement.messages
        ):
            return None  # a notice placed otherwise than the full run said: it says again
        output = placement.output
    for line in verdict.lines:
        write_line(line)
    if verdict.report_path is not None and verdict.report_text is not None:
        from rwgate.render.emit import write_output

        write_output(Path(verdict.report_path), verdict.report_text)
    if verdict.exit_code != 0:
        return verdict.exit_code, None
    return 0, output


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rw-filter`` console script (and of ``filters/rw-filter.py``)."""
    run = Filter.of(list(sys.argv[1:] if argv is None else argv), os.environ)
    try:
        check_filter_env(os.environ)  # a pandoc below the floor: one line, before any reading
        status, output = run.process(sys.stdin.buffer.read())
    except RwgateError as exc:  # bad input, configuration, template or output: one line
        say("ERROR", str(exc))
        return 2
    except Exception as exc:  # never a traceback in the middle of a pandoc build
        say("ERROR", f"internal error ({type(exc).__name__}): {exc}")
        return 3
    if output is not None:
        sys.stdout.buffer.write(output)
        sys.stdout.buffer.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
