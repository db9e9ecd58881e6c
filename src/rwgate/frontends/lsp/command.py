"""The ``rwgate lsp`` sub-command (argument parsing only; pygls loads when it runs)."""

from __future__ import annotations

import argparse
from typing import Any

from rwgate.frontends.extras import MissingExtra, install_hint
from rwgate.frontends.kit import add_check_options, flag_overrides


def add_lsp_command(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "lsp",
        help="serve retraction diagnostics to an editor (Language Server Protocol, stdio)",
        description="A language server on standard input and output: diagnostics, hovers and "
        "code actions for the works a manuscript or bibliography cites (.md, .qmd, .Rmd, .tex, "
        ".bib, .bbl, CSL JSON/YAML, RIS), with the build's configuration and policy. The first "
        "verdicts come from the snapshot and the cache; the network updates them later.",
    )
    add_check_options(p)
    p.set_defaults(func=_cmd_lsp)


def _cmd_lsp(args: argparse.Namespace) -> int:
    try:
        from rwgate.frontends.lsp.server import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs", "attrs"):
            raise
        raise MissingExtra(
            f"rwgate lsp needs pygls, which is not installed: {install_hint('lsp')}"
        ) from None
    serve(flag_overrides(args))
    return 0
