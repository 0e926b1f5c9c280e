"""Interop: the client against another implementation, the official Python SDK's server (mcp 2.x).

Our own server cannot show that the client reads the spec the way others do; this one can. It
is also the only real server at hand that mints a legacy `Mcp-Session-Id`, so the session's
echo and its DELETE at the end are checked here for real.
"""

from __future__ import annotations

from typing import Annotated

import pytest
from mcp.server.mcpserver import Elicit, ListRoots, MCPServer, Resolve
from mcp_types import ListRootsResult
from pydantic import BaseModel

from tests.client.conftest import connect
from tests.conftest import running

pytestmark = pytest.mark.anyio

sdk = MCPServer("sdk-server")


@sdk.tool()
def greet(name: str) -> str:
    """Say hello."""
    return f"Hello, {name}!"


class Confirm(BaseModel):
    sure: bool


def ask(path: str) -> Elicit[Confirm]:
    return Elicit(f"Delete {path}?", Confirm)


@sdk.tool()
def delete(path: str, confirm: Annotated[Confirm, Resolve(ask)]) -> str:
    return f"deleted {path}" if confirm.sure else "kept"


def roots() -> ListRoots:
    return ListRoots()


@sdk.tool()
def workspace(found: Annotated[ListRootsResult, Resolve(roots)]) -> str:
    return ", ".join(str(root.uri) for root in found.roots)


@sdk.resource("memo://note")
def note() -> str:
    return "remember"


@pytest.fixture(scope="module")
def url():
    with running(sdk.streamable_http_app(), lifespan="on") as base:
        yield base + "/mcp"


async def test_auto_finds_a_modern_server_and_calls_it(url):
    async with connect(url) as (client, traffic):
        result = await client.call_tool("greet", {"name": "Zoë"})
        read = await client.read_resource("memo://note")
    assert client.era is not None and client.era.era == "modern"
    assert result["content"][0]["text"] == "Hello, Zoë!"
    assert read["contents"][0]["text"] == "remember"
    assert traffic.methods == ["server/discover", "tools/list", "tools/call", "resources/read"]
    assert traffic.requests[2].headers["mcp-name"] == "greet"


async def test_mrtr_rounds_with_the_sdk(url):
    asked: list[dict] = []

    def elicit(params: dict) -> dict:
        asked.append(params)
        return {"action": "accept", "content": {"sure": True}}

    async with connect(url, elicitation=elicit, roots=[{"uri": "file:///src"}]) as (client, traffic):
        deleted = await client.call_tool("delete", {"path": "/tmp/a"})
        where = await client.call_tool("workspace")
    assert deleted["content"][0]["text"] == "deleted /tmp/a"
    assert asked[0]["message"] == "Delete /tmp/a?"
    assert where["content"][0]["text"] == "file:///src"
    retries = [body["params"] for body in traffic.bodies if "requestState" in body.get("params", {})]
    assert len(retries) == 2


async def test_listen_is_acknowledged(url):
    async with connect(url) as (client, _), client.listen(tools_list_changed=True) as subscription:
        assert subscription.honored == {"toolsListChanged": True}


async def test_legacy_session_is_echoed_and_ended(url):
    async with connect(url, version="legacy") as (client, traffic):
        tools = await client.list_tools()
        result = await client.call_tool("greet", {"name": "old friend"})
    assert [tool["name"] for tool in tools] == ["greet", "delete", "workspace"]
    assert "resultType" not in result and result["content"][0]["text"] == "Hello, old friend!"
    initialize, *later = traffic.requests
    assert "mcp-session-id" not in initialize.headers
    session = {request.headers.get("mcp-session-id") for request in later}
    assert len(session) == 1 and None not in session  # minted at initialize, echoed on every request
    assert later[-1].method == "DELETE"  # the session is ended when the client closes


async def test_a_session_the_server_ended_is_started_again(url):
    async with connect(url, version="legacy") as (client, traffic):
        await client.list_tools()
        first = client.transport.session_id
        # The server ends the session (here at the client's own request, as any other client
        # of it could); its next answer for that id is a 404.
        await client.transport.http.delete(url, headers={"Mcp-Session-Id": first})
        result = await client.call_tool("greet", {"name": "again"})
        second = client.transport.session_id
    assert result["content"][0]["text"] == "Hello, again!"
    assert second is not None and second != first
    methods = [(request.method, request.headers.get("mcp-session-id")) for request in traffic.requests]
    assert ("POST", first) in methods and methods.count(("POST", None)) == 2  # two initializes
