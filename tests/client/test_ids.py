"""Request ids (basic/index.mdx §Requests): integers, never null, never reused by one client,
also when calls run concurrently."""

from __future__ import annotations

import asyncio

import pytest

from mcpref.examples.minimal_server import app as minimal_app
from tests.client.conftest import connect, endpoint

pytestmark = pytest.mark.anyio


async def test_request_ids_are_never_reused() -> None:
    with endpoint(minimal_app) as url:
        async with connect(url) as (client, traffic):
            await asyncio.gather(*(client.call_tool("echo", {"message": str(n)}) for n in range(5)))
            await client.list_tools()
    ids = [body["id"] for body in traffic.bodies if "id" in body]
    assert len(ids) >= 7 and len(set(ids)) == len(ids)
    assert all(type(i) is int for i in ids)


async def test_progress_tokens_are_unique_among_active_requests() -> None:
    """progress.mdx §Progress Flow: a token names one active request."""
    with endpoint(minimal_app) as url:
        async with connect(url) as (client, traffic):
            await asyncio.gather(
                *(client.call_tool("echo", {"message": str(n)}, on_progress=lambda _: None) for n in range(4))
            )
    tokens = [body["params"]["_meta"]["progressToken"] for body in traffic.bodies if body["method"] == "tools/call"]
    assert len(tokens) == 4 and len(set(tokens)) == 4
    assert all(isinstance(token, str | int) and not isinstance(token, bool) for token in tokens)
