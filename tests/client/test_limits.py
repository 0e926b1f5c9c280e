"""The client's limits: what it reads from a hostile server is bounded per message, and every
limit has its default in the table of docs/patterns/client-limits.md.

The hostile servers are raw ASGI apps under a real uvicorn on loopback; the bound is small (4 KiB)
so that the tests are fast and allocate little. A server that keeps sending after the bound is
passed learns that the client left (`http.disconnect`), which it takes as cancellation.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpref import Server, StreamableHTTP
from mcpref.client import Client, OAuth, ResultCache, StdioTransport, TransportError, _redirect, _tasks
from mcpref.client._auth import (
    EXPIRY_MARGIN,
    MAX_ANSWER_BYTES,
    RESOURCE_NONCE_RETRIES,
    TOKEN_NONCE_RETRIES,
    client_assertion,
)
from mcpref.client._grants import ClientCredentials
from mcpref.client._http import HTTPTransport
from mcpref.client._redirect import LoopbackRedirect
from mcpref.client._stdio import DEFAULT_MAX_LINE_BYTES
from mcpref.client._tasks import TaskWaiter
from mcpref.client._transport import DEFAULT_MAX_MESSAGE_BYTES
from tests.client.conftest import connect, endpoint

pytestmark = pytest.mark.anyio

LIMIT = 4096
REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
#: A hostile server stops by itself after this much, should the client never leave.
GIVE_UP = 4 * 1024 * 1024


def answer_of(size: int) -> bytes:
    """A JSON-RPC response of exactly `size` bytes."""
    bare = b'{"jsonrpc": "2.0", "id": 1, "result": {"pad": ""}}'
    return bare[:-3] + b"x" * (size - len(bare)) + bare[-3:]


class Hostile:
    """An ASGI app that answers every POST with `head` and then `pieces`, each sent on its own,
    then keeps sending `forever` (if any) until the client leaves. It records each request's
    client port (a new port: a new connection) and whether the client left mid-answer."""

    def __init__(self, content_type: str, pieces: list[bytes], forever: bytes = b"") -> None:
        self.content_type, self.pieces, self.forever = content_type, pieces, forever
        self.headers: list[tuple[bytes, bytes]] = []
        self.ports: list[int] = []
        self.left: list[bool] = []
        self.sent = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        self.ports.append(scope["client"][1])
        left = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            left.set()

        watcher = asyncio.ensure_future(watch())
        headers = [(b"content-type", self.content_type.encode()), *self.headers]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for piece in self.pieces:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            await asyncio.sleep(0)
        while self.forever and not left.is_set() and self.sent < GIVE_UP:
            await send({"type": "http.response.body", "body": self.forever, "more_body": True})
            self.sent += len(self.forever)
            await asyncio.sleep(0.001)  # lets the disconnect in
        if not self.forever:
            await send({"type": "http.response.body", "body": b""})
            watcher.cancel()
            return
        self.left.append(left.is_set())
        watcher.cancel()


async def read_all(transport: HTTPTransport) -> list[dict[str, Any]]:
    return [message async for message in transport.exchange(REQUEST)]


async def test_a_json_body_at_the_bound_is_read_and_one_byte_more_is_refused_and_its_connection_closed():
    """Before the bound, `aread()` read any body whole; this failed with no error at all."""
    app = Hostile("application/json", [])
    with endpoint(app) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            transport = HTTPTransport(url, http, max_message_bytes=LIMIT)
            app.pieces = [answer_of(LIMIT)]
            assert await read_all(transport) == [json.loads(answer_of(LIMIT))]
            app.pieces = [answer_of(LIMIT + 1)]
            with pytest.raises(TransportError) as caught:
                await read_all(transport)
            app.pieces = [answer_of(100)]
            assert await read_all(transport) == [json.loads(answer_of(100))]  # still usable
    assert str(caught.value) == (
        f"{url} answered a body over the client's bound of {LIMIT} bytes for one message"
        f" (max_message_bytes=), {LIMIT + 1} bytes read; the connection was closed"
    )
    assert caught.value.status_code == 200
    # The answer at the bound kept its connection alive; the one over it was closed under it.
    assert app.ports[0] == app.ports[1] != app.ports[2]


async def test_a_json_body_that_never_ends_is_read_to_the_bound_only():
    app = Hostile("application/json", [b'{"jsonrpc": "2.0", "id": 1, "result": {"pad": "'], forever=b"x" * 1024)
    with endpoint(app) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            with pytest.raises(TransportError, match="answered a body over the client's bound of 4096 bytes"):
                await read_all(HTTPTransport(url, http, max_message_bytes=LIMIT))
            await wait_for(lambda: app.left)
    assert app.left == [True] and app.sent < GIVE_UP


async def wait_for(condition: Any) -> None:
    """Until `condition()` holds (the server runs in another thread), 5 s at most."""
    for _ in range(250):
        if condition():
            return
        await asyncio.sleep(0.02)


@pytest.mark.parametrize(
    ("start", "forever"),
    [
        (b"data: ", b"x" * 1024),  # one data line that never ends
        (b'event: message\ndata: {"jsonrpc": "2.0",\n', b'data: "x": 1,\n' * 64),  # data lines, never a blank one
    ],
    ids=["one endless line", "endless data lines"],
)
async def test_an_sse_event_over_the_bound_fails_and_the_server_learns_the_client_left(start, forever):
    """Before the bound, httpx-sse kept every line of the event: these read 4 MiB and hung on."""
    first = b'data: {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}\n\n'
    app = Hostile("text/event-stream", [first, start], forever)
    seen: list[dict[str, Any]] = []
    with endpoint(app) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            transport = HTTPTransport(url, http, max_message_bytes=LIMIT)
            with pytest.raises(TransportError) as caught:
                async for message in transport.exchange(REQUEST):
                    seen.append(message)
            await wait_for(lambda: app.left)
            # The client is still usable: the next request gets its answer.
            app.pieces, app.forever = [b'data: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n'], b""
            assert await read_all(transport) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    assert [message["method"] for message in seen] == ["notifications/progress"]
    assert str(caught.value).startswith(
        f"{url} answered an SSE event over the client's bound of {LIMIT} bytes for one message (max_message_bytes=), "
    )
    assert str(caught.value).endswith(" bytes read; the connection was closed")
    assert app.left == [True] and app.sent < GIVE_UP


async def test_a_stream_of_small_events_far_over_the_bound_in_all_is_read_whole():
    """The bound is per event, not per stream: a listen stream may run for days."""
    note = b'data: {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}\n\n'
    count = 20 * LIMIT // len(note)
    pieces = [note] * count + [b'data: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n']
    with endpoint(Hostile("text/event-stream", pieces)) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            messages = await read_all(HTTPTransport(url, http, max_message_bytes=len(note)))
    assert len(messages) == count + 1 and messages[-1] == {"jsonrpc": "2.0", "id": 1, "result": {}}


async def test_an_sse_event_at_the_bound_is_read():
    """The bound counts an event's lines without their line endings."""
    event = answer_of(LIMIT - len(b"data: "))
    with endpoint(Hostile("text/event-stream", [b"data: " + event[:100], event[100:] + b"\r\n\r\n"])) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            assert await read_all(HTTPTransport(url, http, max_message_bytes=LIMIT)) == [json.loads(event)]


async def test_the_bound_counts_a_compressed_body_as_it_is_decoded():
    """httpx decodes gzip as it reads: 8 MiB of zeros travel as 8 KiB, and are refused all the same."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    bomb = compressor.compress(b"\0" * 8 * 2**20) + compressor.flush()
    app = Hostile("application/json", [bomb])
    app.headers = [(b"content-encoding", b"gzip")]
    with endpoint(app) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            with pytest.raises(TransportError, match="answered a body over the client's bound of 4096 bytes"):
                await read_all(HTTPTransport(url, http, max_message_bytes=LIMIT))
    assert len(bomb) < 10 * 1024


async def test_a_notifications_answer_is_bounded_too():
    with endpoint(Hostile("text/plain", [b"x" * 1000], forever=b"x" * 1024)) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            transport = HTTPTransport(url, http, max_message_bytes=LIMIT)
            with pytest.raises(TransportError, match="answered a body over the client's bound of 4096 bytes"):
                await transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})


server = Server("big", "1")


@server.tool()
async def big(size: int) -> str:
    return "x" * size


async def test_the_client_passes_its_bound_to_the_transport_and_stays_usable():
    with endpoint(StreamableHTTP(server)) as url:
        async with connect(url, max_message_bytes=LIMIT) as (client, _):
            assert (await client.call_tool("big", {"size": 100}))["content"] == [{"type": "text", "text": "x" * 100}]
            with pytest.raises(TransportError, match=f"bound of {LIMIT} bytes"):
                await client.call_tool("big", {"size": LIMIT})
            assert (await client.call_tool("big", {"size": 10}))["content"] == [{"type": "text", "text": "x" * 10}]


# -- the table ---------------------------------------------------------------------------------

TABLE = (Path(__file__).parents[2] / "docs/patterns/client-limits.md").read_text("utf-8")


def default(function: Any, name: str) -> Any:
    return inspect.signature(function).parameters[name].default


def mib(size: int) -> str:
    return f"{size // 2**20} MiB"


def kib(size: int) -> str:
    return f"{size // 2**10} KiB"


#: Each row's "where to change it" cell, and its default as the code has it.
ROWS = [
    (
        "`Client(url, max_message_bytes=...)`, `HTTPTransport(url, http, max_message_bytes=...)`",
        mib(default(HTTPTransport, "max_message_bytes")),
    ),
    ("`StdioTransport(command, max_line_bytes=...)`", mib(default(StdioTransport, "max_line_bytes"))),
    ("`Client(timeout=...)`", f"{default(Client, 'timeout'):g} s"),
    ("`StdioTransport(command, timeout=...)`", f"{default(StdioTransport, 'timeout'):g} s"),
    ("`StdioTransport(command, shutdown_timeout=...)`", f"{default(StdioTransport, 'shutdown_timeout'):g} s"),
    ("`Client(max_rounds=...)`", str(default(Client, "max_rounds"))),
    (
        "`Client.listen(max_reconnects=..., backoff=...)`",
        f"{default(Client.listen, 'max_reconnects')} times; {default(Client.listen, 'backoff'):g} s first, doubling",
    ),
    ("`ResultCache(max_entries=...)`", f"{default(ResultCache, 'max_entries'):,}"),
    ("`OAuth(timeout=...)`, `ClientCredentials(..., timeout=...)`", f"{default(OAuth, 'timeout'):g} s"),
    ("`OAuth(max_step_ups=...)`", str(default(OAuth, "max_step_ups"))),
    ("`client._auth.MAX_ANSWER_BYTES`", mib(MAX_ANSWER_BYTES)),
    ("`client._auth.EXPIRY_MARGIN`", f"{EXPIRY_MARGIN:g} s before its `expires_in`"),
    ("`client_assertion(..., lifetime=...)`", f"{default(client_assertion, 'lifetime')} s"),
    ("`LoopbackRedirect(timeout=...)`", f"{default(LoopbackRedirect, 'timeout'):g} s"),
    (
        "`client._redirect.READ_TIMEOUT`, `client._redirect.MAX_HEAD_BYTES`",
        f"{_redirect.READ_TIMEOUT:g} s; {kib(_redirect.MAX_HEAD_BYTES)}",
    ),
    (
        "`client._tasks.DEFAULT_POLL_MS`, `client.tasks.backoff`, `client.tasks.max_interval`",
        f"{_tasks.DEFAULT_POLL_MS / 1000:g} s; times {default(TaskWaiter, 'backoff'):g} up to"
        f" {default(TaskWaiter, 'max_interval'):g} s",
    ),
]


@pytest.mark.parametrize(("where", "value"), ROWS, ids=[where for where, _ in ROWS])
def test_each_client_limit_has_its_default_in_the_limits_table(where: str, value: str) -> None:
    """Every limit has a line in docs/patterns/client-limits.md with the default the code has; the
    client's had none but for a sentence on two of them."""
    rows = [line for line in TABLE.splitlines() if line.startswith("|") and f"| {where} |" in line]
    assert len(rows) == 1, f"no line (or several) for {where} in the limits table"
    assert rows[0].split("|")[2].strip() == value


def test_the_dpop_nonce_retries_have_their_line_in_the_limits_table() -> None:
    """Constants, not options; what they do is held by test_auth_tokens.py's
    `test_a_resource_is_asked_again_for_two_new_nonces_at_most_then_the_token_counts_as_rejected`
    and `test_a_token_endpoint_that_keeps_changing_its_nonce_is_asked_twice_only`."""
    rows = [line for line in TABLE.splitlines() if line.startswith("| DPoP nonce retries")]
    expected = f"{RESOURCE_NONCE_RETRIES} in a row at the resource; {TOKEN_NONCE_RETRIES} at the token endpoint"
    assert len(rows) == 1 and rows[0].split("|")[2].strip() == expected


def test_the_grants_take_the_same_timeout_as_oauth() -> None:
    assert default(ClientCredentials, "timeout") == default(OAuth, "timeout")


def test_both_transports_bound_one_message_alike() -> None:
    assert DEFAULT_MAX_LINE_BYTES == DEFAULT_MAX_MESSAGE_BYTES == default(HTTPTransport, "max_message_bytes")
