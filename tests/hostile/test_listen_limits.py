"""`subscriptions/listen` bounds: the filter's size, the slots in all and each caller's fair share."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx
import pytest

from mcpref import StreamableHTTP
from mcpref.limits import ServerLimits
from mcpref.transports.http import PRINCIPAL_SCOPE_KEY
from tests.conftest import error_answer, mcp_body, mcp_headers
from tests.hostile.conftest import guarded, hostile_server, raw_request

LIMITS = ServerLimits(header_timeout=5)


def verifying(endpoint: StreamableHTTP) -> Any:
    """An authentication layer in front of `endpoint` that takes `Bearer NAME` as verified
    principal NAME, as `auth.ProtectedResource` sets a validated token's principal: the fair
    share follows what such a layer verified."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        authorization = dict(scope.get("headers", [])).get(b"authorization", b"")
        if scope["type"] == "http" and authorization.startswith(b"Bearer "):
            scope = {**scope, PRINCIPAL_SCOPE_KEY: authorization[7:].decode()}
        await endpoint(scope, receive, send)

    return app


@pytest.fixture
def address() -> Iterator[tuple[str, int]]:
    """A server whose callers are verified (see `verifying`)."""
    server = hostile_server(max_subscriptions=5, max_subscriptions_per_caller=2)
    with guarded(verifying(StreamableHTTP(server)), LIMITS) as address:
        yield address


@pytest.fixture
def anonymous_address() -> Iterator[tuple[str, int]]:
    """The same server with no authentication in front: every caller is its peer address."""
    server = hostile_server(max_subscriptions=5, max_subscriptions_per_caller=2)
    with guarded(StreamableHTTP(server), LIMITS) as address:
        yield address


def listen(
    address: tuple[str, int], authorization: str | None = None, uris: list[str] | None = None
) -> tuple[socket.socket, bytes]:
    """Open a listen stream; return the socket (still open) and the answer's first bytes."""
    sock = socket.create_connection(address, timeout=5)
    extra = f"Authorization: {authorization}\r\n" if authorization else ""
    params = {"notifications": {"toolsListChanged": True, "resourceSubscriptions": uris or ["memo://a"]}}
    sock.sendall(raw_request("subscriptions/listen", params, extra=extra))
    answer = b""
    while b"\r\n\r\n" not in answer or (answer.startswith(b"HTTP/1.1 200") and b"acknowledged" not in answer):
        answer += sock.recv(65536)
    return sock, answer


@contextmanager
def streams(address: tuple[str, int], *callers: str | None) -> Iterator[list[bytes]]:
    with ExitStack() as stack:
        answers = []
        for caller in callers:
            sock, answer = listen(address, caller)
            stack.callback(sock.close)
            answers.append(answer)
        yield answers


def test_each_caller_gets_a_fair_share_of_the_listen_slots(address) -> None:
    with streams(address, "Bearer alice", "Bearer alice", "Bearer alice", "Bearer bob") as answers:
        assert [answer[:12] for answer in answers] == [b"HTTP/1.1 200"] * 2 + [b"HTTP/1.1 503", b"HTTP/1.1 200"]
        refused = answers[2]
        assert b"\r\nretry-after: 5\r\n" in refused
        error = json.loads(refused.partition(b"\r\n\r\n")[2])["error"]
        assert error["code"] == -32603 and "one caller" in error["message"]


def test_anonymous_callers_share_by_peer_address(anonymous_address) -> None:
    with streams(anonymous_address, None, None, None) as answers:
        assert [answer[:12] for answer in answers] == [b"HTTP/1.1 200"] * 2 + [b"HTTP/1.1 503"]


def test_an_unverified_authorization_header_never_makes_a_new_caller(anonymous_address) -> None:
    """Issue 25: without authorization the caller was a digest of whatever `Authorization` came,
    so one peer naming itself anew each time took every slot and an honest listener got 503."""
    made_up = ["Bearer a", "Bearer b", "Bearer c", "Basic d", "e"]
    with streams(anonymous_address, *made_up) as answers:
        assert [answer[:12] for answer in answers] == [b"HTTP/1.1 200"] * 2 + [b"HTTP/1.1 503"] * 3
        assert all(b"one caller" in answer for answer in answers[2:])


def test_a_verified_principal_is_the_caller_wherever_it_connects_from(address) -> None:
    with streams(address, "Bearer alice", "Bearer alice", None, None, "Bearer alice") as answers:
        assert [answer[:12] for answer in answers] == [b"HTTP/1.1 200"] * 4 + [b"HTTP/1.1 503"]


def test_past_every_slot_a_listen_is_503_with_retry_after(address) -> None:
    callers = ["Bearer a", "Bearer b", "Bearer c", "Bearer d", "Bearer e", "Bearer f"]
    with streams(address, *callers) as answers:
        assert [answer[:12] for answer in answers] == [b"HTTP/1.1 200"] * 5 + [b"HTTP/1.1 503"]
        assert b"\r\nretry-after: 5\r\n" in answers[5]
    deadline = time.monotonic() + 3  # the slots are freed once the server sees the streams close
    while True:
        with streams(address, "Bearer f") as answers:
            if answers[0].startswith(b"HTTP/1.1 200") or time.monotonic() > deadline:
                break
        time.sleep(0.05)
    assert answers[0].startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize(
    ("uris", "limit"),
    [(["memo://a"] * 257, "257 URIs; the limit is 256"), (["memo://" + "x" * 20_000] * 2, "the limit is 32768")],
)
def test_an_oversized_filter_is_invalid_params_and_not_echoed(address, uris, limit) -> None:
    host, port = address
    params = {"notifications": {"resourceSubscriptions": uris}}
    with httpx.Client(base_url=f"http://{host}:{port}") as http:
        response = http.post(
            "/mcp", json=mcp_body("subscriptions/listen", params), headers=mcp_headers("subscriptions/listen")
        )
    error = error_answer(response, 200)
    assert error["code"] == -32602
    assert limit in error["message"]
    assert len(response.content) < 1024
