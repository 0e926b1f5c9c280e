"""`client.listen()` against the real server's subscriptions/listen streams: the acknowledged
filter, notifications tagged with the subscription id, cache invalidation, graceful end by the
server, cancellation by closing, and re-listening with a new id after a broken stream."""

from __future__ import annotations

import asyncio
import time

import pytest

from mcpref import CacheHints, Server, StreamableHTTP
from mcpref.client import TransportError
from mcpref.meta import SUBSCRIPTION_ID_KEY
from tests.client.conftest import connect, endpoint

pytestmark = pytest.mark.anyio

server = Server(
    "listen-server",
    "1.0.0",
    cache_for={
        method: CacheHints(60_000, "public")
        for method in ("tools/list", "resources/list", "resources/templates/list", "resources/read")
    },
)
served: list[str] = []


@server.tool()
def add_tool() -> str:
    """Register one more tool: every tools listener hears about it."""
    server.tool(name=f"extra_{len(server.tools)}")(lambda: "")
    return "added"


@server.tool(input_schema={"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]})
def touch(uri: str) -> str:
    server.notify_resource_updated(uri)
    return "touched"


@server.tool()
def change_resources() -> str:
    server.notify_list_changed("resources")
    return "changed"


@server.tool()
def end_listeners() -> str:
    server.subscriptions.end_all()
    return "ended"


@server.resource("memo://a")
def memo_a() -> str:
    served.append("memo://a")
    return "a"


app = StreamableHTTP(server, keepalive_seconds=0.05)


async def eventually(condition, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_the_acknowledgement_says_what_the_server_honours(url):
    async with (
        connect(url) as (client, traffic),
        client.listen(
            tools_list_changed=True, prompts_list_changed=True, resource_subscriptions=["memo://a"]
        ) as subscription,
    ):
        assert subscription.honored == {"toolsListChanged": True, "resourceSubscriptions": ["memo://a"]}
    listen = traffic.bodies[-1]
    assert listen["method"] == "subscriptions/listen"
    assert listen["params"]["notifications"] == {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourceSubscriptions": ["memo://a"],
    }
    assert subscription.subscription_id == listen["id"]
    assert traffic.requests[-1].headers["mcp-method"] == "subscriptions/listen"


async def test_list_changes_arrive_and_make_the_cached_list_stale(url):
    async with connect(url) as (client, traffic):
        before = await client.list_tools()
        await client.list_tools()
        assert traffic.methods.count("tools/list") == 1  # cached for 60 s
        async with client.listen({"toolsListChanged": True}) as subscription:
            await client.call_tool("add_tool")
            note = await asyncio.wait_for(anext(subscription), 5)
        after = await client.list_tools()
    assert note.method == "notifications/tools/list_changed"
    assert note.params["_meta"][SUBSCRIPTION_ID_KEY] == subscription.subscription_id
    assert len(after) == len(before) + 1
    assert traffic.methods.count("tools/list") == 2


async def test_a_resources_change_makes_both_resource_lists_stale(url):
    async with connect(url) as (client, traffic):
        await client.list_resources()
        await client.list_resource_templates()
        async with client.listen(resources_list_changed=True) as subscription:
            await client.call_tool("change_resources")
            note = await asyncio.wait_for(anext(subscription), 5)
        await client.list_resources()
        await client.list_resource_templates()
    assert note.method == "notifications/resources/list_changed"
    assert traffic.methods.count("resources/list") == 2
    assert traffic.methods.count("resources/templates/list") == 2


async def test_resource_updates_only_for_subscribed_uris(url):
    served.clear()
    async with connect(url) as (client, _):
        await client.read_resource("memo://a")
        async with client.listen(resource_subscriptions=["memo://a"]) as subscription:
            await client.call_tool("touch", {"uri": "memo://elsewhere"})
            await client.call_tool("touch", {"uri": "memo://a"})
            note = await asyncio.wait_for(anext(subscription), 5)
        await client.read_resource("memo://a")
    assert (note.method, note.params["uri"]) == ("notifications/resources/updated", "memo://a")
    assert served == ["memo://a", "memo://a"]  # the update dropped the cached read


async def test_the_server_ends_the_subscription_gracefully(url):
    async with connect(url) as (client, _), client.listen(tools_list_changed=True) as subscription:
        await client.call_tool("end_listeners")
        notes = [note async for note in subscription]
    assert notes == []
    assert subscription.ended_by_server


async def test_closing_the_stream_cancels_the_subscription(url):
    async with connect(url) as (client, _):
        subscription = client.listen(tools_list_changed=True)
        await subscription.start()
        await eventually(lambda: len(server.subscriptions) == 1)
        await subscription.aclose()
        await eventually(lambda: len(server.subscriptions) == 0)


async def test_a_bare_loop_closes_the_stream_when_it_breaks(url):
    async with connect(url) as (client, _):
        heard = asyncio.Event()

        async def keep_changing() -> None:  # until the loop below hears one: it may not listen yet
            while not heard.is_set():
                await client.call_tool("add_tool")
                await asyncio.sleep(0.02)

        trigger = asyncio.create_task(keep_changing())
        async for note in client.listen(tools_list_changed=True):
            assert note.method == "notifications/tools/list_changed"
            heard.set()
            break
        await trigger
        await eventually(lambda: len(server.subscriptions) == 0)


async def test_closing_the_client_closes_its_subscriptions(url):
    async with connect(url) as (client, _):
        await client.listen(tools_list_changed=True).start()
        await eventually(lambda: len(server.subscriptions) == 1)
    await eventually(lambda: len(server.subscriptions) == 0)


def cut_listen_streams(inner, *, times: int | None):  # type: ignore[no-untyped-def]
    """A stand-in for a network drop, which no real component produces on demand: ends the first
    `times` listen responses (all if `None`) after their acknowledgement, without the listen result."""
    cut = 0

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        nonlocal cut
        method = dict(scope.get("headers") or []).get(b"mcp-method")
        if scope["type"] != "http" or method != b"subscriptions/listen" or (times is not None and cut >= times):
            await inner(scope, receive, send)
            return
        cut += 1
        chunks = 0

        async def cutting(message):  # type: ignore[no-untyped-def]
            nonlocal chunks
            if chunks > 1:
                return
            if message["type"] == "http.response.body":
                chunks += 1
                if chunks > 1:  # the first chunk after the acknowledgement (a keep-alive)
                    message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await inner(scope, receive, cutting)

    return app


async def test_a_broken_stream_is_listened_to_again_with_a_new_id():
    with endpoint(cut_listen_streams(app, times=1)) as url:
        async with connect(url) as (client, traffic), client.listen(tools_list_changed=True) as subscription:
            first_id = subscription.subscription_id
            waiting = asyncio.ensure_future(anext(subscription))
            while not waiting.done():  # the change must land after the re-listen: keep changing
                await client.call_tool("add_tool")
                await asyncio.sleep(0.02)
            note = waiting.result()
    listens = [body for body in traffic.bodies if body["method"] == "subscriptions/listen"]
    assert len(listens) == 2 and listens[0]["id"] == first_id and listens[1]["id"] != first_id
    assert note.params["_meta"][SUBSCRIPTION_ID_KEY] == subscription.subscription_id == listens[1]["id"]
    assert subscription.reconnects == 1
    assert subscription.honored == {"toolsListChanged": True}


async def test_a_stream_that_keeps_breaking_gives_up():
    with endpoint(cut_listen_streams(app, times=None)) as url:
        async with connect(url) as (client, traffic):
            subscription = client.listen(tools_list_changed=True, max_reconnects=2, backoff=0.01)
            with pytest.raises(TransportError, match="kept breaking"):
                async for _ in subscription:
                    pass
    assert traffic.methods.count("subscriptions/listen") == 3
