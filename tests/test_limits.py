"""The HTTP server's bounds (`mcpref.limits`) part by part: the canned answers, how a request head
is measured and refused, and the uvicorn configuration `mcpref.run` serves with. The bounds
against a real uvicorn on loopback are in tests/hostile/test_server_limits.py."""

from __future__ import annotations

import h11
import pytest

from mcpref.limits import (
    HEAD_TOO_LARGE,
    TOO_SLOW,
    GuardedH11Protocol,
    ServerLimits,
    _canned,
    _GuardedConnection,
    _head_size,
    uvicorn_config,
)

HEAD = b"POST /mcp?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nContent-Type: application/json\r\nX-Empty: \r\n\r\n"


def read_as_a_client(answer: bytes) -> list[object]:
    """The events an HTTP client reads from `answer`."""
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="GET", target="/", headers=[("Host", "x")]))
    client.send(h11.EndOfMessage())
    client.receive_data(answer)
    events = []
    while (event := client.next_event()) is not h11.NEED_DATA:
        events.append(event)
        if type(event) is h11.EndOfMessage:
            break
    return events


@pytest.mark.parametrize(
    ("status", "reason", "constant"),
    [
        (431, "Request Header Fields Too Large", HEAD_TOO_LARGE),
        (408, "Request Timeout", TOO_SLOW),
        (418, "I'm a teapot", None),
    ],
)
def test_a_canned_answer_is_a_whole_response_that_closes(status: int, reason: str, constant: bytes | None) -> None:
    answer = _canned(status, reason)
    assert constant in (None, answer)
    response, data, end = read_as_a_client(answer)
    assert isinstance(response, h11.Response) and isinstance(data, h11.Data)
    assert (response.status_code, response.reason) == (status, reason.encode())
    assert data.data == reason.encode() + b"\n"
    assert dict(response.headers) == {
        b"content-type": b"text/plain; charset=utf-8",
        b"content-length": str(len(reason) + 1).encode(),
        b"x-content-type-options": b"nosniff",
        b"connection": b"close",
    }
    assert type(end) is h11.EndOfMessage


def parsed(head: bytes, limit: int = 16 * 1024) -> object:
    connection = _GuardedConnection(limit)
    connection.receive_data(head)
    return connection.next_event()


def test_a_head_is_measured_as_it_was_sent() -> None:
    request = parsed(HEAD)
    assert isinstance(request, h11.Request)
    assert _head_size(request) == len(HEAD) - len(b"\r\n")  # all but the blank line that ends it
    short = parsed(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
    assert isinstance(short, h11.Request)
    assert _head_size(short) == len(b"GET / HTTP/1.1\r\nHost: h\r\n")


def test_a_whole_head_over_the_limit_is_refused_with_431() -> None:
    size = len(HEAD) - 2
    assert isinstance(parsed(HEAD, limit=size), h11.Request), "a head of exactly the limit passes"
    connection = _GuardedConnection(size - 1)
    connection.receive_data(HEAD)
    with pytest.raises(h11.RemoteProtocolError) as refused:
        connection.next_event()
    assert refused.value.error_status_hint == 431
    assert str(refused.value) == "request head too large"
    assert connection.last_error is refused.value


def test_an_unfinished_head_over_the_limit_is_refused_before_it_ends() -> None:
    connection = _GuardedConnection(1024)
    connection.receive_data(b"POST /mcp HTTP/1.1\r\nX-Big: " + b"a" * 2048)
    with pytest.raises(h11.RemoteProtocolError) as refused:
        connection.next_event()
    assert refused.value.error_status_hint == 431
    assert connection.last_error is refused.value


def test_a_malformed_head_is_remembered_with_its_own_status() -> None:
    connection = _GuardedConnection(1024)
    assert connection.last_error is None
    connection.receive_data(b"POST /mcp HTTP/1.1\r\nno colon here\r\n\r\n")
    with pytest.raises(h11.RemoteProtocolError):
        connection.next_event()
    assert connection.last_error is not None and connection.last_error.error_status_hint == 400


def test_the_uvicorn_configuration_enforces_every_limit_and_keeps_the_options() -> None:
    limits = ServerLimits(
        max_header_bytes=1000, header_timeout=1.5, body_timeout=2.5, keepalive_timeout=3.5, max_connections=7
    )
    config = uvicorn_config(object(), limits, host="127.0.0.2", port=8123, log_level="warning")
    assert config.http is GuardedH11Protocol
    assert (config.host, config.port, config.log_level) == ("127.0.0.2", 8123, "warning")
    assert config.h11_max_incomplete_event_size == 1000
    assert (config.timeout_keep_alive, config.limit_concurrency) == (3.5, 7)
    assert (config.header_timeout, config.body_timeout) == (1.5, 2.5)  # type: ignore[attr-defined]
