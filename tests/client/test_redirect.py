"""The loopback redirect listener (client/_redirect.py) on a real socket: it holds its port from
the start, answers exactly one redirect to its path, refuses everything else with a 404, gives up
at its deadline, and takes the same port again for the next flow (OAuth 2.1 §8.4.2, RFC 8252 §7.3).

Each flow's "browser" is the `open_browser` callback, which speaks HTTP/1.1 to the listener itself,
so every answer is read as the bytes a browser would get."""

from __future__ import annotations

import asyncio
import errno
import gc
import socket
from collections.abc import Iterator

import pytest

from mcpref.client import AuthorizationError, LoopbackRedirect, _redirect
from mcpref.client._redirect import MAX_HEAD_BYTES, PAGE

pytestmark = pytest.mark.anyio


@pytest.fixture
def listener() -> Iterator[LoopbackRedirect]:
    redirect = LoopbackRedirect(open_browser=lambda url: None, timeout=10)
    yield redirect
    redirect.close()


async def exchange(port: int, request: bytes) -> bytes:
    """Send `request` to the listener; everything it answers, up to its close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


def get(target: str) -> bytes:
    return f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()


def answer(status: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"Connection: close\r\n\r\n" + body


NOT_FOUND = answer("404 Not Found", b"Not Found")


def bind_fails(port: int) -> bool:
    with socket.socket() as other:
        try:
            other.bind(("127.0.0.1", port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
        return False


def test_the_port_is_held_from_the_start_and_given_back_on_close() -> None:
    redirect = LoopbackRedirect(path="/cb")
    assert redirect.redirect_uri == f"http://127.0.0.1:{redirect.port}/cb" and redirect.port > 0
    assert redirect.timeout == 300  # five minutes for the user to sign in
    assert bind_fails(redirect.port)  # bound, so no other program takes it
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", redirect.port))  # and not accepting until a flow listens
    redirect.close()
    redirect.close()  # twice is harmless
    assert not bind_fails(redirect.port)
    collected = LoopbackRedirect()
    port = collected.port
    del collected
    gc.collect()
    assert not bind_fails(port)  # a listener nobody closed gives its port back when collected


def test_a_port_already_taken_is_refused_when_the_listener_is_made() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            LoopbackRedirect(port=taken.getsockname()[1])
        gc.collect()  # the half-made listener is collected quietly (an error in __del__ would fail the test)


async def test_one_redirect_to_its_path_is_taken_and_everything_else_gets_a_404(listener: LoopbackRedirect) -> None:
    seen: dict[str, bytes] = {}

    async def browser(url: str) -> None:
        assert url == "https://as.example/authorize?x=1"
        seen["other path"] = await exchange(listener.port, get("/elsewhere?code=c"))
        seen["not a GET"] = await exchange(listener.port, get("/callback?code=c").replace(b"GET", b"POST"))
        seen["not HTTP"] = await exchange(listener.port, b"\x16\x03\x01 a TLS hello\r\n\r\n")
        seen["too big"] = await exchange(listener.port, get("/callback?" + "a" * 2 * MAX_HEAD_BYTES))
        seen["the redirect"] = await exchange(listener.port, get("/callback?code=c1&state=s1&iss=x"))
        seen["a second one"] = await exchange(listener.port, get("/callback?code=c2&state=s2"))

    listener.open_browser = browser
    back = await listener("https://as.example/authorize?x=1")
    assert back == f"http://127.0.0.1:{listener.port}/callback?code=c1&state=s1&iss=x"
    assert seen.pop("the redirect") == answer("200 OK", PAGE)
    assert seen == dict.fromkeys(["other path", "not a GET", "not HTTP", "too big", "a second one"], NOT_FOUND)


async def test_a_connection_that_sends_nothing_is_dropped_without_ending_the_flow(
    listener: LoopbackRedirect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_redirect, "READ_TIMEOUT", 0.2)

    async def browser(url: str) -> None:
        _, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.close()  # a port scan, or a browser's speculative connection
        await writer.wait_closed()
        # One that stays open and silent is answered 404 and closed once READ_TIMEOUT has passed.
        assert await exchange(listener.port, b"") == NOT_FOUND
        assert await exchange(listener.port, get("/callback?code=c")) == answer("200 OK", PAGE)

    listener.open_browser = browser
    assert (await listener("https://as.example/a")).endswith("/callback?code=c")


async def test_a_plain_function_opens_the_browser_too(listener: LoopbackRedirect) -> None:
    opened: list[str] = []

    def browser(url: str) -> None:  # not a coroutine: called, and the redirect then awaited
        opened.append(url)
        asyncio.get_running_loop().create_task(exchange(listener.port, get("/callback?code=c")))

    listener.open_browser = browser
    assert (await listener("https://as.example/a")).endswith("?code=c")
    assert opened == ["https://as.example/a"]


async def test_no_redirect_before_the_deadline_is_an_error_naming_the_uri(listener: LoopbackRedirect) -> None:
    listener.timeout = 0.3
    with pytest.raises(AuthorizationError, match=rf"no redirect reached {listener.redirect_uri} within 0 s"):
        await listener("https://as.example/a")


async def test_the_next_flow_gets_the_same_port_and_a_taken_port_is_an_error(listener: LoopbackRedirect) -> None:
    port = listener.port

    async def browser(url: str) -> None:
        await exchange(port, get("/callback?code=" + url[-1]))

    listener.open_browser = browser
    assert (await listener("https://as.example/1")).endswith("code=1")
    # Held again between flows (bound, not listening), so the redirect URI stays valid for a step-up.
    assert listener._socket is not None and listener._socket.getsockname() == ("127.0.0.1", port)
    assert (await listener("https://as.example/2")).endswith("code=2")
    assert listener.port == port
    # Between flows something else took the port (the listener let it go): the flow says so.
    listener.close()
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the flows' TIME_WAIT
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        with pytest.raises(AuthorizationError, match=f"cannot listen on http://127.0.0.1:{port}/callback"):
            await listener("https://as.example/3")


async def test_a_port_that_cannot_be_held_again_after_a_flow_is_reported_by_the_next(
    listener: LoopbackRedirect, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(port: int) -> socket.socket:
        raise OSError(errno.EADDRINUSE, "Address already in use")

    async def browser(url: str) -> None:
        monkeypatch.setattr(_redirect, "_reserve", refused)  # the operating system says no from now on
        await exchange(listener.port, get("/callback?code=c"))

    listener.open_browser = browser
    assert (await listener("https://as.example/1")).endswith("code=c")
    assert listener._socket is None
    listener.close()  # nothing held, nothing to give back
    with pytest.raises(AuthorizationError, match="cannot listen on .*: Address already in use"):
        await listener("https://as.example/2")
