"""The ``rwgate mcp`` sub-command (argument parsing only; the SDK loads when it runs)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from rwgate.frontends.kit import EXIT_USAGE, flag_overrides


def add_mcp_command(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "mcp",
        help="serve the integrity checks as MCP tools (stdio or streamable HTTP)",
        description="Serve rwgate's checks to an MCP client (an AI agent drafting a manuscript).",
    )
    p.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default: loopback only)")
    p.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    p.add_argument(
        "--auth-token",
        help="HTTP: bearer token every request must carry (required beyond loopback; "
        "prefer RWGATE_MCP_TOKEN, which other users cannot see in the process list)",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        help="HTTP: a Host name clients use (repeatable); others are refused",
    )
    p.add_argument(
        "--root",
        action="append",
        type=Path,
        help="folder whose files the tools may read (repeatable; default: working directory)",
    )
    p.add_argument("--policy", choices=["default", "strict", "permissive"])
    p.add_argument("--offline", action="store_true", default=None, help="no network")
    p.add_argument("--no-cache", action="store_true", default=None)
    p.add_argument("--cache-dir", type=Path)
    p.add_argument("--snapshot", type=Path, help="Retraction Watch snapshot (SQLite)")
    p.add_argument("--crossref-url")
    p.add_argument("--openalex-url", help="OpenAlex API (verify_citation, search_references)")
    p.set_defaults(func=_cmd_mcp)


def _cmd_mcp(args: argparse.Namespace) -> int:
    from rwgate.frontends.mcp.safety import BadArgument
    from rwgate.settings.config import ConfigError

    overrides = flag_overrides(args)  # the flags it shares with `rwgate check`
    if args.openalex_url is not None:
        overrides["openalex_url"] = args.openalex_url
    if not 0 < args.port < 65536:
        print(f"rwgate mcp: error: --port {args.port} is not a TCP port", file=sys.stderr)
        return EXIT_USAGE
    try:
        from rwgate.frontends.mcp.server import serve

        token = args.auth_token or os.environ.get("RWGATE_MCP_TOKEN") or None
        roots = args.root or [Path.cwd()]
        serve(roots, overrides, args.transport, args.host, args.port, token, args.allowed_host)
    except (ConfigError, BadArgument) as exc:
        print(f"rwgate mcp: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0
