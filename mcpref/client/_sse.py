"""Server-sent events from bytes, with a bound on one event: what `HTTPTransport` reads a stream with.

The event stream format is HTML's (https://html.spec.whatwg.org/multipage/server-sent-events.html
§9.2.6): lines end with CRLF, LF or CR; a blank line ends an event; `:` starts a comment; the
fields are `event`, `data` (lines joined with LF), `id` and `retry`; others are ignored. An
event's lines, up to the blank line, may take at most `limit` bytes: a server that never ends
a line, or sends data lines forever, would otherwise be held in memory in whole. The stream as a
whole has no bound: a listen stream may run for days.

httpx-sse (which this replaces) reads lines with no bound, which is why it is ours now.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    """One event; `data` is bytes, since the client parses it as JSON straight away. `id` and
    `retry` are the stream's last ones (the format keeps them from event to event)."""

    event: str = ""
    data: bytes = b""
    id: str = ""
    retry: int | None = None


class EventTooLarge(Exception):
    """One event's lines passed `limit` bytes before the blank line that ends it.

    Args:
        limit: The bound.
        size: The bytes of the event read when it passed the bound (more may have followed).
    """

    def __init__(self, limit: int, size: int) -> None:
        super().__init__(f"an SSE event over {limit} bytes ({size} read so far)")
        self.limit = limit
        self.size = size


class _Decoder:
    """The fields of the event being read; `line` takes one line, its ending removed."""

    def __init__(self) -> None:
        self.event = ""
        self.data: list[bytes] = []
        # These two outlive their event, as the format says: the stream's last id and its
        # reconnection time.
        self.last_id = ""
        self.retry: int | None = None

    def line(self, line: bytes) -> Event | None:
        if not line:
            return self._dispatch()
        if line.startswith(b":"):
            return None
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self.data.append(value)
        elif name == b"event":
            self.event = value.decode("utf-8", "replace")
        elif name == b"id":
            if b"\0" not in value:
                self.last_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> Event | None:
        """The event the blank line ends; none if it had no `data` line."""
        event = Event(self.event, b"\n".join(self.data), self.last_id, self.retry) if self.data else None
        self.event, self.data = "", []
        return event


async def events(chunks: AsyncIterable[bytes], limit: int) -> AsyncIterator[Event]:
    """Each event of a stream read as `chunks` of bytes.

    Args:
        chunks: The body as it arrives (`httpx.Response.aiter_bytes()`).
        limit: The most bytes one event's lines may take, line endings not counted.

    Yields:
        Each event, once the blank line after it has arrived. An event the stream ends in the
            middle of is dropped, as the format says.

    Raises:
        EventTooLarge: An event (or one line of it) passed `limit`; nothing more is read.
    """
    decoder = _Decoder()
    pending: list[bytes] = []  # the start of a line whose end has not arrived
    size = 0  # bytes of the event so far, pending included
    after_cr = False  # the last chunk ended with CR: an LF starting this one belongs to it
    async for chunk in chunks:
        if after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        if not chunk:
            continue
        lines = chunk.splitlines(keepends=True)  # bytes split at CRLF, LF and CR only
        after_cr = chunk.endswith(b"\r")
        tail = b"" if chunk.endswith((b"\n", b"\r")) else lines.pop()
        for line in lines:
            text = line.rstrip(b"\r\n")
            size += len(text)
            if size > limit:
                raise EventTooLarge(limit, size)
            if pending:
                text = b"".join(pending) + text
                pending = []
            if not text:
                size = 0
            if (event := decoder.line(text)) is not None:
                yield event
        if tail:
            pending.append(tail)
            size += len(tail)
            if size > limit:
                raise EventTooLarge(limit, size)
