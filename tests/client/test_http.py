"""The client's Streamable HTTP transport: what each kind of answer becomes. The answers here
(broken JSON, a JSON body that is no JSON-RPC, an SSE stream with other events, a refused
notification) are ones our server never gives, so stand-in apps give them, served by a real
uvicorn; the client's side is the real one."""

from __future__ import annotations

import httpx
import pytest

from mcpref.client import InvalidRequest, ProtocolError, SessionExpired, TransportError
from mcpref.client._http import HTTPTransport
from mcpref.meta import PROTOCOL_VERSION_KEY
from tests.client.conftest import connect, endpoint

pytestmark = pytest.mark.anyio

REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def replying(status: int, body: bytes, content_type: str | None = "application/json", **headers: str):  # type: ignore[no-untyped-def]
    """A stand-in that reads the request and answers every POST with `status` and `body`."""
    seen: list[dict] = []

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        seen.append({key.decode(): value.decode() for key, value in scope["headers"]})
        pairs = [(b"content-type", content_type.encode())] if content_type else []
        pairs += [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
        await send({"type": "http.response.start", "status": status, "headers": pairs})
        await send({"type": "http.response.body", "body": body})

    app.seen = seen  # type: ignore[attr-defined]
    return app


async def exchange(url: str, message: dict = REQUEST) -> list[dict]:
    async with httpx.AsyncClient(timeout=10) as http:
        transport = HTTPTransport(url, http)
        return [item async for item in transport.exchange(message)]


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (200, b"{not json", "the server sent invalid JSON: "),
        (200, b"[1, 2]", "the server sent something that is not a JSON-RPC 2.0 message"),
        (
            200,
            b'{"jsonrpc": "1.0", "id": 1, "result": {}}',
            "the server sent something that is not a JSON-RPC 2.0 message",
        ),
        (400, b"{not json", "the server sent invalid JSON: "),
    ],
)
async def test_an_answer_that_is_no_json_rpc_message_is_a_transport_error_with_its_status(status, body, error):
    with endpoint(replying(status, body)) as url, pytest.raises(TransportError) as caught:
        await exchange(url)
    assert str(caught.value).startswith(error)
    assert caught.value.status_code == status


@pytest.mark.parametrize(
    ("status", "body", "content_type"),
    [
        (400, b'{"jsonrpc": "2.0", "id": 1, "result": {}}', "application/json"),  # a result with a 4xx
        (200, b"", "application/json"),  # nothing
        (200, b'{"jsonrpc": "2.0", "id": 1, "result": {}}', "text/plain"),  # not JSON by its type
    ],
)
async def test_anything_but_a_json_rpc_answer_or_error_is_unexpected_and_quoted(status, body, content_type):
    with endpoint(replying(status, body, content_type)) as url, pytest.raises(TransportError) as caught:
        await exchange(url)
    text = body.decode()
    assert str(caught.value) == f"expected a JSON-RPC response but got HTTP {status} ({content_type}): {text!r}"
    assert (caught.value.status_code, caught.value.body) == (status, text)


async def test_an_unexpected_body_is_quoted_up_to_200_characters():
    with endpoint(replying(502, b"x" * 500, "text/html")) as url, pytest.raises(TransportError) as caught:
        await exchange(url)
    assert caught.value.body == "x" * 200


async def test_a_401_names_the_servers_challenge():
    challenge = 'Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource"'
    stand_in = replying(401, b"", None, www_authenticate=challenge)
    with endpoint(stand_in) as url, pytest.raises(TransportError) as caught:
        await exchange(url)
    assert str(caught.value) == (
        "expected a JSON-RPC response but got HTTP 401 (none): ''"
        f"; the server asks for authorization (Client's auth=): WWW-Authenticate: {challenge}"
    )


async def test_only_message_events_with_data_are_read_from_an_sse_answer():
    stream = (
        b"event: ping\ndata: {}\n\n"
        b": a comment\n\n"
        b"event: message\ndata: \n\n"
        b'data: {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}\n\n'
        b'event: message\ndata: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n'
    )
    with endpoint(replying(200, stream, "text/event-stream")) as url:
        messages = await exchange(url)
    assert [message.get("method", "response") for message in messages] == ["notifications/progress", "response"]


async def test_an_event_that_is_no_json_rpc_message_names_the_status_it_came_with():
    with (
        endpoint(replying(200, b"data: {not json\n\n", "text/event-stream")) as url,
        pytest.raises(TransportError, match="the server sent invalid JSON") as caught,
    ):
        await exchange(url)
    assert caught.value.status_code == 200


async def test_a_404_to_a_legacy_session_says_the_session_ended_and_forgets_it():
    """streamable-http (2025-11-25): a 404 to a request with `Mcp-Session-Id` means the server
    ended the session; the client must start a new one, so it forgets the id and says why."""
    with endpoint(replying(404, b"", None)) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            transport = HTTPTransport(url, http)
            transport.legacy_version, transport.session_id = "2025-11-25", "s-1"
            with pytest.raises(SessionExpired) as caught:
                [item async for item in transport.exchange(REQUEST)]
    assert (str(caught.value), caught.value.status_code) == ("the server ended session 's-1' (HTTP 404)", 404)
    assert transport.session_id is None


async def test_an_sse_answer_with_an_error_status_is_not_read_as_a_stream():
    stand_in = replying(500, b'data: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n', "text/event-stream")
    with (
        endpoint(stand_in) as url,
        pytest.raises(TransportError, match="expected a JSON-RPC response but got HTTP 500"),
    ):
        await exchange(url)


async def test_a_json_rpc_error_with_an_error_status_keeps_both():
    body = b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "too big"}}'
    with endpoint(replying(413, body)) as url, pytest.raises(InvalidRequest) as caught:
        await exchange(url)
    assert (caught.value.code, caught.value.status_code, caught.value.message) == (-32600, 413, "too big")


@pytest.mark.parametrize("status", [400, 500])
async def test_a_notification_must_be_accepted(status):
    with endpoint(replying(status, b"no")) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            transport = HTTPTransport(url, http)
            with pytest.raises(TransportError, match=f"expected 202 Accepted but got HTTP {status}"):
                await transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def test_a_network_failure_is_a_transport_error():
    from bench.procs import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp"
    async with httpx.AsyncClient(timeout=10) as http:
        transport = HTTPTransport(url, http)
        with pytest.raises(TransportError, match=f"HTTP POST to {url} failed"):
            await transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
        with pytest.raises(TransportError, match=f"HTTP exchange with {url} failed"):
            await exchange(url)


def test_a_modern_notification_carries_its_version_and_no_request_headers():
    transport = HTTPTransport("http://127.0.0.1:1/mcp", httpx.AsyncClient())
    transport.legacy_version = "2025-11-25"  # not used for a modern body
    message = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}},
    }
    headers = transport.headers_for(message)
    assert headers == {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
    }


def test_a_task_request_names_its_task_in_mcp_name():
    """The tasks extension's methods mirror `taskId` in `Mcp-Name` (SEP-2663), as a tool call
    mirrors its tool's name; the transport is where the client learns which field that is."""
    transport = HTTPTransport("http://127.0.0.1:1/mcp", httpx.AsyncClient())
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {"taskId": "task-7", "_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}},
        }
        headers = transport.headers_for(message)
        assert (headers["Mcp-Method"], headers["Mcp-Name"]) == (method, "task-7")


def test_the_endpoint_is_the_url_it_posts_to():
    """The client keys its cache and its era by `endpoint`: over HTTP, the endpoint's URL."""
    assert HTTPTransport("http://127.0.0.1:1/mcp", httpx.AsyncClient()).endpoint == "http://127.0.0.1:1/mcp"


def test_a_legacy_body_carries_the_negotiated_version_and_the_session():
    transport = HTTPTransport("http://127.0.0.1:1/mcp", httpx.AsyncClient())
    bare = transport.headers_for(REQUEST)
    assert "MCP-Protocol-Version" not in bare and "Mcp-Session-Id" not in bare
    transport.legacy_version, transport.session_id = "2025-11-25", "s-1"
    headers = transport.headers_for(REQUEST)
    assert (headers["MCP-Protocol-Version"], headers["Mcp-Session-Id"]) == ("2025-11-25", "s-1")


async def test_the_client_surfaces_a_broken_answer_as_an_error():
    with endpoint(replying(200, b'{"jsonrpc": "2.0", "id": 1, "error": "broken"}')) as url:
        async with connect(url, version="2026-07-28") as (client, _):
            with pytest.raises(ProtocolError, match="malformed JSON-RPC error object"):
                await client.discover()


@pytest.mark.parametrize(
    ("body", "quoted"),
    [(b"\xff\xfe bad bytes", "\ufffd\ufffd bad bytes"), (b"x" + "é".encode() * 150, "x" + "é" * 99 + "\ufffd")],
)
async def test_a_body_that_is_no_utf8_or_is_cut_mid_character_is_still_quoted(body, quoted):
    # "x" and 150 two-byte "é", cut at 200 bytes, ends in the middle of a character.
    with endpoint(replying(502, body, "text/html")) as url, pytest.raises(TransportError) as caught:
        await exchange(url)
    assert caught.value.body == quoted


async def test_ending_a_legacy_session_tolerates_a_server_that_is_gone():
    from bench.procs import free_port

    async with httpx.AsyncClient(timeout=10) as http:
        transport = HTTPTransport(f"http://127.0.0.1:{free_port()}/mcp", http)
        transport.session_id = "s-1"
        await transport.aclose()  # the DELETE fails to connect: nothing to end, no error
    assert transport.session_id is None


async def test_ending_a_legacy_session_sends_delete_with_its_id():
    stand_in = replying(405, b"", None)
    with endpoint(stand_in) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            transport = HTTPTransport(url, http)
            await transport.aclose()  # no session: nothing sent
            transport.session_id, transport.legacy_version = "s-1", "2025-11-25"
            await transport.aclose()  # a 405 means the server will not end it: fine
    assert [headers["mcp-session-id"] for headers in stand_in.seen] == ["s-1"]
    assert transport.session_id is None


@pytest.mark.parametrize("content_type", ["TEXT/EVENT-STREAM; charset=utf-8", "text/event-stream ;charset=UTF-8"])
async def test_the_media_type_is_read_without_case_or_parameters(content_type):
    stream = b'data: {"jsonrpc": "2.0", "id": 1, "result": {"ok": true}}\n\n'
    with endpoint(replying(200, stream, content_type)) as url:
        assert await exchange(url) == [{"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}]
    with endpoint(
        replying(200, b'{"jsonrpc": "2.0", "id": 1, "result": {}}', "Application/JSON; charset=utf-8")
    ) as url:
        assert await exchange(url) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def slow_stream(pause: float):  # type: ignore[no-untyped-def]
    """A stand-in that sends one SSE event, stays quiet for `pause` seconds, then sends the response."""
    import asyncio

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        first = b'data: {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {}}\n\n'
        await send({"type": "http.response.body", "body": first, "more_body": True})
        await asyncio.sleep(pause)
        await send({"type": "http.response.body", "body": b'data: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n'})

    return app


async def test_only_a_long_lived_exchange_outlasts_the_read_timeout():
    # A listen stream may stay quiet far longer than any request should take.
    listen = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {}}
    with endpoint(slow_stream(0.6)) as url:
        async with httpx.AsyncClient(timeout=0.3) as http:
            transport = HTTPTransport(url, http)
            messages = [message async for message in transport.exchange(listen, long_lived=True)]
            assert [message.get("method", "response") for message in messages] == [
                "notifications/subscriptions/acknowledged",
                "response",
            ]
            with pytest.raises(TransportError, match="ReadTimeout"):
                [message async for message in transport.exchange(listen)]
