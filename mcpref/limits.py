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
- **Body deadline** (408): a body not complete within `body_timeout` seconds of the end of its
  head is answered 408 and the connection closed. Here rather than in the endpoint because the
  protocol sees, for free, whether a body arrived with its head (almost all do) and needs a timer.
- **Idle keep-alive** (closed): uvicorn's `timeout_keep_alive`.
- **Connections** (503): uvicorn's `limit_concurrency` caps open connections plus running
  requests; past it a request is answered 503 at once.

docs/patterns/production.md lists every limit, its default and what a client sees.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol


@dataclass(frozen=True)
class ServerLimits:
    """What one connection may cost before the app sees a request. Each field is also an option
    of `mcpref.run` (`--max-header-bytes`...)."""

    max_header_bytes: int = field(
        default=16 * 1024, metadata={"help": "request line plus header fields, in bytes (431 past it)"}
    )
    header_timeout: float = field(
        default=10.0, metadata={"help": "seconds from connecting, or a request's first byte, to its whole head (408)"}
    )
    body_timeout: float = field(
        default=30.0, metadata={"help": "seconds from the end of a request's head to the end of its body (408)"}
    )
    keepalive_timeout: float = field(
        default=5.0, metadata={"help": "seconds an idle keep-alive connection stays open between requests"}
    )
    max_connections: int = field(
        default=2048, metadata={"help": "open connections plus running requests before new requests get 503"}
    )


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
    config.body_timeout = limits.body_timeout  # type: ignore[attr-defined]
    return config


def _canned(status: int, reason: str) -> bytes:
    body = f"{reason}\n".encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n"
    ).encode() + body


HEAD_TOO_LARGE = _canned(431, "Request Header Fields Too Large")
TOO_SLOW = _canned(408, "Request Timeout")


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
    """uvicorn's h11 protocol with a 431 for an oversized head and one deadline at a time: for
    the head while the client has not sent it whole, for the body while it has not sent that.

    Two attributes more than uvicorn's own: an idle listen stream is mostly its connection's
    objects, so each one counts."""

    conn: _GuardedConnection

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.conn = _GuardedConnection(config.h11_max_incomplete_event_size or ServerLimits.max_header_bytes)
        self._deadline: asyncio.TimerHandle | None = None
        #: What the deadline waits for: the head (h11.IDLE) or the body (h11.SEND_BODY).
        self._waiting_for: type[h11.IDLE] | type[h11.SEND_BODY] | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(h11.IDLE)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and self.conn.their_state is h11.IDLE:
            self._arm(h11.IDLE)  # the first byte of the next request on a kept-alive connection
        super().data_received(data)
        state = self.conn.their_state
        if state is not self._waiting_for:
            self._disarm()
            if state is h11.SEND_BODY:  # the head is in, the body is not
                self._arm(h11.SEND_BODY)

    def send_400_response(self, msg: str) -> None:
        error = self.conn.last_error  # uvicorn never replaces the connection `__init__` made
        if error is not None and error.error_status_hint == 431:
            self.logger.warning("Request head larger than %d bytes refused", self.conn.max_head_bytes)
            self.transport.write(HEAD_TOO_LARGE)
            self.transport.close()
            return
        super().send_400_response(msg)

    def _arm(self, waiting_for: type[h11.IDLE] | type[h11.SEND_BODY]) -> None:
        defaults = ServerLimits()
        if waiting_for is h11.IDLE:
            seconds = getattr(self.config, "header_timeout", defaults.header_timeout)
        else:
            seconds = getattr(self.config, "body_timeout", defaults.body_timeout)
        self._waiting_for = waiting_for
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self._waiting_for = None

    def _too_slow(self) -> None:
        """408 and close, unless the app has begun its answer (then close only). The app's task
        sees a disconnect and stops; whatever it sends afterwards goes nowhere."""
        waiting_for, self._deadline, self._waiting_for = self._waiting_for, None, None
        if self.conn.their_state is not waiting_for or self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete or not self.cycle.response_started:
            self.transport.write(TOO_SLOW)
        self.transport.close()
