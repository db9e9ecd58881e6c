"""Benchmark: how much of an agent's context the MCP tool list takes (issue 40).

An agent loads ``tools/list`` (names, titles, descriptions, input and output schemas,
annotations) at every start. This prints its size as compact JSON, in bytes, by part, with
tokens estimated at 4 and 3 characters per token (no tokenizer is downloaded). The bound is a
test: ``tests/e2e/test_mcp.py::test_the_tool_list_fits_an_agents_context``.
Run: ``.venv/bin/python benchmarks/mcp_tool_list.py``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "e2e")]

from mcp import Client  # noqa: E402
from test_mcp import TOOL_LIST_BYTES, in_process, tool_list_bytes  # noqa: E402


def _compact(value: object) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def main() -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    with tempfile.TemporaryDirectory() as tmp:
        tools = in_process([Path(tmp)], body)
    listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    parts: dict[str, int] = {}
    for tool in listed:
        for key, value in tool.items():
            parts[key] = parts.get(key, 0) + _compact(value)
    total = tool_list_bytes(tools)
    print(f"{len(listed)} tools: {total:,} bytes of compact JSON (bound {TOOL_LIST_BYTES:,})")
    print(f"tokens (est.): {total // 4:,}-{total // 3:,}")
    for key, size in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {key}: {size:,} bytes")


if __name__ == "__main__":
    main()
