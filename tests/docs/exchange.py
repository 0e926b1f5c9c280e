"""Sending a page's request to an ASGI app and reading the answer, open streams included.

httpx's ASGI transport waits for the whole body, which never comes on a `subscriptions/listen`
stream. This driver speaks ASGI directly: it reads events as they are sent, and once it has as
many as the page shows (and nothing more arrives for a moment) it either disconnects, the way a
client closes a stream, or, when the page continues the stream further down, leaves it running
on the page's event loop so that later blocks can read what arrives next. A response the page
shows as JSON must end on its own.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .messages import Request, parse_sse

#: How long an open stream must stay quiet, after the shown events, before the client leaves.
QUIET_SECONDS = 0.2
#: The longest any single exchange (or any one read of a continued stream) may take.
TIMEOUT_SECONDS = 10.0


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: str
    #: True when the server was still streaming and the harness closed the stream.
    left_open: bool = False
    chunks: list[bytes] = field(default_factory=list)


class Exchange:
    """One request in flight on an ASGI app: started once, read as often as the page shows more.

    Must be driven from one event loop: `begin`, then `read` (any number of times), then `close`.
    """

    def __init__(self, app: Any, request: Request) -> None:
        self.app = app
        self.request = request
        self.answer = Answer(0, [], "")
        #: How many bytes of the body earlier reads have already handed out.
        self.consumed = 0
        self._task: asyncio.Future[None] | None = None
        self._leave: asyncio.Event | None = None
        self._progressed: asyncio.Event | None = None

    @property
    def finished(self) -> bool:
        return self._task is not None and self._task.done()

    async def begin(self) -> None:
        request = self.request
        body = request.body.encode()
        target = urlsplit(request.target)
        headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers]
        names = {name for name, _ in headers}
        if b"host" not in names:
            headers.insert(0, (b"host", b"127.0.0.1:8000"))
        if body and b"content-length" not in names:
            headers.append((b"content-length", str(len(body)).encode()))
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": "http",
            "path": target.path,
            "raw_path": target.path.encode(),
            "query_string": target.query.encode(),
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        self._leave = leave = asyncio.Event()
        self._progressed = progressed = asyncio.Event()
        body_sent = False
        answer = self.answer

        async def receive() -> dict[str, Any]:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await leave.wait()
            return {"type": "http.disconnect"}

        async def send_(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer.status = message["status"]
                answer.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])]
            elif message["type"] == "http.response.body":
                answer.chunks.append(message.get("body", b""))
            progressed.set()

        self._task = asyncio.ensure_future(self.app(scope, receive, send_))

    async def read(self, shown_events: int | None) -> str:
        """Wait until the server ends the response, or until `shown_events` more events have
        arrived and the stream has been quiet for a moment; return the body read since the last
        call. `answer.left_open` says which of the two happened."""
        assert self._task is not None and self._progressed is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT_SECONDS
        already = _events_in(self._body()[: self.consumed].decode("utf-8"))
        wanted = None if shown_events is None else already + shown_events
        self.answer.left_open = False
        while not self._task.done():
            self._progressed.clear()
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            enough = wanted is not None and _events_in(self._body().decode("utf-8", errors="replace")) >= wanted
            waiter = asyncio.ensure_future(self._progressed.wait())
            timeout = QUIET_SECONDS if enough else remaining
            await asyncio.wait({self._task, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if enough and not self._task.done() and not self._progressed.is_set():
                self.answer.left_open = True
                break
        if self._task.done():
            self._task.result()
        body = self._body()
        text = body[self.consumed :].decode("utf-8")
        self.consumed = len(body)
        return text

    async def close(self) -> None:
        """Leave, as a client closes its end: the server sees a disconnect and must finish."""
        assert self._task is not None and self._leave is not None
        if not self._task.done():
            self._leave.set()
            try:
                await asyncio.wait_for(self._task, TIMEOUT_SECONDS)
            except TimeoutError:
                raise TimeoutError(f"the server did not finish {self.request.method} {self.request.target}") from None
        self._task.result()

    def _body(self) -> bytes:
        return b"".join(self.answer.chunks)


def send(app: Any, request: Request, shown_events: int | None = None) -> Answer:
    """Send `request` exactly as written (plus Host and Content-Length, as curl adds them)."""
    return asyncio.run(complete(Exchange(app, request), shown_events))


async def complete(exchange: Exchange, shown_events: int | None) -> Answer:
    """One whole exchange: begin, read what the page shows, then leave if the stream is still open."""
    await exchange.begin()
    exchange.answer.body = await exchange.read(shown_events)
    await exchange.close()
    return exchange.answer


def _events_in(text: str) -> int:
    complete_part = text[: text.rfind("\n\n") + 2] if "\n\n" in text else ""
    try:
        return len([event for event in parse_sse(complete_part) if event.data is not None])
    except ValueError:
        return 0
