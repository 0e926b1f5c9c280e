"""subscriptions/listen and MRTR over Streamable HTTP, under a real uvicorn."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from mcpref import Server, StreamableHTTP
from mcpref.mrtr import InputRequired, StateSealer, elicit_form
from mcpref.validation import check_message
from tests.conftest import META, MCPClient, mcp_body, mcp_headers

server = Server("listen-test", "1", max_subscriptions=3, state_sealer=StateSealer(b"s" * 32))


@server.tool()
def add_tool() -> str:
    """Register one more tool, which every tools listener hears about."""
    server.tool(name=f"extra_{len(server.tools)}")(lambda: "")
    return "added"


@server.tool()
def touch(ctx) -> str:  # type: ignore[no-untyped-def]
    server.notify_resource_updated("memo://a")
    return "touched"


@server.resource("memo://a")
def memo() -> str:
    return "a"


#: The principal the endpoint derives from `Authorization: Bearer alice` when no auth layer
#: verified one (a digest of the credentials: mcpref.transports.http._principal).
ALICE = hashlib.sha256(b"Bearer alice").hexdigest()[:32]


@server.resource("memo://alices", visible=lambda principal: principal == ALICE)
def alices_memo() -> str:
    return "for alice"


@server.tool()
def touch_alices_then_a() -> str:
    server.notify_resource_updated("memo://alices")
    server.notify_resource_updated("memo://a")
    return "touched"


@server.tool(input_schema={"type": "object", "properties": {"item": {"type": "string"}}})
def buy(item: str, ctx) -> str:  # type: ignore[no-untyped-def]
    answer = ctx.input_response("ok")
    if answer is None:
        return InputRequired({"ok": elicit_form(f"Buy {item}?", {"ok": {"type": "boolean"}})}, state={"item": item})
    return f"bought {ctx.state['item']}"


app = StreamableHTTP(server, keepalive_seconds=0.2)


def listen_body(request_id: object, notifications: dict) -> dict:
    return mcp_body("subscriptions/listen", {"notifications": notifications}, request_id)


@contextmanager
def listening(base_url: str, request_id: object, notifications: dict, **headers: str) -> Iterator[httpx.Response]:
    """A `subscriptions/listen` stream on its own connection, open for the `with` block."""
    with (
        httpx.Client(base_url=base_url, timeout=5) as http,
        http.stream(
            "POST",
            "/mcp",
            json=listen_body(request_id, notifications),
            headers=mcp_headers("subscriptions/listen", **headers),
        ) as response,
    ):
        yield response


def events(response: httpx.Response) -> Iterator[str]:
    """Each SSE event's data, or ':' for a comment (keep-alive) line."""
    for line in response.iter_lines():
        if line.startswith(":"):
            yield ":"
        elif line.startswith("data: "):
            yield line[6:]


def call_soon(base_url: str, name: str, delay: float = 0.3) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        with httpx.Client(base_url=base_url) as http:
            MCPClient(http).result("tools/call", {"name": name, "arguments": {}})

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_listen_acknowledges_then_streams_tagged_notifications(base_url: str) -> None:
    with listening(base_url, "listen-1", {"toolsListChanged": True, "promptsListChanged": True}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        stream = events(response)
        ack = json.loads(next(stream))
        check_message(ack)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        # prompts are not offered by this server, so only the tools flag is honoured
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        trigger = call_soon(base_url, "add_tool")
        note = next(data for data in stream if data != ":")
        trigger.join()
    message = json.loads(note)
    check_message(message)
    assert message == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}},
    }


def test_resource_updates_reach_only_subscribers_of_that_uri(base_url: str) -> None:
    with listening(base_url, 7, {"resourceSubscriptions": ["memo://a"]}) as response:
        stream = events(response)
        next(stream)
        trigger = call_soon(base_url, "touch")
        note = json.loads(next(data for data in stream if data != ":"))
        trigger.join()
    assert note["params"] == {"uri": "memo://a", "_meta": {"io.modelcontextprotocol/subscriptionId": 7}}


def test_a_listener_never_hears_of_a_resource_hidden_from_it(base_url: str) -> None:
    heard = {}
    for user in ("alice", "bob"):
        wanted = {"resourceSubscriptions": ["memo://alices", "memo://a"]}
        with listening(base_url, user, wanted, Authorization=f"Bearer {user}") as response:
            stream = events(response)
            # Acknowledged alike: to bob a hidden URI is one that nothing serves, which a filter may name.
            assert json.loads(next(stream))["params"]["notifications"] == wanted
            trigger = call_soon(base_url, "touch_alices_then_a")
            heard[user] = json.loads(next(data for data in stream if data != ":"))["params"]["uri"]
            trigger.join()
    assert heard == {"alice": "memo://alices", "bob": "memo://a"}


def test_idle_streams_get_keep_alive_comments(base_url: str) -> None:
    with listening(base_url, 1, {}) as response:
        stream = events(response)
        next(stream)
        assert next(stream) == ":"


def test_closing_the_stream_frees_the_subscription(base_url: str) -> None:
    for attempt in range(5):  # more than max_subscriptions: each one must be freed when its client leaves
        with listening(base_url, attempt, {}) as response:
            assert response.status_code == 200
            next(events(response))
        deadline = time.monotonic() + 3
        while len(server.subscriptions) and time.monotonic() < deadline:
            time.sleep(0.02)
    assert len(server.subscriptions) == 0


def test_too_many_listeners_get_503(base_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=5) as http:
        streams = [
            http.stream("POST", "/mcp", json=listen_body(i, {}), headers=mcp_headers("subscriptions/listen"))
            for i in range(3)
        ]
        opened = [stream.__enter__() for stream in streams]
        try:
            # Keep each event iterator alive: dropping one closes its connection (httpcore).
            readers = [events(response) for response in opened]
            for reader in readers:
                next(reader)
            refused = http.post("/mcp", json=listen_body(99, {}), headers=mcp_headers("subscriptions/listen"))
            assert refused.status_code == 503
            assert refused.json()["error"]["code"] == -32603
            assert refused.json()["id"] == 99
        finally:
            for stream in streams:
                stream.__exit__(None, None, None)


def test_a_malformed_filter_is_refused_before_the_stream_opens(client: MCPClient) -> None:
    assert client.error("subscriptions/listen", {"notifications": "all"}, status=200)["code"] == -32602


def test_a_shutdown_ends_each_stream_with_its_completion_result(base_url: str) -> None:
    with listening(base_url, "bye", {}) as response:
        stream = events(response)
        next(stream)
        server.subscriptions.end_all()
        final = json.loads(next(data for data in stream if data != ":"))
        assert list(stream) == []
    check_message(final, "subscriptions/listen")
    assert final["id"] == "bye"
    assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "bye"


def test_mrtr_round_trip_over_http_is_bound_to_the_caller(client: MCPClient) -> None:
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    alice = client.headers("tools/call", "buy", Authorization="Bearer alice")
    first = client.result("tools/call", {"name": "buy", "arguments": {"item": "tea"}}, headers=alice, meta=meta)
    assert first["resultType"] == "input_required"
    retry = {
        "name": "buy",
        "arguments": {"item": "tea"},
        "inputResponses": {"ok": {"action": "accept", "content": {"ok": True}}},
    }
    retry["requestState"] = first["requestState"]
    assert client.result("tools/call", retry, headers=alice, id=2, meta=meta)["content"][0]["text"] == "bought tea"
    mallory = client.headers("tools/call", "buy", Authorization="Bearer mallory")
    assert client.error("tools/call", retry, headers=mallory, id=3, meta=meta, status=200)["code"] == -32602
