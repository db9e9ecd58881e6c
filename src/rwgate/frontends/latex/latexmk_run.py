"""rw-latexmk's command line, and running latexmk under it: the command, its environment, and the
constant Perl that points latexmk's ``$bibtex``/``$biber`` at the rwgate hooks and reports its
directories back. rwgate's options, latexmk's and the documents are told apart without a list of
latexmk's options (only those that take a value, or stop the gate).

The hook command travels in an environment variable and latexmk's ``internal`` command form calls
it with Perl's list ``system``, so no shell string is ever built from a path or an argument.
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

from rwgate.frontends.latex.memo import ENV_BUILD, ENV_GATE, ENV_OVERRIDES, ENV_TEX, EXIT_USAGE

PROG = "rw-latexmk"
ENV_LATEXMK = "RWGATE_LATEXMK"  # latexmk executable to run (default: latexmk on PATH)
ENV_HOOK = "RWGATE_LATEX_HOOK"  # the hook command, one argument per line
ENV_DIRS = "RWGATE_LATEX_DIRS"  # file where latexmk's -e code reports its directories
ENV_SUCCESS = "RWGATE_LATEX_SUCCESS"  # the gate passed: latexmk may run the project's $success_cmd
ENV_PRETEX = "RWGATE_LATEX_PRETEX"  # TeX code that makes LaTeX read annotated copies (notedcopy)

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

rwgate options:
"""


def usage(options: list[tuple[str, str | None, str | None]]) -> str:
    """The help text, listing exactly the rwgate options rw-latexmk accepts, from its own
    parser: each as ``(name, value name or None, help or None)``."""
    lines = [USAGE]
    for name, value, said in options:
        shown = f"  {name} {value}" if value else f"  {name}"
        lines.append(f"{shown:<32}{said or ''}".rstrip() + "\n")
    return "".join(lines)


@dataclass
class Invocation:
    """One command line, sorted: rwgate's options, latexmk's, the files; whether to gate."""

    own: list[str] = field(default_factory=list)
    latexmk: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    gate: bool = True
    help: bool = False


def no_bibtex(latexmk_args: list[str]) -> bool:
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


def tex_path(name: str) -> Path:
    """The document a file argument names: ``paper`` is ``paper.tex``, as latexmk reads it."""
    path = Path(name)
    if not path.is_file() and path.with_name(path.name + ".tex").is_file():
        path = path.with_name(path.name + ".tex")
    return path


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
    # The annotated copies of a bibliography rwgate may not rewrite (notedcopy): the kernel's
    # file substitution, put before the document as -usepretex does, keeping the project's own
    # LaTeX commands (%S becomes %P, the source after the code).
    "if ($ENV{RWGATE_LATEX_PRETEX}) { $pre_tex_code = $ENV{RWGATE_LATEX_PRETEX} . $pre_tex_code;"
    " for my $rwc (\\$latex, \\$pdflatex, \\$lualatex, \\$xelatex)"
    " { $$rwc =~ s/%S/%P/g unless $$rwc =~ /%P/; } }",
    # Ungated (-pvc), a bibliography no tool writes gets its annotated copies before each LaTeX
    # run, as latexmkrc.example does it (`rwgate latex-notes`, rwgate.frontends.latex.command).
    "if (!$ENV{RWGATE_LATEX_DIRS}) { our $rwgate_pre_tex_code = $pre_tex_code;"
    " for my $rwc (\\$latex, \\$pdflatex, \\$lualatex, \\$xelatex)"
    " { $$rwc =~ s/%S/%P/g unless $$rwc =~ /%P/; }"
    " add_hook('before_xlatex', sub { my @rwcmd = (split(/\\n/, $ENV{RWGATE_LATEX_HOOK}),"
    " 'latex-notes', $texfile_name, ($aux_dir || '.'), $root_filename);"
    " open(my $rwfh, '-|', @rwcmd) or die \"rwgate latex-notes: cannot run: $!\\n\";"
    " my $rwcode = do { local $/; <$rwfh> } // ''; close($rwfh);"
    ' die "rwgate latex-notes: the gate failed (see above); the build stops\\n" if $?;'
    " $pre_tex_code = $rwcode . $rwgate_pre_tex_code; }); }",
    # A gated build holds the project's $success_cmd (a copy of the PDF, an upload) until the
    # gate has passed: rw-latexmk then runs latexmk once more to run it (RWGATE_LATEX_SUCCESS).
    "our $rwgate_success = $success_cmd;",
    "if ($ENV{RWGATE_LATEX_DIRS} && !$ENV{RWGATE_LATEX_SUCCESS}) { $success_cmd = ''; }",
    "if ($ENV{RWGATE_LATEX_DIRS}) { open(my $rwfh, '>', $ENV{RWGATE_LATEX_DIRS})"
    " or die \"rwgate: $!\\n\"; print $rwfh join(\"\\n\", $out_dir // '', $aux_dir // '',"
    " ($do_cd ? 1 : 0), $jobname // '', ($rwgate_success ? 1 : 0)), \"\\n\"; close($rwfh); }",
)


def default_files(latexmk_args: list[str]) -> list[Path]:
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
    patterns = [line.strip() for line in proc.stdout.splitlines() if line.strip()]
    paths = [Path(name) for pattern in patterns for name in sorted(glob.glob(pattern))]
    return list(dict.fromkeys(p for p in paths if p.suffix == ".tex" and p.is_file()))


def hook_command() -> str:
    """The command latexmk runs for bibtex/biber (one argument per line): this Python, rwgate."""
    # -P: the hook runs in the document's folder, which must not put modules on sys.path
    return "\n".join([sys.executable, "-P", "-m", "rwgate"])


def latexmk_cmd(latexmk_args: list[str], files: list[str]) -> list[str]:
    """latexmk with the user's options, then the hook code (after them: it wraps their rc)."""
    exe = os.environ.get(ENV_LATEXMK) or "latexmk"
    code = [part for piece in PERL_CODE for part in ("-e", piece)]
    return [exe, *latexmk_args, *code, *files]


def run_latexmk(cmd: list[str], env: dict[str, str]) -> int:
    """latexmk's exit code; a latexmk that cannot be started is a usage error (one line)."""
    try:
        return subprocess.call(cmd, env=env)
    except OSError as exc:
        print(f"{PROG}: error: cannot run {cmd[0]}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE


def latexmk_env(tex: Path, overrides: dict[str, object], dirs: Path | None) -> dict[str, str]:
    """latexmk's environment; ``dirs`` None when rw-latexmk does not gate after latexmk
    (``-pvc``, which never returns): each hook then gates on its own, as with
    ``latexmkrc.example``, and reuses no pass's verdict."""
    env = dict(os.environ)
    for name in (ENV_GATE, ENV_DIRS, ENV_BUILD, ENV_SUCCESS, ENV_PRETEX):
        env.pop(name, None)
    env[ENV_HOOK] = hook_command()
    env[ENV_TEX] = str(tex.resolve())
    env[ENV_OVERRIDES] = json.dumps(overrides, default=str)
    if dirs is not None:
        env[ENV_GATE] = "0"
        env[ENV_DIRS] = str(dirs)
        env[ENV_BUILD] = uuid.uuid4().hex
    return env


def release_success(cmd: list[str], env: dict[str, str]) -> int:
    """latexmk once more, now allowed to run the project's ``$success_cmd`` (a copy of the PDF,
    an upload): held back during the gated build so that a rejected PDF is never copied on."""
    with tempfile.TemporaryDirectory(prefix="rwgate-latexmk-") as tmp:
        return run_latexmk(cmd, {**env, ENV_SUCCESS: "1", ENV_DIRS: str(Path(tmp) / "dirs")})
