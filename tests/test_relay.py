"""The relay between instances: what a change notification carries across, and what the server
does with one (tests/deployment/ runs `PostgresRelay` itself, across real instances)."""

from __future__ import annotations

from mcpref import Server
from mcpref.jsonrpc import Request
from mcpref.relay import MAX_PAYLOAD_BYTES, STALE, Change, decode, encode


class Recorded:
    """A relay that keeps what the server asks it to send."""

    def __init__(self) -> None:
        self.sent: list[Change] = []

    async def start(self, deliver: object) -> None: ...

    def send(self, change: Change) -> None:
        self.sent.append(change)

    async def stop(self) -> None: ...


def test_a_payload_carries_the_sender_and_the_kind_or_uri_and_nothing_else() -> None:
    for change in (Change(list="tools"), Change(uri="file:///a b/é"), STALE):
        assert decode(encode("me", change)) == ("me", change)
    assert encode("me", Change(uri="memo://x")) == '{"from": "me", "uri": "memo://x"}'


def test_a_change_too_large_for_a_notify_payload_goes_as_stale() -> None:
    huge = Change(uri="memo://" + "x" * MAX_PAYLOAD_BYTES)
    assert decode(encode("me", huge)) == ("me", STALE)
    assert len(encode("me", Change(uri="memo://" + "x" * (MAX_PAYLOAD_BYTES - 40))).encode()) <= MAX_PAYLOAD_BYTES


def test_a_payload_this_module_did_not_write_is_ignored() -> None:
    for payload in (
        "",
        "not json",
        "[]",
        '{"list": "tools"}',
        '{"from": 1, "list": "tools"}',
        '{"from": "x", "list": "secrets"}',
    ):
        assert decode(payload) is None


def listening(server: Server, **filters: object) -> object:
    return server.open_subscription(Request("l", "subscriptions/listen", {"notifications": filters}))


def test_the_server_relays_its_own_changes_and_tells_its_listeners_at_once() -> None:
    server = Server("s", "1")
    server.tool(name="t")(lambda: "")
    server.resource("memo://a")(lambda: "a")
    server.relay = relay = Recorded()
    subscription = listening(server, toolsListChanged=True, resourceSubscriptions=["memo://a"])
    server.notify_list_changed("tools")
    server.notify_resource_updated("memo://a")
    assert relay.sent == [Change(list="tools"), Change(uri="memo://a")]
    assert subscription.queue.qsize() == 2  # type: ignore[attr-defined]


def test_a_relayed_change_reaches_this_instances_listeners_and_is_not_sent_again() -> None:
    server = Server("s", "1")
    server.tool(name="t")(lambda: "")
    server.relay = relay = Recorded()
    subscription = listening(server, toolsListChanged=True)
    server._relayed(Change(list="tools"))
    assert relay.sent == []
    assert subscription.queue.get_nowait()["method"] == "notifications/tools/list_changed"  # type: ignore[attr-defined]


def test_a_relayed_resource_update_reaches_only_listeners_who_may_see_it() -> None:
    server = Server("s", "1")
    server.resource("memo://private", visible=lambda principal: principal == "alice")(lambda: "p")
    alice = server.open_subscription(
        Request("a", "subscriptions/listen", {"notifications": {"resourceSubscriptions": ["memo://private"]}}),
        principal="alice",
    )
    mallory = server.open_subscription(
        Request("m", "subscriptions/listen", {"notifications": {"resourceSubscriptions": ["memo://private"]}}),
        principal="mallory",
    )
    server._relayed(Change(uri="memo://private"))
    assert alice.queue.qsize() == 1 and mallory.queue.qsize() == 0


def test_stale_tells_each_stream_everything_it_asked_for_and_may_see() -> None:
    server = Server("s", "1")
    server.tool(name="t")(lambda: "")
    server.prompt(name="p")(lambda: "x")
    server.resource("memo://open")(lambda: "o")
    server.resource("memo://private", visible=lambda principal: principal == "alice")(lambda: "p")
    uris = ["memo://open", "memo://private"]
    everything = {"toolsListChanged": True, "promptsListChanged": True, "resourceSubscriptions": uris}
    mallory = server.open_subscription(
        Request("m", "subscriptions/listen", {"notifications": everything}), principal="mallory"
    )
    tools_only = listening(server, toolsListChanged=True)
    server._relayed(STALE)
    heard = [mallory.queue.get_nowait() for _ in range(mallory.queue.qsize())]
    assert [(note["method"], note["params"].get("uri")) for note in heard] == [
        ("notifications/tools/list_changed", None),
        ("notifications/prompts/list_changed", None),
        ("notifications/resources/updated", "memo://open"),
    ]
    assert tools_only.queue.qsize() == 1  # type: ignore[attr-defined]
