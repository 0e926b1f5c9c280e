"""The hostile suite's servers: each a real uvicorn on loopback, configured with short deadlines
and small limits so that every bound can be hit within a fraction of a second.

`hostile_server()` is a small server with the tools an attacker's probes need: a slow async tool
that records whether it was cancelled, a blocking sync tool, and a completion.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcpref import RequestContext, Server
from mcpref.limits import ServerLimits
from tests.conftest import mcp_body, mcp_headers, running


class Record:
    """What the slow tool saw: calls started, finished and cancelled."""

    def __init__(self) -> None:
        self.started = 0
        self.finished = 0
        self.cancelled = 0


def hostile_server(record: Record | None = None, **options: Any) -> Server:
    record = record or Record()
    server = Server("hostile", "1.0.0", **options)

    @server.tool(input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}})
    async def slow(seconds: float = 1.0) -> str:
        record.started += 1
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            record.cancelled += 1
            raise
        record.finished += 1
        return "done"

    @server.tool(input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}})
    def block(seconds: float = 1.0) -> str:
        time.sleep(seconds)
        return "unblocked"

    @server.tool(input_schema={"type": "object"})
    def whoami(ctx: RequestContext) -> str:
        return ctx.principal or "anonymous"

    @server.resource("memo://a")
    def memo() -> str:
        return "a"

    @server.prompt(arguments={"city": "a city"}, complete={"city": lambda value: ["Oslo", "Lima"]})
    def brief(city: str) -> str:
        return f"Brief on {city}"

    return server


@contextmanager
def guarded(app: Any, limits: ServerLimits) -> Iterator[tuple[str, int]]:
    """Serve `app` as `mcpref.run` does (uvicorn with `limits`); yield its (host, port)."""
    with running(app, limits=limits) as url:
        host, port = url.removeprefix("http://").split(":")
        yield host, int(port)


def read_all(sock: socket.socket, timeout: float = 5.0) -> bytes:
    """Everything the server sends until it closes the connection (or `timeout` passes)."""
    sock.settimeout(timeout)
    received = b""
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    return received


def raw_request(method: str, params: dict[str, Any] | None = None, *, extra: str = "", path: str = "/mcp") -> bytes:
    """One whole MCP request as bytes, as a correct client sends it."""
    payload = json.dumps(mcp_body(method, params)).encode()
    head = "".join(f"{name}: {value}\r\n" for name, value in mcp_headers(method).items())
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}{extra}Content-Length: {len(payload)}\r\n\r\n".encode()
        + payload
    )
