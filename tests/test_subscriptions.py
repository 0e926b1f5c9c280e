"""The subscription hub: filters honoured, tagging, bounds, graceful ends."""

from __future__ import annotations

import pytest

from mcpref import MCPError, Server
from mcpref.jsonrpc import INVALID_PARAMS, Request
from mcpref.subscriptions import SubscriptionHub
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
