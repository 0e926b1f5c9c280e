"""The redirect step for a command-line or desktop client: a browser out, a loopback listener back.

OAuth 2.1 §8.4.2 (native apps): the client listens on the loopback interface, sends the user's
browser to the authorization URL, and the authorization server redirects the browser to
`http://127.0.0.1:<port>/callback?code=...&state=...&iss=...`. `LoopbackRedirect` is that listener,
for exactly one redirect, with a deadline. HTTP parsing is h11's (the parser httpx uses).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import h11

from ._auth import AuthorizationError

PAGE = b"<!doctype html><title>Signed in</title><p>Authorization received. You can close this tab.</p>"
#: The most a request head to the listener may be.
MAX_HEAD_BYTES = 16 * 1024


class LoopbackRedirect:
    """`OAuth(redirect=LoopbackRedirect(), redirect_uri=...)`: open the browser, wait for the redirect.

    - `port`, `path`: where the listener waits; `redirect_uri` is the URI to register.
    - `open_browser`: called with the authorization URL (default: the system browser; the URL is
      printed too, for a machine without one).
    - `timeout`: how long the user has, in seconds.
    """

    def __init__(
        self,
        port: int = 33418,
        path: str = "/callback",
        *,
        open_browser: Callable[[str], object] | None = None,
        timeout: float = 300.0,
    ) -> None:
        self.port = port
        self.path = path
        self.open_browser = open_browser or _system_browser
        self.timeout = timeout

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

        listener = await asyncio.start_server(serve, "127.0.0.1", self.port)
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
                data = await asyncio.wait_for(reader.read(4096), 10)
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
