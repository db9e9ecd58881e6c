"""``rw-latexmk [rwgate options] [latexmk options] FILE.tex``: latexmk with the integrity gate.

latexmk runs with its ``$bibtex``/``$biber`` pointed at the rwgate hooks (:mod:`.latexmk_run`).
After latexmk the verdict is recomputed; when it differs from the one the ``.bbl`` was annotated
for, the ``.bbl`` is removed and latexmk runs again. When the policy fails, each offending
citation is reported, the output is renamed ``NAME.pdf.rejected`` and the exit code is 1. The
integrity core is imported only when the gate runs: a rebuild the memo answers never loads it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from rwgate.errors import ConfigError, InputError, UsageError
from rwgate.frontends.kit import flag_overrides
from rwgate.frontends.latex import memo
from rwgate.frontends.latex.hooks import documented_options, own_options, split_hook_args
from rwgate.frontends.latex.latexmk_run import (
    ENV_PRETEX,
    PROG,
    Invocation,
    default_files,
    latexmk_cmd,
    latexmk_env,
    no_bibtex,
    release_success,
    run_latexmk,
    split_args,
    tex_path,
    usage,
)
from rwgate.frontends.latex.memo import EXIT_GATE, EXIT_USAGE, HookError
from rwgate.frontends.latex.notedcopy import previous_pretex
from rwgate.settings import recorded

if TYPE_CHECKING:
    from rwgate.frontends.latex.gate import Build, Verdict
    from rwgate.settings.config import Settings
    from rwgate.verdicts.remembered import Door
    from rwgate.verdicts.result import CheckResult


def _settings(tex: Path, overrides: dict[str, object]) -> Settings:
    from rwgate.settings.config import load_settings

    return load_settings(tex, overrides=overrides)


def build_one(tex: Path, inv: Invocation, overrides: dict[str, object]) -> int:
    """Build one document under the gate; its exit code. A rebuild whose recorded inputs are
    those of the last passing gate replays it (:mod:`.memo`)."""
    with recorded.recording():
        remembered = memo.memo_door(tex, inv.own, inv.latexmk, os.environ)
        # The record, checked after latexmk; it vouches for the configuration, else read now
        # (a bad one stops here).
        entry = recorded.load(remembered.path) if remembered is not None else None
        settings = None if entry is not None else _settings(tex, overrides)
        with tempfile.TemporaryDirectory(prefix="rwgate-latexmk-") as tmp:
            dirs = Path(tmp) / "dirs"
            env = latexmk_env(tex, overrides, dirs)
            pretex = previous_pretex(Path.cwd(), tex.stem)  # the last build's annotated copies
            if pretex:
                env[ENV_PRETEX] = pretex
            cmd = latexmk_cmd(inv.latexmk, [str(tex)])
            code = run_latexmk(cmd, env)
            if not dirs.is_file():
                return code or EXIT_USAGE  # latexmk stopped before reading its options
            reported = dirs.read_text(encoding="utf-8")
            if remembered is not None and entry is not None and code == 0:
                hit = memo.replayable(remembered, entry, reported)
                if hit is not None:
                    return hit.replay(_colour())
            settings = settings or _settings(tex, overrides)
            try:
                return _gate(tex, inv, settings, (cmd, env, code), reported, remembered)
            except InputError as exc:
                if code == 0:
                    raise
                # LaTeX died mid-run (a truncated .bcf): latexmk's failure is the answer.
                memo.forget(remembered)
                _say(f"error: {exc}")
                _say(
                    f"latexmk failed (exit {code}); the build did not finish and the gate"
                    " could not judge it"
                )
                return code


def _say(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def _colour() -> bool:
    return sys.stderr.isatty() and not os.environ.get("NO_COLOR")


def _gate(
    tex: Path,
    inv: Invocation,
    settings: Settings,
    run: tuple[list[str], dict[str, str], int],
    reported: str,
    remembered: Door | None,
) -> int:
    """The verdict, a rerun of the bibliography when it moved, the report, the PDF kept or
    rejected."""
    from rwgate.frontends.kit import record_lock
    from rwgate.frontends.latex.gate import build_from_latexmk, clear_rejected, invalidate, verdict
    from rwgate.frontends.latex.notedcopy import cannot_note
    from rwgate.render.report import render_text

    cmd, env, code = run
    cwd = Path.cwd()
    build = build_from_latexmk(tex, cwd, reported)
    current = verdict(build, settings, cwd)
    keeps_bbl = not current.regenerable or no_bibtex(inv.latexmk)
    stale = current.stale()
    # The user's .bbl (or -bibtex-) is never deleted, whatever the verdict: LaTeX reads a copy.
    code, env, why = _noted_copies(build, current, settings.template, (cmd, env, code), keeps_bbl)
    if why is not None:  # the notes cannot reach the PDF: the build fails under every policy
        _say(f"error: {cannot_note(tex, why)}")
        return _set_aside(build)
    if not keeps_bbl and code == 0 and stale:
        _say(
            f"the integrity verdict changed since {', '.join(map(str, stale))}"
            " was written; rerunning the bibliography"
        )
        invalidate(stale)
        code = run_latexmk(cmd, env)
        current = verdict(build, settings, cwd)
    result = current.result
    sys.stderr.write(render_text(result, _colour(), False, settings.template))
    if settings.report is not None:
        from rwgate.frontends.latex.verdict import write_report

        write_report(result, Path(settings.report))
    if current.unjudged:  # DESIGN.md rule 2: printed, not judged; stops under every policy
        memo.forget(remembered)
        for line in current.unjudged:
            _say(f"error: {line}")
        _say(f"gate FAILED for {tex}: the bibliography printed what was not judged")
        return _set_aside(build)
    record_lock(result, settings)  # after the build's last gate: the hooks never write it
    _remember(remembered, build, current, settings, code, reported)
    if result.exit_code == 0:
        clear_rejected(build)
        if code == 0 and build.success_cmd:
            code = release_success(cmd, env)
        if code != 0:  # "gate passed" is about the citations, not about the build
            _say(f"latexmk failed (exit {code}); the build did not finish")
        return code
    return _reject(tex, build, result)


def _noted_copies(
    build: Build,
    current: Verdict,
    template: str | None,
    run: tuple[list[str], dict[str, str], int],
    keeps: bool,
) -> tuple[int, dict[str, str], str | None]:
    """LaTeX reads an annotated copy of a bibliography this build may not rewrite
    (:mod:`.notedcopy`): latexmk's exit code, its environment from now on, and why the notes
    cannot reach the PDF (None: every copy was read). latexmk runs again (``-g``: it does not
    see a change of the pre-document code) when the copies or the code (``used``: the last
    build's) changed."""
    from rwgate.frontends.latex.gate import users_files
    from rwgate.frontends.latex.notedcopy import (
        Copies,
        NoCopy,
        make_copies,
        read_by_latex,
        remember_pretex,
    )
    from rwgate.frontends.latex.verdict import latex_notes

    cmd, env, code = run
    used = env.get(ENV_PRETEX, "")
    copies = Copies("", [])
    try:
        notes = latex_notes(current.result.citations, template) if keeps else None
        if notes:
            files = users_files(build, current.doc)
            copies = make_copies(build.tex, build.job, build.aux_dir, build.bbl, files, notes)
        if copies.pretex or used:
            remember_pretex(build.aux_dir, build.job, copies.pretex)
    except (NoCopy, OSError) as exc:
        return code, env, str(exc)
    env = {k: v for k, v in env.items() if k != ENV_PRETEX}
    if copies.pretex:
        env[ENV_PRETEX] = copies.pretex
    fls = build.aux_dir / f"{build.job}.fls"
    if code == 0 and (copies.pretex != used or copies.changed or read_by_latex(fls, copies.files)):
        code = run_latexmk([cmd[0], "-g", *cmd[1:]], env)
    unread = read_by_latex(fls, copies.files)
    if code == 0 and unread:
        return code, env, f"LaTeX did not read {unread[0]} (a LaTeX kernel older than 2020-10?)"
    return code, env, None


def _set_aside(build: Build) -> int:
    """Rename the outputs of a failed gate, saying where each went or why it could not move;
    the failed gate's exit code."""
    from rwgate.frontends.latex.gate import reject_outputs

    for original, kept in reject_outputs(build):
        if isinstance(kept, Path):
            _say(f"output kept as {kept}; no {original} is left")
        else:
            _say(f"error: cannot rename {original}: {kept}")
    return EXIT_GATE


def _remember(
    entry: Door | None,
    build: Build,
    current: Verdict,
    settings: Settings,
    code: int,
    reported: str,
) -> None:
    """Remember a gate that passed cleanly for an unchanged rebuild to replay; else forget it
    (:func:`rwgate.verdicts.remembered.refusal`)."""
    if entry is None:
        return
    from rwgate.render.report import render_text
    from rwgate.verdicts.remembered import refusal

    result, doc = current.result, current.doc
    effects = ["build_failed"] if code != 0 else []
    effects += ["success_cmd"] if build.success_cmd else []
    if doc is None or doc.problems or any(part.problems for part in doc.parts):
        effects.append("problems")
    why = refusal(
        settings, result, entry.base, replays_failure=False, replays_report=False, effects=effects
    )
    run = recorded.current()
    if why is not None or run is None or doc is None:
        memo.forget(entry, reported if why is not None else None)
        return
    # The readers noted each .bib; the .bbl and secondary .aux files judged are noted here.
    files = list(current.fingerprints) + [Path(part.path) for part in doc.parts]
    memo.note_build(build.aux_dir / f"{build.job}.aux", reported, files)
    rejected = [str(target) for _, target in build.outputs()]
    plain, coloured = (render_text(result, c, False, settings.template) for c in (False, True))
    entry.keep(run, asdict(memo.Entry(plain, coloured, rejected)))


def _reject(tex: Path, build: Build, result: CheckResult) -> int:
    """The gate failed: each offending citation listed, the outputs renamed; exit 1."""
    from rwgate.frontends.kit import failure_lines

    if build.success_cmd:
        _say("the project's $success_cmd was not run: the gate failed")
    failing = failure_lines(result, detail=True)  # key, status, notice, year, .bib file:line
    _say(f"gate FAILED for {tex}: {len(failing)} citation(s) fail policy {result.policy.preset}:")
    for line in failing:
        print(f"  {line}", file=sys.stderr)
    return _set_aside(build)


def _gate_all(files: list[Path], inv: Invocation, overrides: dict[str, object]) -> int:
    """Build each document in turn; 1 if any gate failed, else the first latexmk failure."""
    worst = 0
    for tex in files:
        if not tex.is_file():
            _say(f"error: {tex}: no such file")
            return EXIT_USAGE
        code = build_one(tex, inv, overrides)
        if code == EXIT_GATE or worst == 0:
            worst = code
    return worst


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = {
        k: v for k, v in own_options().items() if k.startswith("--") and k not in ("--tex", "--ran")
    }
    inv = split_args(argv, names)
    if inv.help:
        sys.stdout.write(usage(documented_options()))
        return 0
    try:
        opts, _ = split_hook_args([*inv.own, "--"])
    except HookError as exc:
        _say(f"error: {exc}")
        return EXIT_USAGE
    overrides = flag_overrides(opts)
    files = [tex_path(name) for name in inv.files]
    if not inv.gate:
        env = latexmk_env(files[0] if files else Path.cwd(), overrides, None)
        return run_latexmk(latexmk_cmd(inv.latexmk, inv.files), env)
    files = files or default_files(inv.latexmk)
    if not files:
        _say(
            "error: give the .tex file to build, or set @default_files in a latexmkrc"
            f" (see {PROG} -help)"
        )
        return EXIT_USAGE
    try:
        return _gate_all(files, inv, overrides)
    except (ConfigError, InputError, UsageError) as exc:  # a template, a .aux, a hook option
        _say(f"error: {exc}")
        return EXIT_USAGE
