"""How a tool call runs: arguments checked, work in a worker thread, one-line errors, compact
answers, progress notifications. Kept apart from the tool list in
:mod:`rwgate.frontends.mcp.server`."""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ValidationError

from rwgate.frontends.mcp.models import BatchCheck, DocumentCheck, compact
from rwgate.frontends.mcp.safety import BadArgument, one_line, printable

PROGRESS_AFTER = 1.0  # seconds a call runs before progress notifications start


class RwServer(MCPServer):
    """MCPServer whose argument errors are one line (the SDK's are multi-line) and which refuses
    arguments a tool does not have (the SDK ignores them silently; the input schemas say
    ``additionalProperties: false``, :func:`rwgate.frontends.mcp.schemas.shrink_tools`)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None and isinstance(arguments, dict):
            known = tool.parameters.get("properties", {})
            unknown = sorted(k for k in arguments if k not in known)
            if unknown:
                names = ", ".join(sorted(known)) or "none"
                raise ToolError(
                    f"{name}: unknown argument {printable(unknown[0])!r} (arguments: {names})"
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_validation_line(name, exc.__cause__)) from None
            raise


def _validation_line(tool: str, exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0] if errors else {"loc": (), "msg": "invalid arguments"}
    where = ".".join(str(p) for p in first["loc"]) or "arguments"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{tool}: argument {where}: {first['msg']}{more}"


def progress_for(ctx: Context) -> Callable[[int, int], None]:
    """A progress callback for the core (it runs in a worker thread) that sends MCP progress
    notifications once a call has taken a second, at most four a second; a client that did not
    ask for progress (no progress token) gets none."""
    started = time.monotonic()
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if now - started < PROGRESS_AFTER or now - last[0] < 0.25:
            return
        last[0] = now
        with contextlib.suppress(Exception):  # a closed session must not fail the check
            anyio.from_thread.run(ctx.report_progress, done, total, "works judged")

    return report


async def _in_thread(work: Callable[[], BaseModel]) -> BaseModel:
    """``work()`` in a worker thread that stops asking upstream when the call is cancelled: the
    event reaches every source through :data:`rwgate.sources.net.http.CANCEL` (a cancelled call went
    on sending 6 of its 10 requests)."""
    from rwgate.frontends.door import CANCEL

    cancel = threading.Event()

    def run() -> BaseModel:
        CANCEL.set(cancel)  # this thread's own context: anyio runs it in a copy
        return work()

    try:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        cancel.set()
        raise


async def run_tool(
    fn: Callable[..., BaseModel], *args: Any, detail: bool = True, ctx: Context | None = None
) -> Any:
    """Run a blocking Toolbox method in a worker thread; refusals become one-line tool errors
    (a refusal may quote an argument, and a file name may hold a line break).

    The answer goes out as structured content plus its compact JSON as text (the SDK would
    indent it: a third more tokens for an agent's context), without null fields, and, unless
    ``detail``, with clean works as a count and keys
    (:func:`rwgate.frontends.mcp.models.compact`)."""
    try:
        extra = (progress_for(ctx),) if ctx is not None else ()
        answer = await _in_thread(functools.partial(fn, *args, *extra))
    except BadArgument as exc:
        raise ToolError(printable(str(exc))) from None
    except RecursionError:
        raise ToolError("an argument is nested too deeply to be read") from None
    except Exception as exc:  # a bug: still one line for the agent, never an empty error
        text = printable(one_line(exc))
        raise ToolError(f"internal error ({type(exc).__name__}): {text}") from None
    if not detail and isinstance(answer, BatchCheck | DocumentCheck):
        answer = compact(answer)
    data = answer.model_dump(mode="json")  # as the output schema has it (nulls included)
    brief = answer.model_dump(mode="json", exclude_none=True)
    text = json.dumps(brief, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)
