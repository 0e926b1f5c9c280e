"""Legacy mode (2025-11-25) against our dual-era server: `initialize`, `notifications/initialized`,
then plain requests without `_meta`, named by `MCP-Protocol-Version`, answered in legacy shapes."""

from __future__ import annotations

import pytest

from mcpref import Server, StreamableHTTP
from mcpref.client import EraCache, EraInfo, ProtocolError, origin_of
from tests.client.conftest import connect

pytestmark = pytest.mark.anyio

server = Server("dual-era", "3.1.0", instructions="Legacy welcome.", page_size=1)


@server.tool(input_schema={"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}})
def where(region: str = "") -> str:
    return f"in {region}"


@server.tool()
async def slow(ctx) -> str:  # type: ignore[no-untyped-def]
    await ctx.report_progress(1, 1)
    return "done"


@server.resource("memo://note", mime_type="text/plain")
def note() -> str:
    return "remember"


@server.resource_template("memo://{name}/copy", mime_type="text/plain")
def copy(name: str) -> str:
    return f"copy of {name}"


@server.prompt(complete={"topic": lambda value: ["tides", "tidal waves"]})
def brief(topic: str) -> str:
    return f"Brief me on {topic}."


app = StreamableHTTP(server)


async def test_handshake_then_plain_requests(url):
    async with connect(url, version="legacy", client_info={"name": "old", "version": "1"}) as (client, traffic):
        tools = await client.list_tools()
        result = await client.call_tool("where", {"region": "Zürich"})
        read = await client.read_resource("memo://note")
    assert traffic.methods[:2] == ["initialize", "notifications/initialized"]
    initialize = traffic.bodies[0]["params"]
    assert initialize == {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"},
    }
    for request, body in zip(traffic.requests[1:], traffic.bodies[1:], strict=True):
        assert request.headers["mcp-protocol-version"] == "2025-11-25"
        assert "_meta" not in body.get("params", {})
        assert "mcp-method" not in request.headers  # a 2026-07-28 header; legacy bodies mirror nothing
        assert "mcp-session-id" not in request.headers  # our server mints no session
    assert [tool["name"] for tool in tools] == ["where", "slow"]  # two pages, followed
    assert result == {"content": [{"type": "text", "text": "in Zürich"}]}  # legacy shape: no resultType
    assert read == {"contents": [{"uri": "memo://note", "mimeType": "text/plain", "text": "remember"}]}
    assert client.era == EraInfo("legacy", "2025-11-25")
    assert client.server_info == {"name": "dual-era", "version": "3.1.0"}
    assert client.instructions == "Legacy welcome."


async def test_discover_returns_the_initialize_result(url):
    async with connect(url, version="legacy") as (client, traffic):
        result = await client.discover()
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"] == "dual-era"
    assert traffic.methods == ["initialize", "notifications/initialized"]


async def test_the_handshake_keeps_what_the_server_offers(url):
    # What the server can do is learnt from its InitializeResult: there is no server/discover.
    async with connect(url, version="legacy") as (client, traffic):
        result = await client.discover()
    assert client.server_capabilities == result["capabilities"]
    assert {"tools", "resources", "prompts", "completions"} <= set(client.server_capabilities)
    assert traffic.methods == ["initialize", "notifications/initialized"]


async def test_pinned_older_legacy_version(url):
    async with connect(url, version="2025-06-18") as (client, traffic):
        await client.list_resources()
    assert traffic.bodies[0]["params"]["protocolVersion"] == "2025-06-18"
    assert traffic.requests[-1].headers["mcp-protocol-version"] == "2025-06-18"


async def test_progress_in_legacy_mode(url):
    progress: list[dict] = []
    async with connect(url, version="legacy", on_progress=progress.append) as (client, traffic):
        await client.call_tool("slow")
    assert [p["progress"] for p in progress] == [1]
    assert traffic.bodies[-1]["params"]["_meta"] == {"progressToken": progress[0]["progressToken"]}


async def test_legacy_results_are_not_cached(url):
    async with connect(url, version="legacy") as (client, traffic):
        await client.read_resource("memo://note")
        await client.read_resource("memo://note")
    assert traffic.methods.count("resources/read") == 2


async def test_a_remembered_legacy_era_goes_straight_to_initialize(url):
    eras = EraCache()
    eras.set(origin_of(url), EraInfo("legacy", "2025-11-25"))
    async with connect(url, era_cache=eras) as (client, traffic):
        await client.list_tools()
    assert traffic.methods[:2] == ["initialize", "notifications/initialized"]
    assert "server/discover" not in traffic.methods


async def test_listen_needs_a_modern_server(url):
    async with connect(url, version="legacy") as (client, _):
        with pytest.raises(ProtocolError, match="2026-07-28"):
            async with client.listen(tools_list_changed=True):
                pass


#: How the client asks for each result type that 2025-11-25 servers also send (without `resultType`).
LEGACY_RESULTS = {
    "Result": ("tools/call", lambda client: client.call_tool("where", {"region": "x"})),
    "CallToolResult": ("tools/call", lambda client: client.call_tool("slow")),
    "ListToolsResult": ("tools/list", lambda client: client.list_tools()),
    "ListPromptsResult": ("prompts/list", lambda client: client.list_prompts()),
    "GetPromptResult": ("prompts/get", lambda client: client.get_prompt("brief", {"topic": "tides"})),
    "ListResourcesResult": ("resources/list", lambda client: client.list_resources()),
    "ListResourceTemplatesResult": ("resources/templates/list", lambda client: client.list_resource_templates()),
    "ReadResourceResult": ("resources/read", lambda client: client.read_resource("memo://note")),
    "CompleteResult": (
        "completion/complete",
        lambda client: client.complete({"type": "ref/prompt", "name": "brief"}, {"name": "topic", "value": "t"}),
    ),
}


@pytest.mark.parametrize("kind", LEGACY_RESULTS)
async def test_a_result_without_result_type_is_complete(url, kind):
    method, ask = LEGACY_RESULTS[kind]
    async with connect(url, version="legacy") as (client, traffic):
        result = await ask(client)
    assert result  # returned as it came, not refused nor retried
    if isinstance(result, dict):
        assert "resultType" not in result
    pages = traffic.methods.count(method)
    assert pages == (len(result) if method.endswith("/list") else 1)  # page_size=1: one request per item


@pytest.mark.parametrize("version", ["legacy", "2025-06-18"])
async def test_a_pinned_legacy_version_is_not_remembered_for_the_origin(url, version):
    # Only what `auto` detected describes the server; a pin describes this one client.
    eras = EraCache()
    async with connect(url, version=version, era_cache=eras) as (client, _):
        await client.list_tools()
    assert client.era is not None and client.era.era == "legacy"
    assert eras.get(origin_of(url)) is None


async def test_a_remembered_legacy_era_hand_shakes_in_the_remembered_version(url):
    eras = EraCache()
    eras.set(origin_of(url), EraInfo("legacy", "2025-06-18"))
    async with connect(url, era_cache=eras) as (client, traffic):
        await client.list_tools()
    assert traffic.bodies[0]["params"]["protocolVersion"] == "2025-06-18"
    assert client.era == EraInfo("legacy", "2025-06-18")
