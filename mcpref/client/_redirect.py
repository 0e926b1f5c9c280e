"""The redirect step for a command-line or desktop client: a browser out, a loopback listener back.

OAuth 2.1 §8.4.2 (native apps): the client listens on the loopback interface, sends the user's
browser to the authorization URL, and the authorization server redirects the browser to
`http://127.0.0.1:<port>/callback?code=...&state=...&iss=...`. `LoopbackRedirect` is that listener,
for exactly one redirect per flow, with a deadline. HTTP parsing is h11's (the parser httpx uses).

The port is the operating system's choice by default: a fixed one may be in use by another
program, or by a second copy of the same client, and one in the ephemeral range (32768-60999 on
Linux) may be handed to any outgoing connection. RFC 8252 §7.3 has the authorization server accept
any port on a loopback IP redirect URI for exactly this reason. The listener takes its port when it
is made and holds it (bound, not accepting) between flows, so `redirect_uri` is right from the start
and stays the same for every flow.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import h11

from ._auth import AuthorizationError

PAGE = b"<!doctype html><title>Signed in</title><p>Authorization received. You can close this tab.</p>"
#: The most a request head to the listener may be.
MAX_HEAD_BYTES = 16 * 1024
#: How long a connection to the listener may go without sending, in seconds, before it is dropped.
READ_TIMEOUT = 10.0


class LoopbackRedirect:
    """`OAuth(redirect=LoopbackRedirect())`: open the browser, wait for the redirect.

    The port is held until `close()` (or until the listener is garbage-collected).

    Args:
        port: Where the listener waits; 0 (the default) lets the operating system pick a free one.
            `self.port` is the port taken, and `redirect_uri` the URI to send (register
            `http://127.0.0.1/callback` or this URI: an authorization server following RFC 8252
            §7.3 accepts any port).
        path: The redirect URI's path.
        open_browser: Called with the authorization URL; by default the system browser (the URL
            is printed too, for a machine without one).
        timeout: How long the user has, in seconds.

    Raises:
        OSError: The port cannot be taken.
    """

    def __init__(
        self,
        port: int = 0,
        path: str = "/callback",
        *,
        open_browser: Callable[[str], object] | None = None,
        timeout: float = 300.0,
    ) -> None:
        self._socket: socket.socket | None = _reserve(port)
        self.port: int = self._socket.getsockname()[1]
        self.path = path
        self.open_browser = open_browser or _system_browser
        self.timeout = timeout

    def close(self) -> None:
        """Give the port back."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def __del__(self) -> None:
        if getattr(self, "_socket", None) is not None:
            self.close()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    async def __call__(self, authorization_url: str) -> str:
        arrived: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                target = await _read_target(reader)
                if target is not None and urlsplit(target).path == self.path and not arrived.done():
                    await _answer(writer, 200, PAGE)
                    arrived.set_result(f"http://127.0.0.1:{self.port}{target}")
                else:
                    await _answer(writer, 404, b"Not Found")
            finally:
                writer.close()

        held, self._socket = self._socket, None
        try:
            listener = await asyncio.start_server(serve, sock=held or _reserve(self.port))
        except OSError as exc:
            raise AuthorizationError(f"cannot listen on {self.redirect_uri}: {exc.strerror}") from None
        try:
            result = self.open_browser(authorization_url)
            if isinstance(result, Awaitable):
                await result
            return await asyncio.wait_for(arrived, self.timeout)
        except TimeoutError:
            raise AuthorizationError(f"no redirect reached {self.redirect_uri} within {self.timeout:.0f} s") from None
        finally:
            listener.close()
            await listener.wait_closed()
            try:  # hold the port again for the next flow (a step-up), so the redirect URI stays valid
                self._socket = _reserve(self.port)
            except OSError:
                self._socket = None  # taken meanwhile: the next flow says so


def _reserve(port: int) -> socket.socket:
    """A TCP socket bound to 127.0.0.1:`port` (0: any free port), not yet accepting: nothing else
    can take the port, and a connection to it is refused until a flow listens."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # As asyncio's own servers do: the port can be bound again, for the next flow, while the
        # previous flow's connections are in TIME_WAIT; one something listens on still cannot.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    return sock


def _system_browser(url: str) -> None:
    import webbrowser  # here: importing it costs every client, and only this one uses it

    print(f"Open this URL to authorize: {url}")
    webbrowser.open(url)


async def _read_target(reader: asyncio.StreamReader) -> str | None:
    """The request target of one GET, or None if what arrived is not one."""
    connection = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
    try:
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                data = await asyncio.wait_for(reader.read(4096), READ_TIMEOUT)
                connection.receive_data(data)
                if not data:
                    return None
                continue
            if isinstance(event, h11.Request) and event.method == b"GET":
                return event.target.decode("ascii", "replace")
            return None
    except (h11.RemoteProtocolError, TimeoutError, ConnectionError):
        return None


async def _answer(writer: asyncio.StreamWriter, status: int, body: bytes) -> None:
    head = f"HTTP/1.1 {status} {'OK' if status == 200 else 'Not Found'}\r\n"
    head += f"Content-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    writer.write(head.encode("ascii") + body)
    await writer.drain()
