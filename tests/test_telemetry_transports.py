"""Trace context across the real transports, both ways: a real uvicorn on loopback, and a stdio
server in its own process with the SDK installed (tests/otel_stdio_server.py).

Client to server, the request's `_meta` carries the client span, the server span's parent.
Server to client, the notifications the server sends while serving carry the server span,
the parent of the span the client records on receiving them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import SpanKind

from mcpref import StreamableHTTP
from mcpref.client import Client, EraCache, StdioTransport
from tests.conftest import running
from tests.test_telemetry import Recorded, attributes, build_server, otel  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.anyio


async def test_context_crosses_http_both_ways(otel: Recorded) -> None:  # noqa: F811
    progress: list[dict[str, Any]] = []
    with (
        running(StreamableHTTP(build_server())) as base_url,
        otel.tracer.start_as_current_span("user action") as action,
    ):
        async with Client(f"{base_url}/mcp", on_progress=progress.append, era_cache=EraCache()) as client:
            await client.call_tool("echo", {"message": "over a socket"})
    assert progress
    client_span = otel.one("tools/call echo", SpanKind.CLIENT)
    server_span = otel.one("tools/call echo", SpanKind.SERVER)
    received = otel.one("notifications/progress", SpanKind.SERVER)
    assert server_span.parent is not None and server_span.parent.span_id == client_span.context.span_id
    assert received.parent is not None and received.parent.span_id == server_span.context.span_id
    assert {span.context.trace_id for span in otel.spans} == {action.get_span_context().trace_id}
    peer = attributes(server_span)
    assert peer["client.address"] == "127.0.0.1" and isinstance(peer["client.port"], int)
    assert attributes(client_span)["server.port"] == int(base_url.rsplit(":", 1)[1])


async def test_a_listen_stream_is_one_server_span_for_its_life(otel: Recorded) -> None:  # noqa: F811
    server = build_server()
    with running(StreamableHTTP(server)) as base_url:
        async with (
            Client(f"{base_url}/mcp", era_cache=EraCache()) as client,
            client.listen(tools_list_changed=True) as subscription,
        ):
            server.tool(name="late")(lambda: "x")
            async for _ in subscription:
                break
    listen = otel.one("subscriptions/listen", SpanKind.SERVER)
    opened = otel.one("subscriptions/listen", SpanKind.CLIENT)
    assert listen.parent is not None and listen.parent.span_id == opened.context.span_id
    change = otel.one("notifications/tools/list_changed", SpanKind.SERVER)
    assert change.parent is not None and change.parent.span_id == listen.context.span_id


async def test_context_crosses_stdio_both_ways(otel: Recorded, tmp_path: Path) -> None:  # noqa: F811
    path = tmp_path / "spans.jsonl"
    transport = StdioTransport(
        [sys.executable, "-m", "tests.otel_stdio_server"], env={**os.environ, "MCPREF_SPANS": str(path)}, cwd=str(ROOT)
    )
    progress: list[dict[str, Any]] = []
    with otel.tracer.start_as_current_span("user action") as action:
        async with Client(transport, on_progress=progress.append) as client:
            await client.call_tool("echo", {"message": "over a pipe"})
    assert progress
    theirs = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    server_span = next(span for span in theirs if span["name"] == "tools/call echo")
    client_span = otel.one("tools/call echo", SpanKind.CLIENT)
    received = otel.one("notifications/progress", SpanKind.SERVER)
    assert server_span["kind"] == "SERVER"
    assert server_span["trace_id"] == f"{action.get_span_context().trace_id:032x}"
    assert server_span["parent_id"] == f"{client_span.context.span_id:016x}"
    assert received.parent is not None and f"{received.parent.span_id:016x}" == server_span["span_id"]
    assert server_span["attributes"]["network.transport"] == "pipe"
    assert attributes(client_span)["network.transport"] == "pipe"
