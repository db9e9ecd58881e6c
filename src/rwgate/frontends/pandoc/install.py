"""``rwgate quarto install [DIR]`` and ``rwgate lua-filter``: the Lua filter from the package.

The wheel carries the Quarto extension (``rwgate/_extensions/rwgate/``: ``rwgate.lua``, also the
Lua filter for plain pandoc, and ``_extension.yml``; in a clone, a link to the repository's
``_extensions/``), so a user who installed rwgate with pip needs no clone: ``quarto install``
copies it into a project, ``lua-filter`` prints the filter's path (for ``pandoc --lua-filter`` and
R Markdown's ``pandoc_args``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

from rwgate.errors import UsageError

EXTENSION = Path(__file__).resolve().parents[2] / "_extensions" / "rwgate"
FILES = ("_extension.yml", "rwgate.lua")


class InstallError(UsageError):
    """The extension cannot be found in the package, or cannot be written: one line, exit 2."""


def extension_dir() -> Path:
    """The installed extension's folder, checked: every file it holds is there."""
    missing = [name for name in FILES if not (EXTENSION / name).is_file()]
    if missing:
        raise InstallError(
            f"rwgate's Quarto extension is incomplete at {EXTENSION} (no {', '.join(missing)}):"
            " reinstall rwgate (pip install --force-reinstall rwgate)"
        )
    return EXTENSION


def install_extension(project: Path) -> Path:
    """Copy the extension into ``project/_extensions/rwgate/``; returns that folder."""
    source = extension_dir()
    if not project.is_dir():
        raise InstallError(f"{project}: no such folder (give the Quarto project's folder)")
    target = project / "_extensions" / "rwgate"
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            shutil.copyfile(source / name, target / name)
    except OSError as exc:
        raise InstallError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target


def _cmd_quarto_install(args: argparse.Namespace) -> int:
    target = install_extension(args.dir)
    print(f"rwgate: installed the Quarto extension in {target}", file=sys.stderr)
    print("rwgate: add it to the document or _quarto.yml:  filters: [rwgate]", file=sys.stderr)
    return 0


def _cmd_lua_filter(_args: argparse.Namespace) -> int:
    print(extension_dir() / "rwgate.lua")
    return 0


def add_pandoc_commands(sub: Any) -> None:
    """``quarto install`` and ``lua-filter``, on the ``rwgate`` command line."""
    quarto = sub.add_parser(
        "quarto",
        help="install rwgate's Quarto extension into a project",
        description="Quarto: put rwgate's extension into a project.",
    )
    actions = quarto.add_subparsers(dest="quarto_command", required=True)
    install = actions.add_parser(
        "install",
        help="write DIR/_extensions/rwgate/ (DIR: the project, default .)",
        description="Write rwgate's Quarto extension into DIR/_extensions/rwgate/ (replacing "
        "an older copy), then list it in the document or _quarto.yml: filters: [rwgate].",
    )
    install.add_argument("dir", nargs="?", type=Path, default=Path("."), metavar="DIR")
    install.set_defaults(func=_cmd_quarto_install)
    lua = sub.add_parser(
        "lua-filter",
        help="print the path of rwgate's Lua filter (pandoc --lua-filter, R Markdown)",
        description="Print the path of the Lua filter installed with rwgate, for "
        'pandoc --lua-filter "$(rwgate lua-filter)" and R Markdown\'s pandoc_args.',
    )
    lua.set_defaults(func=_cmd_lua_filter)
