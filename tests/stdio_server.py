"""The server the stdio tests run as a real child process: `python -m tests.stdio_server`.

The real `Server` and stdio transport, with tools that exercise what only stdio has: progress and
log lines on the shared stdout, cancellation by `notifications/cancelled` (said on stderr, which
the tests read), a tool list that changes, an input round, a crash. tests/transports drives it
line by line; tests/client through `mcpref.client`.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcpref import Server
from mcpref.mrtr import InputRequired, elicit_form
from mcpref.transports.stdio import serve_stdio

server = Server("stdio-test-server", "1.0.0")


@server.tool(input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
async def echo(message: str, ctx) -> str:  # type: ignore[no-untyped-def]
    await ctx.report_progress(1, 1)
    return message


@server.tool()
async def slow(ctx) -> str:  # type: ignore[no-untyped-def]
    await ctx.report_progress(1, 2, "halfway")
    await ctx.log("warning", "careful")
    await ctx.report_progress(2, 2)
    return "done"


@server.tool()
async def wait(seconds: float = 30) -> str:
    """Sleeps until cancelled; says so on stderr."""
    print("wait started", file=sys.stderr, flush=True)
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        print("wait was cancelled", file=sys.stderr, flush=True)
        raise
    return "woke"


@server.tool()
def add_tool() -> str:
    server.tool(name=f"extra_{len(server.tools)}")(lambda: "")
    return "added"


@server.tool()
def confirm(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
    answer = ctx.input_response("ok")
    if answer is None:
        return InputRequired({"ok": elicit_form("Sure?", {"ok": {"type": "boolean"}})}, state="asked")
    return f"{ctx.state}: {answer['action']}"


@server.tool()
def crash() -> str:
    os._exit(3)


if __name__ == "__main__":
    serve_stdio(server)
