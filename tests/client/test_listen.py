"""`client.listen()` against the real server's subscriptions/listen streams: the acknowledged
filter, notifications tagged with the subscription id, cache invalidation, graceful end by the
server, cancellation by closing, and re-listening with a new id after a broken stream."""

from __future__ import annotations

import asyncio
import time
import types

import pytest

from mcpref import CacheHints, Server, StreamableHTTP
from mcpref.client import Client, EraCache, InternalError, MethodNotFound, ProtocolError, ResultCache, TransportError
from mcpref.client._listen import ACKNOWLEDGED, Subscription, listen_filter
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


@server.resource("memo://b")
def memo_b() -> str:
    served.append("memo://b")
    return "b"


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
    # The listen is a request like any: an id of its own, never one another request had.
    assert isinstance(listen["id"], int) and [body["id"] for body in traffic.bodies].count(listen["id"]) == 1
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


async def test_a_quiet_stream_outlasts_the_clients_read_timeout(url):
    """A listen stream may say nothing for longer than any request should take: the client's
    read timeout (0.3 s here) bounds its requests, not the stream, which the server keeps quiet
    for 15 s between keep-alives by default."""
    quiet = StreamableHTTP(server)
    with endpoint(quiet) as quiet_url:
        async with (
            Client(quiet_url, timeout=0.3, era_cache=EraCache()) as client,
            client.listen(tools_list_changed=True, max_reconnects=0) as subscription,
        ):
            waiting = asyncio.ensure_future(anext(subscription))  # reading the quiet stream from now on
            await asyncio.sleep(0.6)
            await client.call_tool("add_tool")
            note = await asyncio.wait_for(waiting, 5)
    assert note.method == "notifications/tools/list_changed"
    assert subscription.reconnects == 0


async def test_a_change_makes_stale_only_what_it_names_on_its_own_server(url):
    """With one cache shared by clients of two servers, a change notification drops the results
    of the method it names (and of the one resource it names), from its own server only."""
    shared = ResultCache()
    served.clear()
    with endpoint(app) as other:
        async with connect(url, cache=shared) as (client, traffic), connect(other, cache=shared) as (bystander, seen):
            await bystander.list_tools()
            for uri in ("memo://a", "memo://b"):
                await client.read_resource(uri)
            await client.list_resources()
            await client.list_tools()
            async with client.listen(tools_list_changed=True, resource_subscriptions=["memo://a"]) as subscription:
                await client.call_tool("add_tool")
                assert (await asyncio.wait_for(anext(subscription), 5)).method == "notifications/tools/list_changed"
                await client.call_tool("touch", {"uri": "memo://a"})
                assert (await asyncio.wait_for(anext(subscription), 5)).method == "notifications/resources/updated"
            await bystander.list_tools()
            for uri in ("memo://a", "memo://b"):
                await client.read_resource(uri)
            await client.list_resources()
            await client.list_tools()
    assert seen.methods.count("tools/list") == 1  # the other server's list is still cached
    assert served == ["memo://a", "memo://b", "memo://a"]  # only the updated resource is read again
    assert traffic.methods.count("resources/list") == 1
    assert traffic.methods.count("tools/list") == 2


async def test_by_default_a_clients_subscription_reconnects_three_times_from_a_twentieth_of_a_second():
    async with Client("http://127.0.0.1:9/mcp", era_cache=EraCache()) as client:  # nothing is sent
        subscription = client.listen(tools_list_changed=True)
        chosen = client.listen(tools_list_changed=True, max_reconnects=7, backoff=0.5)
    assert (subscription.max_reconnects, subscription.backoff) == (3, 0.05)
    assert (chosen.max_reconnects, chosen.backoff) == (7, 0.5)


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


# -- the stream's rules, with the server's side scripted -----------------------------------------
# What a server may put on a listen stream includes things our server never sends (an error in
# place of the acknowledgement, a response for another id, a second acknowledgement): these tests
# hand `Subscription` scripted streams and state what the client does with each.


def ack(honored: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {"notifications": honored or {}}}


def note(method: str, subscription_id: int | None = None, **params) -> dict:  # type: ignore[no-untyped-def]
    if subscription_id is not None:
        params["_meta"] = {SUBSCRIPTION_ID_KEY: subscription_id}
    return {"jsonrpc": "2.0", "method": method, "params": params}


class Scripted:
    """`open_listen` for a `Subscription`: each listen gets the next id and the next script as
    its stream (a script item that is an exception is raised there); `forgotten` records `forget`."""

    def __init__(self, *scripts: list) -> None:
        self.scripts = list(scripts)
        self.opened: list[dict] = []
        self.forgotten: list[tuple] = []
        self.closed = 0

    async def open_listen(self, notifications: dict) -> tuple[int, object]:
        self.opened.append(notifications)
        script = self.scripts.pop(0)
        return len(self.opened), self._stream(script)

    async def _stream(self, script: list):  # type: ignore[no-untyped-def]
        try:
            for item in script:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.closed += 1

    def forget(self, method: str, /, **params) -> None:  # type: ignore[no-untyped-def]
        self.forgotten.append((method, params))

    def subscription(self, notifications: dict, **options) -> Subscription:  # type: ignore[no-untyped-def]
        return Subscription(self.open_listen, self.forget, notifications, backoff=0, **options)


@pytest.mark.parametrize("uris", ["memo://a", ["memo://a", 1]])
def test_resource_subscriptions_must_be_a_list_of_uri_strings(uris):
    with pytest.raises(TypeError, match="resource_subscriptions must be a list of URI strings"):
        listen_filter(None, {"resource_subscriptions": uris})


async def test_a_stream_that_ends_before_its_acknowledgement_is_a_transport_error():
    server_side = Scripted([])
    with pytest.raises(TransportError) as caught:
        await server_side.subscription({"toolsListChanged": True}).start()
    assert str(caught.value) == "the listen stream ended before its acknowledgement"
    assert server_side.closed == 1


async def test_a_listen_refused_with_an_error_raises_it_and_ends_the_subscription():
    refusal = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no subscriptions here"}}
    server_side = Scripted([refusal])
    subscription = server_side.subscription({"toolsListChanged": True})
    with pytest.raises(MethodNotFound, match="no subscriptions here"):
        await anext(subscription)
    assert [n async for n in subscription] == []  # ended: not listened to again
    assert len(server_side.opened) == 1 and server_side.closed == 1


async def test_a_stream_must_open_with_the_acknowledgement():
    server_side = Scripted([note("notifications/tools/list_changed", 1)])
    with pytest.raises(ProtocolError, match=f"must open with {ACKNOWLEDGED}"):
        await server_side.subscription({"toolsListChanged": True}).start()
    assert server_side.closed == 1


async def test_a_response_for_another_id_on_the_stream_is_a_protocol_error():
    server_side = Scripted([ack(), {"jsonrpc": "2.0", "id": 7, "result": {}}])
    async with server_side.subscription({"toolsListChanged": True}) as subscription:
        with pytest.raises(ProtocolError, match="a response for id 7"):
            await anext(subscription)


async def test_the_server_ending_the_listen_with_an_error_raises_it_and_ends_the_subscription():
    ending = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "shutting down"}}
    server_side = Scripted([ack(), ending])
    async with server_side.subscription({"toolsListChanged": True}) as subscription:
        with pytest.raises(InternalError, match="shutting down"):
            await anext(subscription)
        assert [n async for n in subscription] == []
    assert not subscription.ended_by_server  # that is the graceful end, a result
    assert server_side.closed == 1


async def test_only_this_subscriptions_notifications_are_handed_over_and_a_new_acknowledgement_updates_the_filter():
    server_side = Scripted(
        [
            ack({"toolsListChanged": True}),
            note("notifications/progress", 1, progressToken="t", progress=1),
            note("notifications/message", 1, level="info", data="x"),
            note("notifications/tools/list_changed", 2),  # another subscription's
            {"jsonrpc": "2.0", "id": "ask", "method": "ping", "params": {}},  # a request, not a notification
            ack({"toolsListChanged": True, "promptsListChanged": True}),
            note("notifications/prompts/list_changed", 1),
            note("notifications/tools/list_changed"),  # untagged: taken as ours
            {"jsonrpc": "2.0", "id": 1, "result": {}},
        ]
    )
    async with server_side.subscription({"toolsListChanged": True, "promptsListChanged": True}) as subscription:
        assert subscription.honored == {"toolsListChanged": True}
        methods = [n.method async for n in subscription]
    assert methods == ["notifications/prompts/list_changed", "notifications/tools/list_changed"]
    assert subscription.honored == {"toolsListChanged": True, "promptsListChanged": True}
    assert subscription.ended_by_server


async def test_after_a_reconnect_everything_the_filter_covers_is_stale():
    # Notifications sent while the stream was down are lost, so the client cannot know what changed.
    server_side = Scripted([ack()], [ack(), note("notifications/tools/list_changed", 2)])  # the first just ends
    wanted = {"toolsListChanged": True, "resourcesListChanged": True, "resourceSubscriptions": ["memo://a"]}
    async with server_side.subscription(wanted) as subscription:
        server_side.forgotten.clear()
        assert (await anext(subscription)).method == "notifications/tools/list_changed"
    assert server_side.forgotten[:4] == [
        ("tools/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "memo://a"}),
    ]
    assert subscription.reconnects == 1 and subscription.subscription_id == 2


async def test_a_transport_error_that_keeps_coming_is_raised_as_it_is():
    failing = [[ack(), TransportError("connection reset")] for _ in range(3)]
    server_side = Scripted(*failing)
    subscription = server_side.subscription({"toolsListChanged": True}, max_reconnects=2)
    with pytest.raises(TransportError, match="connection reset"):
        async for _ in subscription:
            pass
    assert len(server_side.opened) == 3


async def test_a_bare_loop_ends_when_the_server_ends_the_subscription_and_closes_it():
    server_side = Scripted(
        [ack(), note("notifications/tools/list_changed", 1), {"jsonrpc": "2.0", "id": 1, "result": {}}]
    )
    subscription = server_side.subscription({"toolsListChanged": True})
    assert [n.method async for n in subscription] == ["notifications/tools/list_changed"]
    assert subscription.ended_by_server and server_side.closed == 1


def test_each_filter_field_has_its_snake_case_keyword():
    from mcpref.client._listen import FILTER_KEYWORDS, _snake

    # Built at import time from the fields; checked again here, where a test can see the helper.
    assert {field: _snake(field) for field in FILTER_KEYWORDS.values()} == {
        "toolsListChanged": "tools_list_changed",
        "promptsListChanged": "prompts_list_changed",
        "resourcesListChanged": "resources_list_changed",
        "resourceSubscriptions": "resource_subscriptions",
    }


async def test_inside_async_with_leaving_a_loop_keeps_the_subscription_open():
    server_side = Scripted(
        [ack(), note("notifications/tools/list_changed", 1), note("notifications/prompts/list_changed", 1)]
    )
    async with server_side.subscription({"toolsListChanged": True, "promptsListChanged": True}) as subscription:
        async for first in subscription:  # noqa: B007 (the first one is all this loop is for)
            break
        await asyncio.sleep(0.05)  # time for a bare loop's generator to be finalized, which closes it
        assert server_side.closed == 0
        second = await anext(subscription)
    assert (first.method, second.method) == ("notifications/tools/list_changed", "notifications/prompts/list_changed")
    assert server_side.closed == 1


async def test_a_notification_whose_params_are_no_object_is_handed_over_with_none():
    server_side = Scripted([ack(), {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": [1]}])
    async with server_side.subscription({"toolsListChanged": True}) as subscription:
        received = await anext(subscription)
    assert (received.method, received.params) == ("notifications/tools/list_changed", {})
    assert server_side.forgotten == [("tools/list", {})]


async def test_each_notification_makes_stale_exactly_what_it_changed():
    server_side = Scripted(
        [
            ack(),
            note("notifications/resources/updated", 1, uri="memo://a"),
            note("notifications/resources/list_changed", 1, uri="memo://ignored"),
            note("notifications/resources/updated", 1, uri=["not", "a", "uri"]),
        ]
    )
    async with server_side.subscription({"resourcesListChanged": True, "resourceSubscriptions": ["memo://a"]}) as sub:
        for _ in range(3):
            await anext(sub)
    assert server_side.forgotten == [
        ("resources/read", {"uri": "memo://a"}),  # that one read, not every read
        ("resources/list", {}),
        ("resources/templates/list", {}),
    ]


async def test_starting_an_open_or_closed_subscription_listens_no_more():
    server_side = Scripted([ack()], [ack()])
    subscription = server_side.subscription({"toolsListChanged": True})
    await subscription.start()
    await subscription.start()
    assert len(server_side.opened) == 1
    await subscription.aclose()
    await subscription.start()
    assert len(server_side.opened) == 1


async def test_an_acknowledgement_without_a_filter_object_honours_nothing():
    junk = {"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {"notifications": "all"}}
    server_side = Scripted([junk, junk, note("notifications/tools/list_changed", 1)])
    async with server_side.subscription({"toolsListChanged": True}) as subscription:
        assert subscription.honored == {}
        subscription.honored = {"toolsListChanged": True}
        await anext(subscription)
        assert subscription.honored == {}


async def test_a_bare_loop_left_by_break_closes_the_subscription():
    server_side = Scripted(
        [ack(), note("notifications/tools/list_changed", 1), note("notifications/tools/list_changed", 1)]
    )
    subscription = server_side.subscription({"toolsListChanged": True})
    async for _ in subscription:
        break
    await eventually(lambda: server_side.closed == 1)
    assert [n async for n in subscription] == []  # closed for good


async def test_a_bare_loop_opens_without_counting_a_reconnect():
    server_side = Scripted([ack(), note("notifications/tools/list_changed", 1)])
    subscription = server_side.subscription({"toolsListChanged": True})
    assert (await anext(subscription)).method == "notifications/tools/list_changed"
    assert subscription.reconnects == 0 and server_side.forgotten == [("tools/list", {})]
    await subscription.aclose()


async def test_reconnects_are_counted_and_paced_by_jittered_exponential_backoff(monkeypatch):
    from mcpref.client import _listen

    sleeps: list[float] = []
    jitter: list[tuple[float, float]] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    def uniform(low: float, high: float) -> float:
        jitter.append((low, high))
        return 1.25

    monkeypatch.setattr(_listen, "asyncio", types.SimpleNamespace(sleep=sleep))
    monkeypatch.setattr(_listen, "random", types.SimpleNamespace(uniform=uniform))
    server_side = Scripted([ack()], [ack()], [ack()], [ack(), note("notifications/tools/list_changed", 4)])
    subscription = Subscription(server_side.open_listen, server_side.forget, {"toolsListChanged": True}, backoff=0.1)
    async with subscription:
        assert (await anext(subscription)).method == "notifications/tools/list_changed"
    assert subscription.reconnects == 3  # each listen that opened again counts
    assert sleeps == pytest.approx([0.1 * 1.25, 0.2 * 1.25, 0.4 * 1.25])
    assert jitter == [(0.5, 1.5)] * 3


async def test_a_subscription_that_gave_up_stays_closed():
    server_side = Scripted([ack()], [ack()])
    subscription = server_side.subscription({"toolsListChanged": True}, max_reconnects=1)
    with pytest.raises(TransportError, match=r"kept breaking \(2 times\)"):
        await anext(subscription)
    with pytest.raises(StopAsyncIteration):
        await anext(subscription)
    assert len(server_side.opened) == 2


def test_listen_filter_mistakes_are_named():
    with pytest.raises(TypeError) as caught:
        listen_filter(None, {"tool_changes": True, "everything": True})
    assert str(caught.value) == (
        "unknown listen filter keyword(s): everything, tool_changes; expected tools_list_changed, "
        "prompts_list_changed, resources_list_changed, resource_subscriptions"
    )
    with pytest.raises(TypeError) as caught:
        listen_filter(None, {"resource_subscriptions": "memo://a"})
    assert str(caught.value) == "resource_subscriptions must be a list of URI strings"
    with pytest.raises(ValueError) as caught:
        listen_filter(None, {"tools_list_changed": False})
    assert str(caught.value) == "listen() needs at least one notification type to subscribe to"


async def test_before_it_opens_a_subscription_knows_nothing_of_the_server():
    subscription = Scripted().subscription({"toolsListChanged": True})
    assert (subscription.honored, subscription.subscription_id, subscription.ended_by_server) == (None, None, False)
    assert subscription.reconnects == 0


async def test_by_default_a_breaking_stream_is_tried_three_more_times_from_a_twentieth_of_a_second(monkeypatch):
    from mcpref.client import _listen

    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    monkeypatch.setattr(_listen, "asyncio", types.SimpleNamespace(sleep=sleep))
    monkeypatch.setattr(_listen, "random", types.SimpleNamespace(uniform=lambda low, high: 1.0))
    server_side = Scripted(*[[ack()] for _ in range(5)])
    subscription = Subscription(server_side.open_listen, server_side.forget, {"toolsListChanged": True})
    with pytest.raises(TransportError, match=r"kept breaking \(4 times\)"):
        await anext(subscription)
    assert len(server_side.opened) == 4
    assert sleeps == pytest.approx([0.05, 0.1, 0.2])


async def test_an_error_while_closing_the_stream_is_not_the_callers():
    async def open_listen(notifications: dict) -> tuple[int, object]:
        async def stream():  # type: ignore[no-untyped-def]
            try:
                yield ack()
                yield note("notifications/tools/list_changed", 1)
            finally:
                raise TransportError("the connection was already gone")

        return 1, stream()

    subscription = Subscription(open_listen, lambda method, **params: None, {"toolsListChanged": True})
    await subscription.start()
    await subscription.aclose()  # no error: the subscription is closed either way
    assert [n async for n in subscription] == []
