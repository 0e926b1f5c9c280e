"""The HTTP server's own bounds (`mcpref.limits`): the request head's size and deadline, idle
connections, and the connection cap, against uvicorn configured as `mcpref.run` configures it."""

from __future__ import annotations

import socket
import time

from mcpref import StreamableHTTP
from mcpref.limits import ServerLimits
from tests.hostile.conftest import guarded, hostile_server, raw_request, read_all

QUICK = ServerLimits(
    max_header_bytes=4096, header_timeout=0.5, body_timeout=0.5, keepalive_timeout=0.5, max_connections=50
)


def connect(address: tuple[str, int]) -> socket.socket:
    return socket.create_connection(address, timeout=5)


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
        started = time.monotonic()
        sock.sendall(b"POST /mcp HTTP/1.1\r\n")
        answer = b""
        for n in range(40):  # one header byte every 0.05 s: never a whole head
            try:
                sock.sendall(b"X-Slow: %d\r\n" % n)
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.05)
        answer = read_all(sock)
        elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer[:100]
    assert elapsed < 3


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
