"""stdio hands each request to the dispatcher once (`Server.accept`), like HTTP: the era, `_meta`,
the version and the method are judged by the same code on both transports."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

from mcpref import Server
from mcpref.transports.stdio import StdioServerTransport
from tests.conftest import META


def exchange(server: Server, *messages: dict[str, Any]) -> list[dict[str, Any]]:
    """Write `messages` to a stdio transport in process, close stdin, and read every answer."""

    async def run() -> bytes:
        reader, output = asyncio.StreamReader(), io.BytesIO()
        serving = asyncio.ensure_future(StdioServerTransport(server, reader=reader, output=output).run())
        for message in messages:
            reader.feed_data(json.dumps(message).encode() + b"\n")
            await asyncio.sleep(0.05)  # one at a time: a later message may depend on an earlier one
        reader.feed_eof()
        await asyncio.wait_for(serving, 5)
        return output.getvalue()

    return [json.loads(line) for line in asyncio.run(run()).splitlines()]


def test_initialize_on_a_modern_only_server_lists_the_supported_versions() -> None:
    """As on HTTP (basic/versioning.mdx: modern-only servers SHOULD list their versions in any
    error they return to `initialize`), not a complaint about a missing `_meta`."""
    server = Server("modern-only", "1", serve_legacy=False)
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
    [answer] = exchange(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    assert answer["error"]["code"] == -32022
    assert answer["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}


def test_after_a_legacy_initialize_requests_without_meta_are_served_the_legacy_way() -> None:
    server = Server("dual", "1")

    @server.tool()
    async def hello() -> str:
        return "hi"

    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
    init, call = exchange(
        server,
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hello", "arguments": {}}},
    )
    assert init["result"]["protocolVersion"] == "2025-06-18"
    assert call["result"] == {"content": [{"type": "text", "text": "hi"}]}  # no resultType: the legacy shape


def test_a_modern_request_gets_the_same_checks_as_on_http() -> None:
    server = Server("modern", "1")

    @server.tool()
    async def hello() -> str:
        return "hi"

    unsupported = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    answers = exchange(
        server,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hello"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hello", "_meta": unsupported}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "hello", "_meta": META}},
    )
    codes = {answer["id"]: answer.get("error", {}).get("code") for answer in answers}
    assert codes == {1: -32602, 2: -32022, 3: -32601, 4: None}


def test_an_initialize_that_breaks_its_schema_is_refused_and_selects_no_era() -> None:
    """-32602 naming what is missing; and the process stays unsettled, so a request without
    `_meta` after it is a modern one lacking `_meta`, not a legacy one."""
    server = Server("dual", "1")
    init, listing = exchange(
        server,
        {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    )
    assert init["error"] == {
        "code": -32602,
        "message": "Invalid params: initialize needs params.protocolVersion (a string), params.capabilities "
        "(an object), params.clientInfo (an object with a string name and version)",
    }
    assert listing["error"]["message"] == "Invalid params: params._meta is required and must be an object"


def test_a_progress_token_that_is_no_string_or_integer_is_refused_in_both_eras() -> None:
    server = Server("dual", "1")
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
    answers = exchange(
        server,
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {**META, "progressToken": 1.5}}},
        {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"_meta": {"progressToken": True}}},
    )
    errors = {answer["id"]: answer.get("error", {}).get("message") for answer in answers}
    assert errors == {
        1: "Invalid params: params._meta.progressToken must be a string or an integer, not the number 1.5",
        2: None,
        3: "Invalid params: params._meta.progressToken must be a string or an integer, not a boolean",
    }
