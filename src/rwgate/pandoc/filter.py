"""``rw-filter``: the pandoc JSON filter that annotates flagged references or stops the build.

pandoc runs it as ``rw-filter FORMAT`` with the document's JSON AST on stdin and expects the
(possibly changed) AST on stdout; a non-zero exit makes pandoc stop and write nothing, which is how
the gate works. The filter is only an adapter: it reads the cited keys and bibliographies from the
AST exactly as ``rwgate check`` does (:func:`rwgate.references.manuscript.document_from_ast`), asks
the core for every verdict in one batched call, and renders the result as AST elements.

The rule, whatever the pipeline (:mod:`rwgate.pandoc.render`): a flagged work that the output shows
carries its notice, or the build stops. The notice goes into its rendered bibliography entry
(``--citeproc`` before the filter); where there is none (the filter before citeproc,
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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate import recorded
from rwgate.errors import RwgateError, UsageError
from rwgate.pandoc.log import lines_since, mark, say, write_line
from rwgate.pandoc.memo import (
    DOCUMENT,
    Verdict,
    memo_base,
    memo_file,
    resource_path,
    store_for_lua,
)
from rwgate.pandoc.memo import load as load_memo
from rwgate.pandoc.memo import store as store_memo
from rwgate.pandoc_version import check_filter_env

if TYPE_CHECKING:
    from rwgate.config import Settings
    from rwgate.models import Reference
    from rwgate.pandoc.render import Mode, Placed, Shadowing
    from rwgate.render.annotation import Annotation
    from rwgate.result import CheckResult


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


def load_filter_settings(ast: dict[str, Any], env: Mapping[str, str]) -> Settings:
    """Defaults < rwgate.toml/pyproject.toml upward from the working directory < env < metadata."""
    from rwgate.config import ConfigError, load_settings
    from rwgate.references.pandoc_ast import rwgate_block_malformed, rwgate_metadata

    if rwgate_block_malformed(ast):
        raise FilterError("metadata rwgate: must be a map (e.g. rwgate: {policy: strict})")
    try:
        return load_settings(Path.cwd(), env=env, metadata=rwgate_metadata(ast))
    except ConfigError as exc:
        raise FilterError(str(exc)) from None


def bibliography_files(ast: dict[str, Any], resource_path: list[Path]) -> list[tuple[str, str]]:
    """Each ``bibliography`` name as written, with the file it resolves to ("" if none)."""
    from rwgate.references.manuscript import resolve_bibliography
    from rwgate.references.pandoc_ast import bibliography_paths

    out = []
    for name in bibliography_paths(ast):
        found = resolve_bibliography(name, DOCUMENT, resource_path)
        out.append((name, str(found) if found is not None else ""))
    return out


def report_messages(result: CheckResult, verbose: bool = False) -> None:
    """Warnings for problems, source trouble and every citation the policy warns about; entries
    without a DOI as one summary line unless ``verbose`` (``RWGATE_VERBOSE=1``). The works to
    annotate are said once their notices are placed (:func:`rwgate.pandoc.notices.announce`),
    so that each line says where the notice went, or only here when the build stops."""
    from rwgate.kit import describe
    from rwgate.render.report import no_doi_summary

    for problem in result.problems:
        say("WARNING", str(problem))
    for warning in result.warnings:
        say("WARNING", warning)
    summary = None if verbose else no_doi_summary(result.citations, "RWGATE_VERBOSE=1")
    if summary is not None:
        say("WARNING", summary)
    for citation in result.citations:
        if summary is not None and citation.status == "no_doi" and citation.action == "warn":
            continue
        if citation.action == "warn" or (citation.action == "annotate" and result.exit_code):
            say("WARNING", describe(citation))


def write_report(text: str, path: Path) -> None:
    from rwgate.emit import write_output

    write_output(path, text)


def _placement(
    source: bytes,
    fmt: str,
    annotations: dict[str, Annotation],
    settings: Settings,
    refs: dict[str, Reference],
    files: list[tuple[str, str]],
) -> tuple[bytes, Mode, Shadowing | None, Placed, bool]:
    """Place the annotations (writing shadow .bib files if needed); (AST, mode, shadows, where
    each notice went, all shadows written)."""
    from rwgate.pandoc.render import load, place, placement_mode, write_shadows

    doc = load(source, fmt)
    mode = placement_mode(doc, fmt)
    shadowing, complete = (
        write_shadows(annotations, refs, files) if mode == "shadow" else (None, True)
    )
    placement = place(doc, mode, annotations, shadowing, settings.inline)
    for line in placement.messages:
        write_line(line)
    return placement.output, mode, shadowing, placement.placed, complete


def check_document(
    ast: dict[str, Any],
    source: bytes,
    fmt: str,
    env: Mapping[str, str],
    verdicts: bool = False,
    keys: list[str] | None = None,
) -> tuple[int, bytes | None, Verdict | None]:
    """The full run: (exit status, output AST or None, the verdict to remember or None).

    ``verdicts`` (the Lua filter's ``--verdicts``): where the Lua filter can place the notices
    itself (:mod:`rwgate.pandoc.lua_entries`), the output is its answer instead of the document.
    """
    from rwgate.references.manuscript import document_from_ast

    bookmark = mark()
    settings = load_filter_settings(ast, env)
    resource = resource_path(env)
    cited = document_from_ast(ast, DOCUMENT, resource, keys=keys)
    unchanged = lua_answer({}, {}) if verdicts else source  # nothing to annotate
    if not cited.keys and not cited.cite_all and settings.report is None:
        return 0, unchanged, _verdict(settings, env, 0, [])
    from rwgate.kit import judge_document

    result, refs = judge_document(cited, settings)
    report_messages(result, verbose=env.get("RWGATE_VERBOSE", "") not in ("", "0"))
    if result.exit_code != 0:
        from rwgate.kit import failure_lines

        for line in failure_lines(result):
            say("ERROR", line)
    report_text = None
    if settings.report is not None:
        report_text = result.report().to_json() + "\n"
        write_report(report_text, settings.report)
    if settings.lock is not None:
        from rwgate.kit import record_lock

        record_lock(result, settings)
    lines = lines_since(bookmark)
    good = result.complete and all(c.status != "unverified" for c in result.citations)
    # A lockfile is written (or read) beyond the build: with one, every build is a full check.
    good = good and settings.since is None and settings.lock is None
    verdict = _verdict(settings, env, result.exit_code, lines, report_text) if good else None
    if result.exit_code != 0:
        return result.exit_code, None, verdict
    from rwgate.kit import annotations_for

    annotations = annotations_for(result.citations, settings.template)
    if not annotations:
        return 0, unchanged, verdict
    from rwgate.pandoc.notices import announce

    if verdicts:
        from rwgate.pandoc.lua_entries import lua_entries

        entries = lua_entries(ast, fmt, annotations, settings.inline)
        if entries is not None:
            announce(result, {key: "in its bibliography entry" for key in annotations}, fmt, "")
            if verdict is not None:
                verdict.lines = lines_since(bookmark)
                verdict.annotations, verdict.mode, verdict.inline = annotations, "entries", False
            return 0, lua_answer(annotations, entries), verdict
    files = bibliography_files(ast, resource)
    output, mode, shadowing, placed, complete = _placement(
        source, fmt, annotations, settings, refs, files
    )
    if announce(result, placed, fmt, mode):
        return 1, None, None  # a flagged work the output would show without its notice
    if verdict is not None and complete:
        verdict.lines = lines_since(bookmark)
        verdict.annotations, verdict.mode, verdict.shadowing = annotations, mode, shadowing
        verdict.inline = settings.inline
    return 0, output, verdict if complete else None


def lua_answer(annotations: Mapping[str, Annotation], entries: Mapping[str, str]) -> bytes:
    """What ``--verdicts`` answers instead of the document: the notices and, for each entry
    ``Div`` identifier, the key whose notice it gets. It starts with ``{"layout":`` (a document
    starts with ``{"pandoc-api-version":``), which is how the Lua filter tells them apart."""
    from rwgate.pandoc.memo import LUA_LAYOUT, lua_annotations

    data = {"layout": LUA_LAYOUT, "annotations": lua_annotations(annotations), "entries": entries}
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def _verdict(
    settings: Settings,
    env: Mapping[str, str],
    code: int,
    lines: list[str],
    report: str | None = None,
) -> Verdict | None:
    """What to remember of a full run (None when it must be repeated next time: offline, or
    memos off, or a look-up cache kept elsewhere than the memo: the configuration chose it)."""
    from rwgate.paths import default_cache_dir

    if settings.offline or settings.no_cache or settings.no_memo:
        return None
    if memo_base(env) != Path(settings.cache_dir or default_cache_dir()):
        return None
    return Verdict(
        exit_code=code,
        lines=lines,
        report_path=str(settings.report) if settings.report is not None else None,
        report_text=report,
    )


def replay(verdict: Verdict, source: bytes, fmt: str) -> tuple[int, bytes | None] | None:
    """A memo hit: the full run's lines, report, exit status and placements; None if it can't."""
    output = source
    if verdict.exit_code == 0 and verdict.annotations and verdict.mode is not None:
        from rwgate.pandoc.render import load, place, placement_mode

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
        write_report(verdict.report_text, Path(verdict.report_path))
    if verdict.exit_code != 0:
        return verdict.exit_code, None
    return 0, output


def process(
    source: bytes,
    fmt: str,
    env: Mapping[str, str],
    lua_memo: Path | None = None,
    verdicts: bool = False,
) -> tuple[int, bytes | None]:
    """Filter one document: (exit status, output AST or None when the gate stops the build).

    ``lua_memo``: where the Lua filter (``_extensions/rwgate/rwgate.lua``) wants a verdict it can
    replay on its own next time (see :func:`rwgate.pandoc.memo.store_for_lua`); ``verdicts``:
    answer it with the verdicts where it can place them itself (see :func:`check_document`).
    Every read of ``env`` is recorded (:mod:`rwgate.recorded`), as the configuration's are."""
    from rwgate.references.pandoc_ast import cited_keys

    env = recorded.environ(env)
    ast = _parse(source)
    keys = cited_keys(ast)  # one walk of the document for the memo's name and the check
    memo = memo_file(ast, fmt, env, keys)
    if memo is not None:
        with recorded.recording() as hit:
            remembered = load_memo(memo)
            replayed = replay(remembered, source, fmt) if remembered is not None else None
        if replayed is not None and remembered is not None:
            if lua_memo is not None:
                store_for_lua(lua_memo, hit, remembered)
            return replayed
    with recorded.recording() as run:
        status, output, verdict = check_document(ast, source, fmt, env, verdicts, keys)
    if verdict is not None:
        if memo is not None:
            store_memo(memo, run, verdict)
        if lua_memo is not None:
            store_for_lua(lua_memo, run, verdict)
    return status, output


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rw-filter`` console script (and of ``filters/rw-filter.py``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    fmt = args[0] if args else "html"
    # The Lua filter's own options (pandoc itself passes the format alone).
    verdicts = "--verdicts" in args[1:]
    rest = [a for a in args[1:] if a != "--verdicts"]
    lua_memo = Path(rest[1]) if len(rest) == 2 and rest[0] == "--lua-memo" else None
    try:
        check_filter_env(os.environ)  # a pandoc below the floor: one line, before any reading
        status, output = process(sys.stdin.buffer.read(), fmt, os.environ, lua_memo, verdicts)
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
