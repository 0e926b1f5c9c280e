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
