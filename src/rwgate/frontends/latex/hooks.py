"""``rwgate bibtex`` and ``rwgate biber``: the real tool, then the integrity annotations.

latexmk calls these in place of ``bibtex``/``biber``. The real tool runs first with the user's
own arguments and configuration, so its errors surface exactly as latexmk expects; then the keys
it read from the ``.aux``/``.bcf`` are judged and the flagged entries of its ``.bbl`` annotated.

For biber the ``.bbl`` is post-processed rather than fed a generated sourcemap: a sourcemap would
have to be merged into the user's biber configuration (one ``--configfile`` only, plus the
``\\DeclareSourcemap`` maps of the document, which can overwrite or drop fields), and biber would
re-encode the text; the ``.bbl`` is what biblatex reads, so editing it is one well-defined step
that no user setting can undo or double.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rwgate.frontends.kit import add_check_options, flag_overrides
from rwgate.frontends.latex.memo import (
    ENV_GATE,
    ENV_OVERRIDES,
    ENV_TEX,
    EXIT_GATE,
    EXIT_USAGE,
    TOOL_ENV,
    HookError,
    pass_door,
)

if TYPE_CHECKING:
    from rwgate.settings.config import Settings


def _own_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_check_options(parser)
    parser.add_argument("--tex", type=Path, help="main .tex file (configuration starts there)")
    # rw-latexmk ran the project's own bibtex/biber already: its exit status (a wait status
    # from Perl when above 255).
    parser.add_argument("--ran", type=int, help=argparse.SUPPRESS)
    return parser


def own_options(parser: argparse.ArgumentParser | None = None) -> dict[str, bool]:
    """rwgate's option names, each with whether it takes a value."""
    parser = parser or _own_parser()
    return {
        option: action.nargs != 0 for action in parser._actions for option in action.option_strings
    }


def documented_options() -> list[tuple[str, str | None, str | None]]:
    """rw-latexmk's own options for its help: each long name, its value's name and its help
    (``--tex`` and the internal ``--ran`` are the hooks' alone)."""
    out: list[tuple[str, str | None, str | None]] = []
    for action in _own_parser()._actions:
        names = [o for o in action.option_strings if o.startswith("--")]
        if not names or names[0] in ("--tex", "--ran"):
            continue
        value = None
        if action.nargs != 0:
            choices = "{" + ",".join(action.choices) + "}" if action.choices else None
            value = action.metavar or choices or names[0][2:].upper().replace("-", "_")
        out.append((names[0], str(value) if value else None, action.help))
    return out


def split_hook_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """rwgate's own leading options, then (after them or after ``--``) the tool's arguments."""
    parser = _own_parser()
    takes_value = own_options(parser)
    own: list[str] = []
    i = 0
    while i < len(argv):
        name = argv[i].split("=", 1)[0]
        if argv[i] == "--":
            i += 1
            break
        if name not in takes_value:
            break
        width = 2 if takes_value[name] and "=" not in argv[i] else 1
        own.extend(argv[i : i + width])
        i += width
    try:
        opts = parser.parse_args(own)
    except SystemExit:
        raise HookError("bad rwgate options: " + " ".join(own)) from None
    return opts, argv[i:]


def _last_file_arg(args: list[str], valued: list[str]) -> str | None:
    """The tool's input file: its last argument that is not an option or an option's value."""
    found = None
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = arg in valued
        else:
            found = arg
    return found


def _option(args: list[str], names: tuple[str, ...]) -> str | None:
    value = None
    for i, arg in enumerate(args):
        name, eq, rest = arg.partition("=")
        if name in names:
            value = rest if eq else (args[i + 1] if i + 1 < len(args) else None)
    return value


_BIBER_VALUED = (  # biber's options that take a value (the next argument is not the input file)
    "--configfile -g --output-directory --input-directory --output-file -O --logfile"
    " --sortlocale -l --collate-options -c --mincrossrefs -m --tool-config --output-format"
    " --input-format --input-encoding -e --output-encoding -E --decodecharsset --dot-include"
    " --output-fieldcase --output-indent --output-resolve --onlylog"
)


def locate_bibtex(args: list[str]) -> tuple[Path, Path]:
    """The ``.aux`` bibtex reads and the ``.bbl`` it writes next to it."""
    name = _last_file_arg(args, [])
    if name is None:
        raise HookError("no .aux file among the bibtex arguments")
    aux = Path(name if name.endswith(".aux") else name + ".aux")
    return aux, aux.with_suffix(".bbl")


def locate_biber(args: list[str]) -> tuple[Path, Path]:
    """The ``.bcf`` biber reads and the ``.bbl`` it writes (honouring its directory options)."""
    name = _last_file_arg(args, _BIBER_VALUED.split())
    if name is None:
        raise HookError("no .bcf file among the biber arguments")
    given = Path(name if name.endswith(".bcf") else name + ".bcf")
    out_dir = _option(args, ("--output-directory", "--output_directory"))
    in_dir = _option(args, ("--input-directory", "--input_directory"))
    candidates = [given]
    candidates += [Path(d) / given for d in (out_dir, in_dir) if d and not given.is_absolute()]
    bcf = next((c for c in candidates if c.is_file()), given)
    out_file = _option(args, ("--output-file", "--output_file", "-O"))
    if out_file:
        bbl = Path(out_dir) / Path(out_file).name if out_dir else Path(out_file)
    else:
        bbl = (Path(out_dir) if out_dir else bcf.parent) / (bcf.stem + ".bbl")
    return bcf, bbl


def hook_settings(opts: argparse.Namespace) -> tuple[Settings, Path | None]:
    """Settings as everywhere, searched from the main .tex; rw-latexmk's flags come by env."""
    from rwgate.settings.config import load_settings

    tex = opts.tex or (Path(os.environ[ENV_TEX]) if os.environ.get(ENV_TEX) else None)
    overrides: dict[str, Any] = {}
    if os.environ.get(ENV_OVERRIDES):
        try:
            overrides = dict(json.loads(os.environ[ENV_OVERRIDES]))
        except (ValueError, TypeError):
            raise HookError(f"{ENV_OVERRIDES} is not a JSON object") from None
    overrides.update(flag_overrides(opts))
    return load_settings(tex or Path.cwd(), overrides=overrides), tex


def _run_tool(tool: str, args: list[str]) -> int:
    exe = os.environ.get(TOOL_ENV[tool]) or tool
    try:
        return subprocess.call([exe, *args])
    except OSError as exc:
        print(f"rwgate {tool}: error: cannot run {exe}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE


def run_hook(tool: str, argv: list[str]) -> int:
    """Run ``tool`` (bibtex or biber) with ``argv``, then annotate its ``.bbl``; the exit code."""
    try:
        opts, tool_args = split_hook_args(argv)
    except HookError as exc:
        print(f"rwgate {tool}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    started = time.time()
    if opts.ran is None:
        code = _run_tool(tool, tool_args)
    else:  # rw-latexmk already ran the project's own command (see latexmk_run.PERL_CODE)
        code = opts.ran >> 8 if opts.ran > 255 else opts.ran
        started -= 600  # its .bbl was written before this process started
    usable = code <= 1 if tool == "bibtex" else code == 0  # bibtex exits 1 on mere warnings
    try:
        source, bbl = locate_bibtex(tool_args) if tool == "bibtex" else locate_biber(tool_args)
    except HookError as exc:
        if not usable:
            return code
        print(f"rwgate {tool}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not usable:
        # A BibTeX error (a repeated key, a syntax error) still leaves a .bbl the document
        # prints: annotate it all the same; the tool's own exit code still goes to latexmk.
        if not bbl.is_file() or bbl.stat().st_mtime < started - 1:
            return code
        print(
            f"rwgate {tool}: {tool} exited {code} (its errors are in the log); the .bbl it"
            " wrote is judged and annotated all the same",
            file=sys.stderr,
        )
    from rwgate.verdicts.remembered import through

    return through(
        pass_door(tool, source, bbl),
        lambda payload: _replay(tool, bbl, payload, code),
        lambda: _judge(tool, opts, (source, bbl), code),
    )


def _replay(tool: str, bbl: Path, payload: Any, code: int) -> int | None:
    """A later pass of the same build: the remembered notes on the fresh ``.bbl``."""
    notes = payload.get("notes") if isinstance(payload, dict) else None
    if not isinstance(notes, dict) or not bbl.is_file():
        return None
    from rwgate.frontends.latex.bbl import annotate_bbl

    try:
        annotate_bbl(bbl, {str(k): str(v) for k, v in notes.items()})
    except OSError:
        return None
    print(f"rwgate {tool}: {bbl}: this build's verdict reused", file=sys.stderr)
    return code


def _judge(
    tool: str, opts: argparse.Namespace, files: tuple[Path, Path], code: int
) -> tuple[int, Any]:
    """Judge and annotate: the exit code, and what a later pass replays (None: nothing)."""
    from rwgate.frontends.latex.verdict import annotate_build
    from rwgate.settings.config import ConfigError

    try:
        settings, tex = hook_settings(opts)
        failed, notes = annotate_build(tool, *files, settings, tex)
    except (HookError, ConfigError) as exc:
        print(f"rwgate {tool}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE, None
    if failed and os.environ.get(ENV_GATE) != "0":
        return max(code, EXIT_GATE), None
    return code, {"notes": notes}
