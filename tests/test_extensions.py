"""The extension hook (`mcpref.extensions`): what the core does for any extension, known to it or not."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest

from mcpref import MCPError, RequestContext, Server, StreamableHTTP
from mcpref.extensions import CallNext, Extension, declared
from mcpref.jsonrpc import INTERNAL_ERROR, MISSING_REQUIRED_CLIENT_CAPABILITY, Request
from mcpref.meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, read_request_meta
from tests.conftest import error_answer

EXT = "com.example/echo"
DECLARING = {"extensions": {EXT: {}}}


class Echo(Extension):
    """Adds `com.example/echo/say` and a `resultType` of its own, `echoed`."""

    id = EXT
    result_types = frozenset({"echoed"})
    name_fields = {"com.example/echo/say": "word"}

    def __init__(self) -> None:
        self.methods = {"com.example/echo/say": self._say}
        self.seen: list[str] = []

    def settings(self) -> dict[str, Any]:
        return {"loud": True}

    async def around(self, ctx: RequestContext, call_next: CallNext) -> Any:
        self.seen.append(ctx.method)
        return await call_next(ctx)

    async def _say(self, ctx: RequestContext) -> dict[str, Any]:
        return {"word": ctx.params.get("word")}


class Liar(Extension):
    """Answers with its own resultType even to clients that never declared it: a bug the core stops."""

    id = "com.example/liar"
    result_types = frozenset({"lie"})

    async def around(self, ctx: RequestContext, call_next: CallNext) -> Any:
        return {"resultType": "lie"} if ctx.method == "server/discover" else await call_next(ctx)


def handle(server: Server, method: str, params: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any]:
    meta = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: capabilities}
    return asyncio.run(server.handle(Request(1, method, {**params, "_meta": meta})))


@pytest.fixture
def server() -> Server:
    server = Server("unit", "1")
    server.add_extension(Echo())
    return server


def test_discover_lists_the_extension_with_its_settings(server: Server) -> None:
    result = handle(server, "server/discover", {}, {})
    assert result["capabilities"]["extensions"] == {EXT: {"loud": True}}


def test_a_server_without_extensions_advertises_none() -> None:
    assert "extensions" not in handle(Server("unit", "1"), "server/discover", {}, {})["capabilities"]


def test_an_extension_method_is_served_to_a_declaring_client(server: Server) -> None:
    assert handle(server, "com.example/echo/say", {"word": "hi"}, DECLARING)["word"] == "hi"


def test_an_extension_method_asks_an_undeclaring_client_to_declare_it(server: Server) -> None:
    with pytest.raises(MCPError) as caught:
        handle(server, "com.example/echo/say", {"word": "hi"}, {})
    assert caught.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert caught.value.data == {"requiredCapabilities": {"extensions": {EXT: {}}}}


def test_around_sees_every_request(server: Server) -> None:
    handle(server, "server/discover", {}, {})
    assert server.extensions[EXT].seen == ["server/discover"]  # type: ignore[attr-defined]


def test_an_extension_result_type_never_reaches_an_undeclaring_client(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("unit", "1")
    server.add_extension(Liar())
    with caplog.at_level(logging.ERROR, "mcpref.server"), pytest.raises(MCPError) as caught:
        handle(server, "server/discover", {}, {})
    assert caught.value.code == INTERNAL_ERROR
    assert "without com.example/liar" in caplog.text
    assert handle(server, "server/discover", {}, {"extensions": {"com.example/liar": {}}})["resultType"] == "lie"


@pytest.mark.parametrize(
    "extension",
    [
        type("NoPrefix", (Extension,), {"id": "echo"})(),
        type("CoreMethod", (Extension,), {"id": "com.example/x", "methods": {"tools/list": None}})(),
        type("SameMethod", (Extension,), {"id": "com.example/x", "methods": {"com.example/echo/say": None}})(),
        type("CoreResultType", (Extension,), {"id": "com.example/x", "result_types": frozenset({"complete"})})(),
        type("SameResultType", (Extension,), {"id": "com.example/x", "result_types": frozenset({"echoed"})})(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_clashes_are_refused_at_start_up(server: Server, extension: Extension) -> None:
    with pytest.raises(ValueError):
        server.add_extension(extension)


def test_mcp_name_mirrors_the_field_the_extension_names(server: Server) -> None:
    async def post(name: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=StreamableHTTP(server))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            meta = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: DECLARING}
            params = {"word": "hi", "_meta": meta}
            body = {"jsonrpc": "2.0", "id": 1, "method": "com.example/echo/say", "params": params}
            headers = {
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "com.example/echo/say",
                "Mcp-Name": name,
            }
            return await client.post("/mcp", json=body, headers=headers)

    assert asyncio.run(post("hi")).json()["result"]["word"] == "hi"
    refused = asyncio.run(post("bye"))
    assert error_answer(refused, 400)["code"] == -32020


class Plain(Extension):
    """Adds a method and nothing else: the default `around` must pass each request on unchanged."""

    id = "com.example/plain"

    def __init__(self) -> None:
        self.methods = {"com.example/plain/echo": self._echo}

    async def _echo(self, ctx: RequestContext) -> dict[str, Any]:
        return {"echo": ctx.params.get("word"), "method": ctx.method}


def test_the_default_around_passes_the_request_on_unchanged() -> None:
    server = Server("unit", "1")
    server.add_extension(Plain())
    declaring = {"extensions": {"com.example/plain": {}}}
    answer = handle(server, "com.example/plain/echo", {"word": "hi"}, declaring)
    assert (answer["echo"], answer["method"]) == ("hi", "com.example/plain/echo")
    assert handle(server, "server/discover", {}, {})["capabilities"]["extensions"] == {"com.example/plain": {}}


@pytest.mark.parametrize(
    ("capabilities", "expected"),
    [
        ({"extensions": {EXT: {}}}, True),
        ({"extensions": {EXT: {"loud": True}, "com.example/other": {}}}, True),
        ({"extensions": {"com.example/other": {}}}, False),
        ({"extensions": [EXT]}, False),
        ({}, False),
        ([EXT], False),
        (None, False),
    ],
)
def test_declared_reads_the_extensions_object_of_capabilities(capabilities: Any, expected: bool) -> None:
    assert declared(capabilities, EXT) is expected


def test_declared_reads_a_requests_context_too() -> None:
    meta = read_request_meta({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: DECLARING}})
    assert declared(RequestContext(1, "tools/list", {}, meta), EXT)
    assert not declared(RequestContext(1, "tools/list", {}, meta), "com.example/other")
