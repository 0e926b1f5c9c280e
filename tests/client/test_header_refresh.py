"""A HeaderMismatch about `Mcp-Param-*` headers (basic/transports/streamable-http.mdx §Client
Behavior): the client lists the tools again and, when the tool's header parameters changed, retries
the call with the right headers; when nothing changed, the error is the caller's."""

from __future__ import annotations

import pytest

from mcpref import Server, StreamableHTTP
from mcpref.client import HeaderMismatch
from tests.client.conftest import connect, endpoint

pytestmark = pytest.mark.anyio

PLAIN = {"type": "object", "properties": {"region": {"type": "string"}}}
MIRRORED = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}


async def test_a_changed_tool_is_listed_again_and_the_call_retried() -> None:
    server = Server("changing", "1")
    server.tool(name="deploy", input_schema=PLAIN)(lambda region="": f"plain {region}")
    with endpoint(StreamableHTTP(server)) as url:
        async with connect(url) as (client, traffic):
            await client.call_tool("deploy", {"region": "eu"})
            server.tools.remove("deploy")  # the operator redeploys it with a mirrored parameter
            server.tool(name="deploy", input_schema=MIRRORED)(lambda region="": f"mirrored {region}")
            traffic.clear()
            result = await client.call_tool("deploy", {"region": "eu"})
    assert result["content"][0]["text"] == "mirrored eu"
    assert traffic.methods == ["tools/call", "tools/list", "tools/call"]
    assert traffic.requests[-1].headers["mcp-param-region"] == "eu"


async def test_a_mismatch_that_a_fresh_list_does_not_explain_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server("steady", "1")
    server.tool(name="deploy", input_schema=MIRRORED)(lambda region="": region)
    with endpoint(StreamableHTTP(server)) as url:
        async with connect(url, hooks=[_rewrite_region]) as (client, traffic):
            with pytest.raises(HeaderMismatch):
                await client.call_tool("deploy", {"region": "eu"})
    assert [m for m in traffic.methods if m == "tools/call"] == ["tools/call"]


async def _rewrite_region(request) -> None:  # type: ignore[no-untyped-def]
    """A proxy that rewrites the mirrored header: no refresh can fix that."""
    if "mcp-param-region" in request.headers:
        request.headers["Mcp-Param-Region"] = "us"
