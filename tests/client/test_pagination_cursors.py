"""Cursors are opaque (server/utilities/pagination.mdx §Implementation Guidelines): an empty
string is a cursor like any other, not the end of the list. Our own server never mints one, so a
small third-party-style server on a real uvicorn does."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpref.client import InvalidParams, ProtocolError
from tests.client.conftest import connect, endpoint

pytestmark = pytest.mark.anyio

TOOL = {"inputSchema": {"type": "object"}}


async def mcp(request: Request) -> JSONResponse:
    message: dict[str, Any] = await request.json()
    params = message.get("params", {})
    if "cursor" not in params:
        result = {"tools": [{"name": "first", **TOOL}], "nextCursor": ""}
    elif params["cursor"] == "":
        result = {"tools": [{"name": "second", **TOOL}]}
    else:
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": "cursor"}})
    return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {"resultType": "complete", **result}})


async def test_an_empty_string_cursor_is_followed() -> None:
    with endpoint(Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])) as url:
        async with connect(url, version="2026-07-28") as (client, traffic):
            tools = await client.list_tools()
    assert [tool["name"] for tool in tools] == ["first", "second"]
    assert [body["params"].get("cursor") for body in traffic.bodies] == [None, ""]


def cursors_from(sequence: list[str]) -> Starlette:
    """A server whose pages hand out `sequence` as their `nextCursor`s, one per page, then end."""
    served: list[int] = []

    async def pages(request: Request) -> JSONResponse:
        message: dict[str, Any] = await request.json()
        page = len(served)
        served.append(page)
        result: dict[str, Any] = {"resultType": "complete", "tools": [{"name": f"tool{page}", **TOOL}]}
        if page < len(sequence):
            result["nextCursor"] = sequence[page]
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result})

    return Starlette(routes=[Route("/mcp", pages, methods=["POST"])])


@pytest.mark.parametrize(
    ("sequence", "asked"),
    [
        # The same cursor again: without the check, a hostile server keeps list_tools() looping
        # forever (here it gives in after 20 pages, so a client without the check returns 21 tools).
        (["a"] * 20, [None, "a"]),
        # A cycle: a cursor seen two pages ago is as much a loop.
        (["a", "b"] * 10, [None, "a", "b"]),
    ],
)
async def test_a_repeated_cursor_is_refused_not_followed(sequence: list[str], asked: list[str | None]) -> None:
    with endpoint(cursors_from(sequence)) as url:
        async with connect(url, version="2026-07-28") as (client, traffic):
            with pytest.raises(ProtocolError, match="repeated nextCursor"):
                await client.list_tools()
    assert [body["params"].get("cursor") for body in traffic.bodies] == asked


def refusing(*, first_page: bool) -> Starlette:
    """A server that refuses (-32602) the cursor its first page hands out, or the first page too."""

    async def pages(request: Request) -> JSONResponse:
        message: dict[str, Any] = await request.json()
        if first_page or "cursor" in message["params"]:
            error = {"code": -32602, "message": "Invalid cursor"}
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": error})
        result = {"resultType": "complete", "tools": [{"name": "first", **TOOL}], "nextCursor": "gone"}
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result})

    return Starlette(routes=[Route("/mcp", pages, methods=["POST"])])


async def test_a_refused_cursor_starts_the_list_over_once_then_is_the_callers_error() -> None:
    """The refused cursor may come from a cached page gone stale, so the client reads the list
    again from the start (caching.mdx §Interaction with Pagination); refused again, the server
    means it, and its -32602 is raised as it came."""
    with endpoint(refusing(first_page=False)) as url:
        async with connect(url, version="2026-07-28") as (client, traffic):
            with pytest.raises(InvalidParams, match="Invalid cursor"):
                await client.list_tools()
    assert [body["params"].get("cursor") for body in traffic.bodies] == [None, "gone", None, "gone"]


async def test_a_refused_first_page_is_not_asked_for_again() -> None:
    """No cursor was sent, so no stale page can be the cause: the -32602 is the caller's at once."""
    with endpoint(refusing(first_page=True)) as url:
        async with connect(url, version="2026-07-28") as (client, traffic):
            with pytest.raises(InvalidParams):
                await client.list_tools()
    assert [body["params"].get("cursor") for body in traffic.bodies] == [None]


async def test_a_page_without_its_list_is_named() -> None:
    async def answer(request: Request) -> JSONResponse:
        message: dict[str, Any] = await request.json()
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {"resultType": "complete"}})

    with endpoint(Starlette(routes=[Route("/mcp", answer, methods=["POST"])])) as url:
        async with connect(url, version="2026-07-28") as (client, _):
            with pytest.raises(ProtocolError) as missing:
                await client.list_prompts()
    assert str(missing.value) == "prompts/list result has no 'prompts' list"
