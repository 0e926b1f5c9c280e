"""The endpoint's own bounds on what it reads: the body's size, and parsing a large body without
stalling everyone else. Against a real uvicorn."""

from __future__ import annotations

import socket
import threading

from mcpref import StreamableHTTP
from mcpref.limits import ServerLimits
from tests.conftest import mcp_headers
from tests.hostile.conftest import guarded, hostile_server, raw_request, read_all

LIMITS = ServerLimits(header_timeout=5)


def head(length: int) -> bytes:
    fields = "".join(f"{name}: {value}\r\n" for name, value in mcp_headers("tools/list").items())
    return f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{fields}Content-Length: {length}\r\n\r\n".encode()


def test_an_oversized_body_is_413_and_the_rest_is_never_read() -> None:
    app = StreamableHTTP(hostile_server(), max_body_bytes=4096)
    with guarded(app, LIMITS) as address, socket.create_connection(address, timeout=5) as sock:
        sock.sendall(head(10_000_000) + b"[" * 1000)
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:100]
    assert b"connection: close" in answer
    assert b"the limit is 4096 bytes" in answer


def test_the_default_body_limit_is_one_mebibyte() -> None:
    assert StreamableHTTP(hostile_server()).max_body_bytes == 1024 * 1024


def test_small_requests_are_answered_while_a_deeply_nested_body_is_parsed() -> None:
    """A megabyte of brackets is parsed in a worker thread; a small request sent meanwhile is
    still answered. (How long it waits is measured by `scripts/load --hostile`, not here.)"""
    app = StreamableHTTP(hostile_server())
    nested = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":' + b"[" * 1_000_000
    with guarded(app, LIMITS) as address:
        big = socket.create_connection(address, timeout=10)
        big.sendall(head(len(nested)) + nested)
        answered: list[bytes] = []

        def small() -> None:
            with socket.create_connection(address, timeout=10) as sock:
                sock.sendall(raw_request("tools/list"))
                answered.append(sock.recv(65536))

        thread = threading.Thread(target=small)
        thread.start()
        thread.join(timeout=10)
        big_answer = big.recv(65536)
        big.close()
    assert answered and answered[0].startswith(b"HTTP/1.1 200 ")
    assert big_answer.startswith(b"HTTP/1.1 400 "), big_answer[:100]
