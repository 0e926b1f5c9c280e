"""The HTTP server's own bounds (`mcpref.limits`): the request head's size and deadline, idle
connections, and the connection cap, against uvicorn configured as `mcpref.run` configures it."""

from __future__ import annotations

import logging
import socket
import time

from mcpref import StreamableHTTP
from mcpref.limits import GuardedH11Protocol, ServerLimits
from tests.conftest import running
from tests.hostile.conftest import guarded, hostile_server, raw_request, read_all

QUICK = ServerLimits(
    max_header_bytes=4096, header_timeout=0.5, body_timeout=0.5, keepalive_timeout=0.5, max_connections=50
)


def connect(address: tuple[str, int]) -> socket.socket:
    return socket.create_connection(address, timeout=5)


def assert_slow_head_times_out(sock: socket.socket) -> None:
    """Start a request head and dribble a header line every 0.05 s, never finishing it: the
    server must answer 408 and close well before the 2 s the dribble would take."""
    started = time.monotonic()
    sock.sendall(b"POST /mcp HTTP/1.1\r\n")
    for n in range(40):
        try:
            sock.sendall(b"X-Slow: %d\r\n" % n)
        except (BrokenPipeError, ConnectionResetError):
            break
        time.sleep(0.05)
    answer = read_all(sock)
    elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer[:100]
    assert elapsed < 3


def test_a_normal_request_is_served() -> None:
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address, connect(address) as sock:
        sock.sendall(raw_request("tools/list"))
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:100]


def test_an_oversized_header_is_431_and_the_connection_closed() -> None:
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address:
        for extra in (f"X-Big: {'a' * 5000}\r\n", "".join(f"X-{n}: {'b' * 50}\r\n" for n in range(200))):
            with connect(address) as sock:
                sock.sendall(raw_request("tools/list", extra=extra))
                answer = read_all(sock)
            assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer[:100]
            assert b"connection: close" in answer


def test_a_megabyte_header_value_is_refused_without_reading_it_all() -> None:
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address, connect(address) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
        try:
            for _ in range(256):
                sock.sendall(b"a" * 4096)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading and closed, as it should
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]


def test_a_slowloris_head_is_408_after_the_head_deadline() -> None:
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address, connect(address) as sock:
        assert_slow_head_times_out(sock)


def test_a_slow_body_is_408_after_the_body_deadline_and_the_connection_closed() -> None:
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address, connect(address) as sock:
        request = raw_request("tools/list")
        started = time.monotonic()
        sock.sendall(request[:-10])  # all but the last ten bytes of the body
        answer = read_all(sock)
        elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer[:100]
    assert b"connection: close" in answer
    assert 0.4 < elapsed < 3


def test_a_body_trickled_a_byte_at_a_time_is_408_at_the_deadline() -> None:
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address, connect(address) as sock:
        request = raw_request("tools/list")
        split = request.index(b"\r\n\r\n") + 4
        sock.sendall(request[:split])
        started = time.monotonic()
        for byte in request[split:]:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.05)
            if time.monotonic() - started > 3:
                break
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]


def test_a_connection_that_never_sends_is_closed_after_the_head_deadline() -> None:
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address, connect(address) as sock:
        started = time.monotonic()
        answer = read_all(sock)
        assert 0.4 < time.monotonic() - started < 3
    assert answer.startswith(b"HTTP/1.1 408 ")


def test_an_idle_keep_alive_connection_is_closed() -> None:
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address, connect(address) as sock:
        sock.sendall(raw_request("tools/list"))
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        started = time.monotonic()
        assert read_all(sock) == b""  # closed without another word
        assert time.monotonic() - started < 3


def test_past_the_connection_cap_a_request_is_503() -> None:
    limits = ServerLimits(max_header_bytes=4096, header_timeout=30, keepalive_timeout=30, max_connections=4)
    with guarded(StreamableHTTP(hostile_server()), limits) as address:
        idle = [connect(address) for _ in range(4)]
        try:
            time.sleep(0.2)
            with connect(address) as sock:
                sock.sendall(raw_request("tools/list"))
                answer = read_all(sock)
            assert answer.startswith(b"HTTP/1.1 503 "), answer[:100]
        finally:
            for sock in idle:
                sock.close()
        time.sleep(0.2)
        with connect(address) as sock:  # the idle ones are gone: served again
            sock.sendall(raw_request("tools/list"))
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")


def test_a_kept_alive_connection_gets_a_new_head_deadline_for_each_request() -> None:
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address, connect(address) as sock:
        sock.sendall(raw_request("tools/list"))
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        assert_slow_head_times_out(sock)  # the next request, whose head never ends


def test_the_body_gets_its_own_deadline_not_what_is_left_of_the_heads() -> None:
    limits = ServerLimits(max_header_bytes=4096, header_timeout=0.3, body_timeout=3, max_connections=50)
    with guarded(StreamableHTTP(hostile_server()), limits) as address, connect(address) as sock:
        request = raw_request("tools/list")
        split = request.index(b"\r\n\r\n") + 4
        sock.sendall(request[:split])
        time.sleep(0.8)  # past the head's deadline, well within the body's
        sock.sendall(request[split:])
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:100]


def test_a_malformed_head_is_400_not_431() -> None:
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address, connect(address) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n")
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n"), answer[:100]
    assert answer.endswith(b"\r\n\r\nInvalid HTTP request received."), answer[-100:]


def test_a_refused_head_is_logged_with_the_limit() -> None:
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    uvicorn_log = logging.getLogger("uvicorn.error")
    with guarded(StreamableHTTP(hostile_server()), QUICK) as address, connect(address) as sock:
        uvicorn_log.addHandler(handler)
        try:
            sock.sendall(raw_request("tools/list", extra=f"X-Big: {'a' * 5000}\r\n"))
            assert read_all(sock).startswith(b"HTTP/1.1 431 ")
        finally:
            uvicorn_log.removeHandler(handler)
    assert "Request head larger than 4096 bytes refused" in [record.getMessage() for record in records]


def test_the_guarded_protocol_serves_with_its_own_defaults_in_a_plain_uvicorn_config() -> None:
    with running(StreamableHTTP(hostile_server()), http=GuardedH11Protocol) as url:
        host, port = url.removeprefix("http://").split(":")
        with connect((host, int(port))) as sock:
            request = raw_request("tools/list")
            split = request.index(b"\r\n\r\n") + 4
            sock.sendall(request[:split])  # the head, then the body: each under its default deadline
            time.sleep(0.05)
            sock.sendall(request[split:])
            answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:100]
