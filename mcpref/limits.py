"""The bounds of the HTTP server process: what one connection may cost before it is refused.

The MCP endpoint bounds what it reads itself (the body, listen filters and slots: see
`transports.http` and `subscriptions`). What arrives before the endpoint sees a request, the
request head and the time it takes to arrive, only the HTTP server can bound; this module does
it for uvicorn, as `mcpref.run` serves:

- **Request head size** (431): h11's own limit on an incomplete event (`max_header_bytes`), with
  the status h11 suggests instead of uvicorn's generic 400. h11 rather than httptools because
  uvicorn gives httptools no header limit at all: a 1 MB header value was accepted.
- **Head deadline** (408): a connection that has not sent a whole request head within
  `header_timeout` seconds of its first byte (or of connecting) is answered 408 and closed, so a
  slowloris client cannot hold a connection by sending a byte every few seconds.
- **Idle keep-alive** (closed): uvicorn's `timeout_keep_alive`.
- **Connections** (503): uvicorn's `limit_concurrency` caps open connections plus running
  requests; past it a request is answered 503 at once.

docs/patterns/production.md lists every limit, its default and what a client sees.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol


@dataclass(frozen=True)
class ServerLimits:
    #: The request line plus all header fields, in bytes (431 past it).
    max_header_bytes: int = 16 * 1024
    #: Seconds from connecting, or from a request's first byte, to the end of its head (408).
    header_timeout: float = 10.0
    #: Seconds an idle keep-alive connection stays open between requests.
    keepalive_timeout: float = 5.0
    #: Open connections plus running requests, before new requests get 503.
    max_connections: int = 2048


def uvicorn_config(app: Any, limits: ServerLimits, **options: Any) -> uvicorn.Config:
    """A uvicorn configuration that enforces `limits` (options: host, port, log_level...)."""
    config = uvicorn.Config(
        app,
        http=GuardedH11Protocol,
        h11_max_incomplete_event_size=limits.max_header_bytes,
        timeout_keep_alive=limits.keepalive_timeout,  # type: ignore[arg-type]  # a float works
        limit_concurrency=limits.max_connections,
        **options,
    )
    config.header_timeout = limits.header_timeout  # type: ignore[attr-defined]
    return config


def _canned(status: int, reason: str) -> bytes:
    body = f"{reason}\n".encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n"
    ).encode() + body


HEAD_TOO_LARGE = _canned(431, "Request Header Fields Too Large")
HEAD_TOO_SLOW = _canned(408, "Request Timeout")


class _GuardedConnection(h11.Connection):
    """h11's connection, refusing a head over the limit even when it arrived whole (h11 limits
    only what it is still waiting for), and remembering the last error for its status hint."""

    last_error: h11.RemoteProtocolError | None = None

    def __init__(self, max_head_bytes: int) -> None:
        super().__init__(h11.SERVER, max_head_bytes)
        self.max_head_bytes = max_head_bytes

    def next_event(self) -> Any:
        try:
            event = super().next_event()
            if type(event) is h11.Request and _head_size(event) > self.max_head_bytes:
                raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
        except h11.RemoteProtocolError as error:
            self.last_error = error
            raise
        return event


def _head_size(request: h11.Request) -> int:
    """The request line and header fields, as they were sent (give or take whitespace)."""
    size = len(request.method) + len(request.target) + 12
    for name, value in request.headers:
        size += len(name) + len(value) + 4
    return size


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a 431 for an oversized head and a deadline for the head."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.conn = _GuardedConnection(config.h11_max_incomplete_event_size or ServerLimits.max_header_bytes)
        self.max_header_bytes: int = config.h11_max_incomplete_event_size or ServerLimits.max_header_bytes
        self.header_timeout: float = getattr(config, "header_timeout", ServerLimits.header_timeout)
        self._head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._head_deadline is None and self.conn.their_state is h11.IDLE:
            self._arm_head_deadline()  # the first byte of the next request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_head_deadline()

    def send_400_response(self, msg: str) -> None:
        error = self.conn.last_error
        if error is not None and error.error_status_hint == 431:
            self.logger.warning("Request head larger than %d bytes refused", self.max_header_bytes)
            self.transport.write(HEAD_TOO_LARGE)
            self.transport.close()
            return
        super().send_400_response(msg)

    def _arm_head_deadline(self) -> None:
        self._head_deadline = self.loop.call_later(self.header_timeout, self._head_too_slow)

    def _disarm_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            if self.cycle is None or self.cycle.response_complete:
                self.transport.write(HEAD_TOO_SLOW)
            self.transport.close()
