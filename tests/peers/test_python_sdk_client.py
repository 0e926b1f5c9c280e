"""The official Python SDK (`mcp` 2.3.0) as a client of our everything server, in each of its modes.

The server is a real `uvicorn mcpref.examples.everything_server:app` process on loopback; the SDK's
`mcp.client.Client` talks to it over its own Streamable HTTP transport, with an `httpx2` hook
recording what goes on the wire. `Client(mode=...)` selects the version:

- `"auto"` (the SDK's default): `server/discover` first; a modern answer keeps it modern;
- `"legacy"`: the 2025-11-25 handshake, `initialize` then `notifications/initialized`;
- `"2026-07-28"`: pinned, no probe at all; the SDK makes up a minimal DiscoverResult itself.

Each mode connects, lists the tools, calls a tool whose argument travels in a header too, and
calls a tool that needs the user's input. What the legacy mode gets there is pinned below:
our server keeps no session, mints no `Mcp-Session-Id` (2025-11-25 lets a server do without),
and cannot ask a legacy client for input mid-call, so it answers `isError` and says why.
(Our client against the SDK's server is tests/client/test_interop.py.)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from bench.procs import server_processes
from mcpref.examples.everything_server import build_server

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy", "2026-07-28"]
#: What each mode sends before its first request of its own.
HANDSHAKE = {"auto": ["server/discover"], "legacy": ["initialize", "notifications/initialized"], "2026-07-28": []}
VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
TOOLS = [tool.definition()["name"] for tool in build_server().tools]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with server_processes("mcpref.examples.everything_server:app", [{}]) as [server]:
        yield server.url
        assert "Traceback" not in server.log(), server.log()


class Wire:
    """Each HTTP exchange the SDK made, in order: the request, the response, and an error answer's body."""

    def __init__(self) -> None:
        self.exchanges: list[tuple[httpx2.Request, httpx2.Response]] = []
        self.errors: list[dict[str, Any]] = []

    async def hook(self, response: httpx2.Response) -> None:
        self.exchanges.append((response.request, response))
        if response.status_code >= 400:
            self.errors.append(json.loads(await response.aread()))

    @property
    def methods(self) -> list[str]:
        return [json.loads(request.content)["method"] for request, _ in self.exchanges if request.content]

    @property
    def statuses(self) -> list[int]:
        return [response.status_code for _, response in self.exchanges]

    def requests(self, method: str) -> list[httpx2.Request]:
        return [r for r, _ in self.exchanges if r.content and json.loads(r.content)["method"] == method]


@asynccontextmanager
async def sdk_client(url: str, mode: str, **options: Any) -> AsyncIterator[tuple[Client, Wire]]:
    wire = Wire()
    async with (
        httpx2.AsyncClient(timeout=10, event_hooks={"response": [wire.hook]}) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, **options) as client,
    ):
        yield client, wire


@pytest.mark.parametrize("mode", MODES)
async def test_connects(url: str, mode: str) -> None:
    async with sdk_client(url, mode) as (client, wire):
        assert client.protocol_version == VERSION[mode]
        if mode == "2026-07-28":
            # Pinned: nothing was asked, so the SDK knows nothing about the server yet.
            assert client.server_info is None
        else:
            assert client.server_info is not None and client.server_info.name == "mcpref-everything-server"
            assert client.server_capabilities.tools is not None
    # The SDK queues notifications/initialized and, leaving at once, may close before it goes
    # out; test_lists_the_tools sees the whole handshake.
    assert wire.methods == HANDSHAKE[mode][: len(wire.methods)] and wire.methods[:1] == HANDSHAKE[mode][:1]
    assert all(status in (200, 202) for status in wire.statuses)
    # Stateless in every era: no session id, and so no DELETE when the SDK closes.
    assert not any("mcp-session-id" in response.headers for _, response in wire.exchanges)
    assert {request.method for request, _ in wire.exchanges} <= {"POST"}


@pytest.mark.parametrize("mode", MODES)
async def test_lists_the_tools(url: str, mode: str) -> None:
    async with sdk_client(url, mode) as (client, wire):
        listed = await client.list_tools()
    assert [tool.name for tool in listed.tools] == TOOLS
    assert listed.next_cursor is None
    assert wire.methods == [*HANDSHAKE[mode], "tools/list"]
    assert wire.statuses == [202 if method.startswith("notifications/") else 200 for method in wire.methods]
    [request] = wire.requests("tools/list")
    assert request.headers["mcp-protocol-version"] == VERSION[mode]
    assert request.headers.get("mcp-method") == (None if mode == "legacy" else "tools/list")


@pytest.mark.parametrize("mode", MODES)
async def test_calls_a_tool_whose_argument_is_also_a_header(url: str, mode: str) -> None:
    async with sdk_client(url, mode) as (client, wire):
        result = await client.call_tool("test_custom_headers", {"region": "eu-west1"})
    assert not result.is_error
    assert [block.text for block in result.content if isinstance(block, types.TextContent)] == ["Region: eu-west1"]
    calls = wire.requests("tools/call")
    if mode == "legacy":
        # No standard headers on the legacy wire. The SDK lists the tools after the call, to
        # check the result against the tool's outputSchema.
        assert wire.methods == [*HANDSHAKE[mode], "tools/call", "tools/list"]
        assert "mcp-name" not in calls[0].headers and "mcp-param-region" not in calls[0].headers
        return
    # A fresh SDK client does not know yet that `region` is an x-mcp-header parameter, so its
    # first call lacks Mcp-Param-Region. Our server refuses it (400, -32020, streamable-http.mdx:
    # a body value for an x-mcp-header parameter without its header); the SDK re-lists the tools
    # and sends the call again, this time with the header, which the server checks and accepts.
    assert wire.methods == [*HANDSHAKE[mode], "tools/call", "tools/list", "tools/call"]
    assert wire.statuses[-3:] == [400, 200, 200]
    assert [error["error"]["code"] for error in wire.errors] == [-32020]
    assert "mcp-param-region" not in calls[0].headers
    assert calls[1].headers["mcp-name"] == "test_custom_headers"
    assert calls[1].headers["mcp-param-region"] == "eu-west1"


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_that_needs_the_users_input(url: str, mode: str) -> None:
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    async with sdk_client(url, mode, elicitation_callback=elicit) as (client, wire):
        result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    text = [block.text for block in result.content if isinstance(block, types.TextContent)]
    if mode == "legacy":
        # A 2025-11-25 server would send elicitation/create on the call's stream and wait for the
        # answer in another POST; a stateless server has nowhere to wait, so it says so instead.
        assert result.is_error
        assert text[0].startswith("Cannot complete: this request needs input from the client (elicitation)")
        assert asked == []
        assert len(wire.requests("tools/call")) == 1
    else:
        # MRTR: input_required, the SDK asks its callback, then retries with the answer.
        assert not result.is_error
        assert text == ["Elicitation completed: action=accept, content={'username': 'ada', 'email': 'ada@example.com'}"]
        assert [params.message for params in asked] == ["Who are you?"]
        first, retry = wire.requests("tools/call")
        assert "inputResponses" not in json.loads(first.content)["params"]
        assert set(json.loads(retry.content)["params"]["inputResponses"]) == {"user_info"}
