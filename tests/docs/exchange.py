"""Sending a page's request to an ASGI app and reading the answer, open streams included.

httpx's ASGI transport waits for the whole body, which never comes on a `subscriptions/listen`
stream. This driver speaks ASGI directly: it reads events as they are sent, and once it has as
many as the page shows (and nothing more arrives for a moment) it disconnects, the way a client
closes a stream. A response the page shows as JSON must end on its own.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .messages import Request, parse_sse

#: How long an open stream must stay quiet, after the shown events, before the client leaves.
QUIET_SECONDS = 0.2
#: The longest any single exchange may take.
TIMEOUT_SECONDS = 10.0


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: str
    #: True when the server was still streaming and the harness closed the stream.
    left_open: bool = False
    chunks: list[bytes] = field(default_factory=list)


def send(app: Any, request: Request, shown_events: int | None = None) -> Answer:
    """Send `request` exactly as written (plus Host and Content-Length, as curl adds them)."""
    return asyncio.run(_exchange(app, request, shown_events))


async def _exchange(app: Any, request: Request, shown_events: int | None) -> Answer:
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
    leave = asyncio.Event()
    body_sent = False
    answer = Answer(0, [], "")
    progressed = asyncio.Event()

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

    task = asyncio.ensure_future(app(scope, receive, send_))
    deadline = asyncio.get_running_loop().time() + TIMEOUT_SECONDS
    while not task.done():
        progressed.clear()
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            break
        enough = shown_events is not None and _events_so_far(answer) >= shown_events
        waiter = asyncio.ensure_future(progressed.wait())
        timeout = QUIET_SECONDS if enough else remaining
        await asyncio.wait({task, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if enough and not task.done() and not progressed.is_set():
            answer.left_open = True
            break
    if not task.done():
        leave.set()
        try:
            await asyncio.wait_for(task, TIMEOUT_SECONDS)
        except TimeoutError:
            task.cancel()
            raise TimeoutError(f"the server did not finish {request.method} {request.target}") from None
    task.result()
    answer.body = b"".join(answer.chunks).decode("utf-8")
    return answer


def _events_so_far(answer: Answer) -> int:
    text = b"".join(answer.chunks).decode("utf-8", errors="replace")
    complete = text[: text.rfind("\n\n") + 2] if "\n\n" in text else ""
    try:
        return len([event for event in parse_sse(complete) if event.data is not None])
    except ValueError:
        return 0
