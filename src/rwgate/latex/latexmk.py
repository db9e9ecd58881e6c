"""``rw-latexmk [rwgate options] [latexmk options] FILE.tex``: latexmk with the integrity gate.

latexmk runs with its ``$bibtex``/``$biber`` commands pointed at the rwgate hooks through ``-e``
code (no rc file needed). The hook command travels in an environment variable and latexmk's
``internal`` command form calls it with Perl's list ``system``, so no shell string is ever built
from a path or an argument. After latexmk the verdict is recomputed; when it differs from the one
the ``.bbl`` was annotated for, the ``.bbl`` is removed and latexmk runs again. When the policy
fails, each offending citation is reported, the output is renamed ``NAME.pdf.rejected`` (so no
``NAME.pdf`` is left) and the exit code is 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rwgate import recorded
from rwgate.errors import ConfigError, InputError, UsageError
from rwgate.kit import flag_overrides

from . import memo
from .env import ENV_GATE, ENV_OVERRIDES, ENV_TEX, EXIT_GATE, EXIT_USAGE, HookError
from .hooks import own_options, split_hook_args
from .reuse import ENV_BUILD

if TYPE_CHECKING:
    from rwgate.config import Settings
    from rwgate.core import CheckResult

    from .gate import Build, Verdict

# The integrity core (Pydantic, the readers, the cache) is imported only when the gate runs: a
# rebuild the memo answers (rwgate.latex.memo) never loads it.

PROG = "rw-latexmk"
ENV_LATEXMK = "RWGATE_LATEXMK"  # latexmk executable to run (default: latexmk on PATH)
ENV_HOOK = "RWGATE_LATEX_HOOK"  # the hook command, one argument per line
ENV_DIRS = "RWGATE_LATEX_DIRS"  # file where latexmk's -e code reports its directories
ENV_SUCCESS = "RWGATE_LATEX_SUCCESS"  # the gate passed: latexmk may run the project's $success_cmd

# Constant Perl, run by latexmk after its rc files and options: nothing here comes from input.
PERL_CODE = (
    # The project's own $bibtex/$biber (its options, bibtex8, a wrapper script: whatever its
    # latexmkrc set) runs first, through latexmk's Run_subst; then rwgate judges and annotates
    # the .bbl it wrote, told the command's exit status. Wrapped, never replaced.
    # A command without placeholders gets " %O %B", as latexmk's own fix_cmds gives it (that runs
    # after this code, so the copy is fixed here): `$bibtex = 'bibtex -min-crossrefs=99';`.
    "our ($rwgate_bibtex, $rwgate_biber) ="
    ' map { ($_ && !/%/) ? "$_ %O %B" : $_ } ($bibtex, $biber);',
    "sub rwgate_hook { my ($tool, @args) = @_; my $src = $args[-1];"
    ' (my $base = $src) =~ s/^"|"$//g; $base =~ s/\\.(aux|bcf)$//;'
    " my $own = ($tool eq 'bibtex') ? $rwgate_bibtex : $rwgate_biber;"
    " my $ran = Run_subst($own, 1, join(' ', @args[0 .. $#args - 1]), $src, '', $base);"
    " my @cmd = (split(/\\n/, $ENV{RWGATE_LATEX_HOOK}), $tool, '--ran', ($ran // 0), @args);"
    " system { $cmd[0] } @cmd; return $?; }",
    "$bibtex = 'internal rwgate_hook bibtex %O %S'; $biber = 'internal rwgate_hook biber %O %S';",
    "$clean_ext .= ' rwgate.json'; $clean_full_ext .= ' pdf.rejected';",
    # A gated build holds the project's $success_cmd (a copy of the PDF, an upload) until the
    # gate has passed: rw-latexmk then runs latexmk once more to run it (RWGATE_LATEX_SUCCESS).
    "our $rwgate_success = $success_cmd;",
    "if ($ENV{RWGATE_LATEX_DIRS} && !$ENV{RWGATE_LATEX_SUCCESS}) { $success_cmd = ''; }",
    "if ($ENV{RWGATE_LATEX_DIRS}) { open(my $rwfh, '>', $ENV{RWGATE_LATEX_DIRS})"
    " or die \"rwgate: $!\\n\"; print $rwfh join(\"\\n\", $out_dir // '', $aux_dir // '',"
    " ($do_cd ? 1 : 0), $jobname // '', ($rwgate_success ? 1 : 0)), \"\\n\"; close($rwfh); }",
)
_VALUED = frozenset(["-e", "-r", "-MF", "-bm", "-bi", "-bs", "-dF", "-pF"])
_NO_GATE = frozenset(
    ["-c", "-C", "-CA", "-v", "-version", "-commands", "-showextraoptions", "-rules", "-pvc"]
)
_HELP = frozenset(("-h", "-help"))
USAGE = f"""usage: {PROG} [rwgate options] [latexmk options] FILE.tex ...

latexmk with the rwgate integrity gate: flagged works are annotated in the typeset bibliography;
when the policy fails, each offending citation is listed, NAME.pdf is renamed NAME.pdf.rejected
and the exit code is 1. Every other option is passed to latexmk (see latexmk -help).
With -pvc (which never returns) each bibtex/biber run gates itself, as with latexmkrc.example.

rwgate options: --policy {{default,strict,permissive}}, --fail-on STATUS, --offline, --no-cache,
  --cache-dir DIR, --snapshot FILE, --crossref-url URL, --no-memo (replay no remembered gate)
"""


@dataclass
class Invocation:
    own: list[str] = field(default_factory=list)
    latexmk: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    gate: bool = True
    help: bool = False


def _default_files(latexmk_args: list[str]) -> list[Path]:
    """What latexmk would build without a file argument: ``@default_files`` from the project's
    latexmkrc files (and ``-r`` ones), globs expanded as latexmk expands them."""
    import glob

    exe = os.environ.get(ENV_LATEXMK) or "latexmk"
    code = 'print STDOUT join("\\n", @default_files), "\\n"; exit 0;'
    rc = [a for i, a in enumerate(latexmk_args) if a == "-r" or latexmk_args[i - 1 : i] == ["-r"]]
    try:
        proc = subprocess.run(
            [exe, *rc, "-e", code], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    found: list[Path] = []
    for pattern in proc.stdout.splitlines():
        for name in sorted(glob.glob(pattern.strip())) if pattern.strip() else []:
            path = Path(name)
            if path.suffix == ".tex" and path.is_file() and path not in found:
                found.append(path)
    return found


def _no_bibtex(latexmk_args: list[str]) -> bool:
    """``-bibtex-`` (or ``-nobibtex``): the user told latexmk never to run the bibliography tool,
    so a ``.bbl`` deleted here would never come back."""
    return any(_single_dash(a) in ("-bibtex-", "-nobibtex") for a in latexmk_args)


def _single_dash(arg: str) -> str:
    return arg[1:] if arg.startswith("--") else arg


def split_args(argv: list[str], own_names: dict[str, bool]) -> Invocation:
    """rwgate's options (anywhere), latexmk's options, and the documents to build."""
    inv = Invocation()
    i = 0
    while i < len(argv):
        arg = argv[i]
        name = arg.split("=", 1)[0]
        if name in own_names:
            width = 2 if own_names[name] and "=" not in arg else 1
            inv.own.extend(argv[i : i + width])
            i += width
            continue
        short = _single_dash(arg)
        inv.help = inv.help or short in _HELP
        inv.gate = inv.gate and short not in _NO_GATE
        if short in _VALUED:
            inv.latexmk.extend(argv[i : i + 2])
            i += 2
            continue
        if arg.startswith("-"):
            inv.latexmk.append(arg)
        else:
            inv.files.append(arg)
        i += 1
    return inv


def _tex_path(name: str) -> Path:
    path = Path(name)
    if not path.is_file() and path.with_name(path.name + ".tex").is_file():
        path = path.with_name(path.name + ".tex")
    return path


def _hook_command() -> str:
    # -P: the hook runs in the document's folder, which must not put modules on sys.path
    return "\n".join([sys.executable, "-P", "-m", "rwgate"])


def _latexmk_cmd(latexmk_args: list[str], files: list[str]) -> list[str]:
    exe = os.environ.get(ENV_LATEXMK) or "latexmk"
    code = [part for piece in PERL_CODE for part in ("-e", piece)]
    return [exe, *latexmk_args, *code, *files]


def _run_latexmk(cmd: list[str], env: dict[str, str]) -> int:
    try:
        return subprocess.call(cmd, env=env)
    except OSError as exc:
        print(f"{PROG}: error: cannot run {cmd[0]}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE


def _environment(tex: Path, overrides: dict[str, object], dirs: Path | None) -> dict[str, str]:
    """latexmk's environment; ``dirs`` None when rw-latexmk does not gate after latexmk.

    Only a gated build lets the hooks skip their own gate and reuse a pass's verdict, because
    only then does :func:`build_one` re-check afterwards. Ungated (``-pvc``, which never returns),
    each hook gates and judges on its own, as with ``latexmkrc.example``.
    """
    env = dict(os.environ)
    for name in (ENV_GATE, ENV_DIRS, ENV_BUILD, ENV_SUCCESS):
        env.pop(name, None)
    env[ENV_HOOK] = _hook_command()
    env[ENV_TEX] = str(tex.resolve())
    env[ENV_OVERRIDES] = json.dumps(overrides, default=str)
    if dirs is not None:
        env[ENV_GATE] = "0"
        env[ENV_DIRS] = str(dirs)
        env[ENV_BUILD] = uuid.uuid4().hex
    return env


def _release_success(cmd: list[str], env: dict[str, str]) -> int:
    """latexmk once more, now allowed to run the project's ``$success_cmd`` (a copy of the PDF,
    an upload): held back during the gated build so that a rejected PDF is never copied on."""
    with tempfile.TemporaryDirectory(prefix="rwgate-latexmk-") as tmp:
        return _run_latexmk(cmd, {**env, ENV_SUCCESS: "1", ENV_DIRS: str(Path(tmp) / "dirs")})


def _settings(tex: Path, overrides: dict[str, object]) -> Settings:
    from rwgate.config import load_settings

    return load_settings(tex, overrides=overrides)


def build_one(tex: Path, inv: Invocation, overrides: dict[str, object]) -> int:
    """Build one document under the gate; its exit code. A rebuild whose inputs are those of the
    last passing gate replays it (:mod:`rwgate.latex.memo`). Everything the gate reads is
    recorded (:mod:`rwgate.recorded`): that record is the memo's promise."""
    with recorded.recording():
        return _build_one(tex, inv, overrides)


def _build_one(tex: Path, inv: Invocation, overrides: dict[str, object]) -> int:
    remembered = memo.memo_file(tex, inv.own, inv.latexmk, os.environ)
    entry = memo.load(remembered) if remembered is not None else None
    # The configuration is read before building (a bad one stops here), unless the entry vouches
    # for it: its record re-checks the configuration files' bytes.
    settings = None if entry is not None else _settings(tex, overrides)
    with tempfile.TemporaryDirectory(prefix="rwgate-latexmk-") as tmp:
        dirs = Path(tmp) / "dirs"
        env = _environment(tex, overrides, dirs)
        cmd = _latexmk_cmd(inv.latexmk, [str(tex)])
        code = _run_latexmk(cmd, env)
        if not dirs.is_file():
            return code or EXIT_USAGE  # latexmk stopped before reading its options
        reported = dirs.read_text(encoding="utf-8")
        hit = None
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
            # LaTeX died mid-run (a truncated .bcf, a half-written .aux): latexmk's own failure
            # is the answer; the gate, which could not read the build, did not pass either.
            memo.forget(remembered)
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            print(
                f"{PROG}: latexmk failed (exit {code}); the build did not finish and the gate"
                " could not judge it",
                file=sys.stderr,
            )
            return code


def _colour() -> bool:
    return sys.stderr.isatty() and not os.environ.get("NO_COLOR")


def _gate(
    tex: Path,
    inv: Invocation,
    settings: Settings,
    run: tuple[list[str], dict[str, str], int],
    reported: str,
    remembered: Path | None,
) -> int:
    """The gate after latexmk: the verdict, a rerun of the bibliography when it moved, the
    report, and the PDF kept or rejected."""
    from rwgate.kit import record_lock
    from rwgate.render.report import render_text

    from .gate import build_from_latexmk, clear_rejected, invalidate, verdict

    cmd, env, code = run
    cwd = Path.cwd()
    build = build_from_latexmk(tex, cwd, reported)
    current = verdict(build, settings, cwd)
    keeps_bbl = not current.regenerable or _no_bibtex(inv.latexmk)
    stale = current.stale()
    if keeps_bbl:
        # The user's .bbl (or -bibtex-): never deleted, whatever the verdict; deleting it when
        # no entry needed a note lost the bundle's only bibliography and failed latexmk (12).
        if (stale or not current.regenerable) and _has_notes(current, settings):
            from .gate import kept_warning

            print(f"{PROG}: warning: {kept_warning(build, current)}", file=sys.stderr)
    elif code == 0 and stale:
        print(
            f"{PROG}: the integrity verdict changed since {', '.join(map(str, stale))}"
            " was written; rerunning the bibliography",
            file=sys.stderr,
        )
        invalidate(stale)
        code = _run_latexmk(cmd, env)
        current = verdict(build, settings, cwd)
    result = current.result
    sys.stderr.write(render_text(result, _colour(), False, settings.template))
    if settings.report is not None:
        from .verdict import write_report

        write_report(result, Path(settings.report))
    record_lock(result, settings)  # after the build's last gate: the hooks never write it
    _remember(remembered, build, current, settings, code, reported)
    if result.exit_code == 0:
        clear_rejected(build)
        if code == 0 and build.success_cmd:
            code = _release_success(cmd, env)
        if code != 0:  # "gate passed" is about the citations, not about the build
            print(
                f"{PROG}: latexmk failed (exit {code}); the build did not finish", file=sys.stderr
            )
        return code
    return _reject(tex, build, result, settings)


def _has_notes(current: Verdict, settings: Settings) -> bool:
    from .verdict import latex_notes

    return bool(latex_notes(current.result, settings.template))


def _remember(
    path: Path | None,
    build: Build,
    current: Verdict,
    settings: Settings,
    code: int,
    reported: str,
) -> None:
    """Remember a gate that passed cleanly, so that an unchanged rebuild replays it; forget the
    entry otherwise (see :mod:`rwgate.latex.memo` for when a gate is not remembered)."""
    if path is None:
        return
    from rwgate.paths import default_cache_dir
    from rwgate.render.report import render_text

    from .gate import REJECTED

    result, doc = current.result, current.doc
    quiet = (
        code == 0
        and result.exit_code == 0
        and doc is not None
        and not current.failed
        and not settings.offline
        and not settings.no_cache
        and not settings.no_memo
        and Path(settings.cache_dir or default_cache_dir()) == path.parent.parent
        and not settings.recover_dois
        and settings.report is None
        and settings.lock is None
        and settings.since is None
        and not build.success_cmd
        and not any(c.status == "unverified" for c in result.citations)
        and not doc.problems
        and not any(part.problems for part in doc.parts)
    )
    if not quiet or doc is None:
        memo.forget(path, reported)
        return
    run = recorded.current()
    if run is None:
        memo.forget(path)
        return
    # The readers noted each .bib they read; the .bbl files and secondary .aux files judged,
    # and the .aux tree's cite lines, are noted here.
    files = list(current.fingerprints) + [Path(part.path) for part in doc.parts]
    memo.note_build(build.aux_dir / f"{build.job}.aux", reported, files)
    memo.remember(
        path,
        run,
        memo.Texts(
            render_text(result, False, False, settings.template),
            render_text(result, True, False, settings.template),
        ),
        [out.with_name(out.name + REJECTED) for out in build.outputs()],
    )


def _reject(tex: Path, build: Build, result: CheckResult, settings: Settings) -> int:
    """The gate failed: each offending citation listed, the outputs renamed; exit 1."""
    from .gate import offending_line, reject_outputs

    if build.success_cmd:
        print(f"{PROG}: the project's $success_cmd was not run: the gate failed", file=sys.stderr)
    failing = [c for c in result.citations if c.action == "fail"]
    print(
        f"{PROG}: gate FAILED for {tex}: {len(failing)} citation(s) fail policy"
        f" {result.policy.preset}:",
        file=sys.stderr,
    )
    for citation in failing:
        print(offending_line(citation, settings.template), file=sys.stderr)
    for original, kept in reject_outputs(build):
        if isinstance(kept, Path):
            print(f"{PROG}: output kept as {kept}; no {original} is left", file=sys.stderr)
        else:
            print(f"{PROG}: error: cannot rename {original}: {kept}", file=sys.stderr)
    return EXIT_GATE


def _gate_all(files: list[Path], inv: Invocation, overrides: dict[str, object]) -> int:
    """Build each document in turn; 1 if any gate failed, else the first latexmk failure."""
    worst = 0
    for tex in files:
        if not tex.is_file():
            print(f"{PROG}: error: {tex}: no such file", file=sys.stderr)
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
        sys.stdout.write(USAGE)
        return 0
    try:
        opts, _ = split_hook_args([*inv.own, "--"])
    except HookError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    overrides = flag_overrides(opts)
    files = [_tex_path(name) for name in inv.files]
    if not inv.gate:
        env = _environment(files[0] if files else Path.cwd(), overrides, None)
        return _run_latexmk(_latexmk_cmd(inv.latexmk, inv.files), env)
    files = files or _default_files(inv.latexmk)
    if not files:
        print(
            f"{PROG}: error: give the .tex file to build, or set @default_files in a latexmkrc"
            f" (see {PROG} -help)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        return _gate_all(files, inv, overrides)
    except (ConfigError, InputError, UsageError) as exc:  # a template, a .aux, a hook option
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
