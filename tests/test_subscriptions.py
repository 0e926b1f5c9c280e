"""The subscription hub: filters honoured, tagging, bounds, graceful ends."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from mcpref import MCPError, Server
from mcpref.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, Request
from mcpref.subscriptions import RESOURCE_UPDATED, Mailbox, SubscriptionHub
from mcpref.validation import check_message

OFFERED = {"tools": {"listChanged": True}, "resources": {"subscribe": True, "listChanged": True}}


def test_the_acknowledgement_holds_only_what_is_offered_and_asked() -> None:
    hub = SubscriptionHub()
    subscription = hub.open(
        "l-1",
        {
            "notifications": {
                "toolsListChanged": True,
                "promptsListChanged": True,
                "resourcesListChanged": False,
                "resourceSubscriptions": ["a://1", "a://1"],
            }
        },
        OFFERED,
    )
    ack = subscription.acknowledgement()
    check_message(ack)
    assert ack["params"] == {
        "_meta": {"io.modelcontextprotocol/subscriptionId": "l-1"},
        "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["a://1"]},
    }


def test_only_wanted_notifications_are_queued_and_each_is_tagged() -> None:
    hub = SubscriptionHub()
    tools = hub.open(1, {"notifications": {"toolsListChanged": True}}, OFFERED)
    files = hub.open(2, {"notifications": {"resourceSubscriptions": ["file:///a"]}}, OFFERED)
    hub.publish("notifications/tools/list_changed")
    hub.publish("notifications/resources/updated", {"uri": "file:///a"})
    hub.publish("notifications/resources/updated", {"uri": "file:///b"})
    assert tools.queue.qsize() == 1 and files.queue.qsize() == 1
    note = files.queue.get_nowait()
    check_message(note)
    assert note["params"] == {"uri": "file:///a", "_meta": {"io.modelcontextprotocol/subscriptionId": 2}}
    assert tools.queue.get_nowait()["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1


@pytest.mark.parametrize("params", [{}, {"notifications": []}, {"notifications": {"resourceSubscriptions": "a://1"}}])
def test_a_malformed_filter_is_invalid_params(params: dict) -> None:
    with pytest.raises(MCPError) as caught:
        SubscriptionHub().open(1, params, OFFERED)
    assert caught.value.code == INVALID_PARAMS


def test_the_hub_is_bounded() -> None:
    hub = SubscriptionHub(max_subscriptions=2)
    first = hub.open(1, {"notifications": {}}, OFFERED)
    hub.open(2, {"notifications": {}}, OFFERED)
    with pytest.raises(MCPError) as caught:
        hub.open(3, {"notifications": {}}, OFFERED)
    assert caught.value.http_status == 503
    hub.close(first)
    hub.open(4, {"notifications": {}}, OFFERED)


def test_a_subscriber_that_cannot_keep_up_is_ended_not_buffered_forever() -> None:
    hub = SubscriptionHub(queue_size=3)
    slow = hub.open(1, {"notifications": {"toolsListChanged": True}}, OFFERED)
    for _ in range(10):
        hub.publish("notifications/tools/list_changed")
    assert len(hub) == 0
    drained = [slow.queue.get_nowait() for _ in range(slow.queue.qsize())]
    assert drained[-1] is None and len(drained) <= 3


def test_end_all_sends_each_stream_its_completion() -> None:
    hub = SubscriptionHub()
    subscription = hub.open("x", {"notifications": {}}, OFFERED)
    hub.end_all()
    assert subscription.queue.get_nowait() is None
    assert len(hub) == 0


def test_registry_changes_reach_listeners_through_the_server() -> None:
    server = Server("s", "1")
    server.tool(name="first")(lambda: "")
    subscription = server.open_subscription(
        Request("l", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    )
    server.tool(name="second")(lambda: "")
    server.tools.remove("first")
    assert subscription.queue.qsize() == 2
    final = server.finish_subscription(subscription)
    check_message({"jsonrpc": "2.0", "id": "l", "result": final}, "subscriptions/listen")
    assert final["_meta"]["io.modelcontextprotocol/subscriptionId"] == "l"


def listened_changes(server: Server, flag: str, change) -> int:  # type: ignore[no-untyped-def]
    subscription = server.open_subscription(Request("l", "subscriptions/listen", {"notifications": {flag: True}}))
    change()
    return subscription.queue.qsize()


def test_resource_list_changes_reach_listeners() -> None:
    server = Server("s", "1")
    server.resource("memo://a")(lambda: "a")
    assert listened_changes(server, "resourcesListChanged", lambda: server.resource("memo://b")(lambda: "b")) == 1


def test_prompt_list_changes_reach_listeners() -> None:
    server = Server("s", "1")
    server.prompt(name="first")(lambda: "x")
    assert listened_changes(server, "promptsListChanged", lambda: server.prompts.remove("first")) == 1


def test_a_listen_result_says_its_result_type() -> None:
    server = Server("s", "1")
    server.tool(name="t")(lambda: "")
    subscription = server.open_subscription(Request(4, "subscriptions/listen", {"notifications": {}}))
    final = server.finish_subscription(subscription)
    assert final["resultType"] == "complete"
    assert final["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "s", "version": "1"}


def test_a_listener_gets_only_the_kinds_it_asked_for() -> None:
    hub = SubscriptionHub()
    prompts_only = hub.open(1, {"notifications": {"promptsListChanged": True}}, {**OFFERED, "prompts": {}})
    for kind in ("tools", "resources"):
        hub.publish(f"notifications/{kind}/list_changed")
    hub.publish("notifications/resources/updated", {"uri": "file:///a"})
    assert prompts_only.queue.qsize() == 0
    hub.publish("notifications/prompts/list_changed")
    assert prompts_only.queue.get_nowait()["method"] == "notifications/prompts/list_changed"


def refusal(hub: SubscriptionHub, params: dict, caller: str = "") -> MCPError:  # type: ignore[type-arg]
    with pytest.raises(MCPError) as caught:
        hub.open(99, params, OFFERED, caller)
    return caught.value


def test_a_full_hub_is_503_with_retry_after_and_says_its_limit() -> None:
    hub = SubscriptionHub(max_subscriptions=1)
    hub.open(1, {"notifications": {}}, OFFERED)
    refused = refusal(hub, {"notifications": {}})
    assert (refused.code, refused.http_status, refused.http_headers) == (INTERNAL_ERROR, 503, [(b"retry-after", b"5")])
    assert refused.message == "Too many open subscriptions (limit 1); retry later"
    assert len(hub) == 1


def test_one_caller_cannot_take_every_slot() -> None:
    hub = SubscriptionHub(max_per_caller=2)
    mine = [hub.open(n, {"notifications": {}}, OFFERED, "alice") for n in range(2)]
    refused = refusal(hub, {"notifications": {}}, "alice")
    assert (refused.code, refused.http_status, refused.http_headers) == (INTERNAL_ERROR, 503, [(b"retry-after", b"5")])
    assert refused.message == "Too many open subscriptions for one caller (limit 2); retry later"
    hub.open(3, {"notifications": {}}, OFFERED, "bob")  # another caller has its own share
    anonymous = SubscriptionHub(max_per_caller=1)
    anonymous.open(1, {"notifications": {}}, OFFERED)
    refusal(anonymous, {"notifications": {}}, "")  # no caller named is the anonymous caller ""
    hub.close(mine[0])
    hub.close(mine[0])  # closing twice frees one slot, not two
    hub.open(4, {"notifications": {}}, OFFERED, "alice")
    refusal(hub, {"notifications": {}}, "alice")
    assert len(hub) == 3


def test_a_caller_whose_streams_all_closed_starts_a_fresh_share() -> None:
    hub = SubscriptionHub(max_per_caller=1)
    for n in range(3):
        hub.close(hub.open(n, {"notifications": {}}, OFFERED, "alice"))
    assert len(hub) == 0
    ended = hub.open(9, {"notifications": {"toolsListChanged": True}}, OFFERED, "alice")
    hub.end_all()
    hub.open(10, {"notifications": {}}, OFFERED, "alice")  # the share of an ended stream is freed too
    assert ended.queue.get_nowait() is None


@pytest.mark.parametrize(
    ("uris", "message"),
    [
        (["a://1"] * 4, "Invalid params: resourceSubscriptions lists 4 URIs; the limit is 3"),
        (["a" * 6, "b" * 5], "Invalid params: resourceSubscriptions holds 11 characters of URIs; the limit is 10"),
    ],
)
def test_a_filter_over_its_bounds_is_invalid_params_naming_the_limit(uris: list[str], message: str) -> None:
    hub = SubscriptionHub(max_filter_uris=3, max_filter_bytes=10)
    refused = refusal(hub, {"notifications": {"resourceSubscriptions": uris}})
    assert (refused.code, refused.message) == (INVALID_PARAMS, message)
    assert len(hub) == 0


def test_a_filter_at_its_bounds_is_honoured() -> None:
    hub = SubscriptionHub(max_filter_uris=3, max_filter_bytes=10)
    subscription = hub.open(1, {"notifications": {"resourceSubscriptions": ["a" * 4, "b" * 3, "c" * 3]}}, OFFERED)
    assert subscription.honoured == {"resourceSubscriptions": ["aaaa", "bbb", "ccc"]}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "Invalid params: subscriptions/listen needs a `notifications` object"),
        (
            {"notifications": {"resourceSubscriptions": "a://1"}},
            "Invalid params: resourceSubscriptions must be a list of URIs",
        ),
        (
            {"notifications": {"resourceSubscriptions": ["a://1", 2]}},
            "Invalid params: resourceSubscriptions must be a list of URIs",
        ),
    ],
)
def test_a_malformed_filter_is_refused_in_words(params: dict, message: str) -> None:  # type: ignore[type-arg]
    assert refusal(SubscriptionHub(), params).message == message


def test_resource_updates_are_honoured_only_where_subscribe_is_offered() -> None:
    hub = SubscriptionHub()
    filter_ = {"notifications": {"resourceSubscriptions": ["a://1"], "resourcesListChanged": True}}
    assert hub.open(1, filter_, {"resources": {"listChanged": True}}).honoured == {"resourcesListChanged": True}
    assert hub.open(2, filter_, {"resources": {"subscribe": False}}).honoured == {"resourcesListChanged": True}
    assert hub.open(3, {"notifications": {"resourceSubscriptions": []}}, OFFERED).honoured == {}
    assert hub.open(5, filter_, {"tools": {}}).honoured == {}, "no resources capability at all"
    flags = {"notifications": {"toolsListChanged": 1, "promptsListChanged": "yes"}}
    assert hub.open(4, flags, {"tools": {}, "prompts": {}}).honoured == {}, "only true turns a flag on"


def test_a_listen_result_and_acknowledgement_carry_the_subscription_id() -> None:
    subscription = SubscriptionHub().open("l-7", {"notifications": {"toolsListChanged": True}}, OFFERED)
    assert subscription.completion() == {
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/subscriptionId": "l-7"},
    }
    assert subscription.acknowledgement() == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "l-7"},
            "notifications": {"toolsListChanged": True},
        },
    }


def test_a_notification_keeps_its_params_and_gets_the_id_in_meta() -> None:
    hub = SubscriptionHub()
    subscription = hub.open(5, {"notifications": {"resourceSubscriptions": ["a://1"]}}, OFFERED)
    hub.publish("notifications/resources/updated", {"uri": "a://1", "title": "A"})
    assert subscription.queue.get_nowait() == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "a://1", "title": "A", "_meta": {"io.modelcontextprotocol/subscriptionId": 5}},
    }
    hub.publish("notifications/resources/updated")  # no uri: nobody's
    assert subscription.queue.qsize() == 0


def test_a_slow_subscriber_keeps_the_newest_and_ends_with_its_completion() -> None:
    hub = SubscriptionHub(queue_size=2)
    slow = hub.open(1, {"notifications": {"resourceSubscriptions": ["a://1"]}}, OFFERED)
    for n in range(3):
        hub.publish("notifications/resources/updated", {"uri": "a://1", "n": n})
    assert len(hub) == 0
    drained = [slow.queue.get_nowait() for _ in range(slow.queue.qsize())]
    assert [item and item["params"]["n"] for item in drained] == [1, None]
    hub.publish("notifications/resources/updated", {"uri": "a://1", "n": 3})
    assert slow.queue.qsize() == 0, "an ended subscription hears nothing more"


def test_a_mailbox_is_bounded_and_first_in_first_out() -> None:
    box = Mailbox(2)
    assert box.qsize() == 0
    with pytest.raises(asyncio.QueueEmpty):
        box.get_nowait()
    box.put_nowait({"n": 1})
    box.put_nowait(None)
    with pytest.raises(asyncio.QueueFull):
        box.put_nowait({"n": 3})
    assert box.qsize() == 2
    assert [box.get_nowait(), box.get_nowait()] == [{"n": 1}, None]
    assert box.qsize() == 0


def test_a_waiting_reader_wakes_on_the_next_message() -> None:
    async def scenario() -> list[dict | None]:  # type: ignore[type-arg]
        box = Mailbox(4)
        reader = asyncio.ensure_future(box.get())
        await asyncio.sleep(0)
        assert not reader.done()
        box.put_nowait({"n": 1})
        box.put_nowait({"n": 2})
        first = await asyncio.wait_for(reader, 1)
        second = await asyncio.wait_for(box.get(), 1)
        box.put_nowait({"n": 3})  # no reader waits now
        return [first, second, box.get_nowait()]

    assert asyncio.run(scenario()) == [{"n": 1}, {"n": 2}, {"n": 3}]


def test_a_handler_thread_hands_its_notification_to_the_streams_loop() -> None:
    async def scenario() -> tuple[int, dict | None]:  # type: ignore[type-arg]
        hub = SubscriptionHub()
        subscription = hub.open(1, {"notifications": {"resourceSubscriptions": ["a://1"]}}, OFFERED)
        worker = threading.Thread(target=hub.publish, args=(RESOURCE_UPDATED, {"uri": "a://1"}))
        worker.start()
        worker.join()  # the loop has not run since: a notification queued from the thread would be here
        queued_from_the_thread = subscription.queue.qsize()
        return queued_from_the_thread, await asyncio.wait_for(subscription.queue.get(), 1)

    queued_from_the_thread, note = asyncio.run(scenario())
    assert queued_from_the_thread == 0
    assert note is not None and note["params"]["uri"] == "a://1"


def test_a_hub_never_served_on_a_loop_publishes_at_once() -> None:
    hub = SubscriptionHub()
    subscription = hub.open(1, {"notifications": {"toolsListChanged": True}}, OFFERED)
    hub.publish("notifications/tools/list_changed")
    assert subscription.queue.qsize() == 1


def test_the_default_bounds_are_the_documented_ones() -> None:
    """docs/patterns/production.md's table of limits states these."""
    hub = SubscriptionHub()
    assert (hub.max_subscriptions, hub.max_per_caller, hub.max_filter_uris, hub.max_filter_bytes, hub.queue_size) == (
        1000,
        32,
        256,
        32 * 1024,
        64,
    )


def heard(subscription) -> list[str]:  # type: ignore[no-untyped-def]
    """The URIs of the resource updates queued for `subscription`, in order."""
    uris = []
    while subscription.queue.qsize():
        uris.append(subscription.queue.get_nowait()["params"]["uri"])
    return uris


def test_a_listener_hears_only_of_resources_it_may_see() -> None:
    server = Server("s", "1")

    def only_alice(principal: str | None) -> bool:
        return principal == "alice"

    server.resource("memo://open")(lambda: "o")
    server.resource("memo://secret", visible=only_alice)(lambda: "s")
    server.resource_template("vault://{key}", visible=only_alice)(lambda key: key)
    uris = ["memo://open", "memo://secret", "vault://k", "memo://nowhere"]

    def listen(principal: str) -> Any:
        request = Request(principal, "subscriptions/listen", {"notifications": {"resourceSubscriptions": uris}})
        return server.open_subscription(request, principal, principal)

    alice, bob = listen("alice"), listen("bob")
    # Acknowledged alike: a URI hidden from bob is named back exactly as one that nothing serves.
    assert alice.acknowledgement()["params"]["notifications"] == {"resourceSubscriptions": uris}
    assert bob.acknowledgement()["params"]["notifications"] == {"resourceSubscriptions": uris}
    for uri in uris:
        server.notify_resource_updated(uri)
    assert heard(alice) == uris
    assert heard(bob) == ["memo://open", "memo://nowhere"]


def test_an_audience_is_asked_once_per_principal_and_crosses_threads() -> None:
    asked: list[str | None] = []

    def audience(principal: str | None) -> bool:
        asked.append(principal)
        return principal == "alice"

    async def scenario() -> list[list[str]]:
        hub = SubscriptionHub()
        params = {"notifications": {"resourceSubscriptions": ["a://1"]}}
        streams = [hub.open(n, params, OFFERED, principal=who) for n, who in enumerate(["alice", "bob", "alice"])]
        worker = threading.Thread(target=hub.publish, args=(RESOURCE_UPDATED, {"uri": "a://1"}, audience))
        worker.start()
        worker.join()
        await asyncio.sleep(0)  # the loop runs what the thread handed it
        return [heard(stream) for stream in streams]

    assert asyncio.run(scenario()) == [["a://1"], [], ["a://1"]]
    assert sorted(asked, key=str) == ["alice", "bob"]
