"""A frame log: one record per JSON-RPC message an MCP endpoint receives or sends.

`FrameLog(app)` wraps any ASGI app (a `StreamableHTTP`, or a larger app that routes to one) and
reports each message as it passes, without changing a byte: the request when its body has
arrived, then every message of the answer (one JSON object, or each event of an SSE stream, as it
is sent). A record has the direction, the JSON-RPC id, the method (for an answer, the method of
the request it answers), what kind of message it is, the HTTP status, the time since the request
arrived, and the trace id from `traceparent` in the request's `_meta` (basic/index.mdx §`_meta`),
so a client's log and the server's can be lined up by trace or by id. The trace id is read by
`mcpref.telemetry.trace_id`: OpenTelemetry's propagator with the `otel` extra, the same W3C
check without it (the frame log needs no extra); a malformed `traceparent` shows no trace.

By default records go to the `mcpref.frames` logger at INFO; pass `sink=` to send them elsewhere.
Bodies are parsed only up to `max_body_bytes`; a larger one is logged as `oversized`, not
buffered, since the endpoint's own limits decide what it accepts.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import telemetry
from .catchall import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("mcpref.frames")


@dataclass(frozen=True)
class Frame:
    """One JSON-RPC message as the endpoint saw it."""

    #: "in" (client to server) or "out" (server to client).
    direction: str
    #: "request", "notification", "result", "error", or "oversized"/"unreadable" for a body not parsed.
    kind: str
    method: str | None
    id: Any
    #: The HTTP status of the answer; None for the incoming message.
    status: int | None
    elapsed_ms: float
    #: The 32-hex trace id of `traceparent` in the request's `_meta`, if it had one.
    trace_id: str | None = None
    #: What else is worth a glance: the `resultType`, or the error code.
    detail: str | None = None

    def line(self) -> str:
        """The record as one line, e.g. `<- 7 tools/call result complete 200 +1.3ms trace=4bf9...`."""
        arrow = "->" if self.direction == "in" else "<-"
        parts = [arrow, "-" if self.id is None else str(self.id), self.method or "?", self.kind]
        if self.detail:
            parts.append(self.detail)
        if self.status is not None:
            parts.append(str(self.status))
        parts.append(f"+{self.elapsed_ms:.1f}ms")
        if self.trace_id:
            parts.append(f"trace={self.trace_id}")
        return " ".join(parts)


def _log(frame: Frame) -> None:
    logger.info("%s", frame.line())


class FrameLog:
    """ASGI middleware that reports every JSON-RPC message through `sink`, changing no byte.

    Args:
        app: The ASGI app it wraps: a `StreamableHTTP`, or an app that routes to one.
        sink: Called with each `Frame`; by default it logs the frame's one line to the
            `mcpref.frames` logger at INFO.
        max_body_bytes: Bodies are parsed only up to this many bytes (1 MiB); a larger one is
            reported as `oversized` rather than buffered.
        clock: The clock a frame's elapsed time is read from, in seconds.
    """

    def __init__(
        self,
        app: ASGIApp,
        sink: Callable[[Frame], None] = _log,
        *,
        max_body_bytes: int = 1 << 20,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.app = app
        self.sink = sink
        self.max_body_bytes = max_body_bytes
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        exchange = _Exchange(self, self.clock())
        await self.app(scope, exchange.wrap_receive(receive), exchange.wrap_send(send))


class _Exchange:
    """What one HTTP request has shown so far."""

    def __init__(self, log: FrameLog, started: float) -> None:
        self.log = log
        self.started = started
        self.request_body = bytearray()
        self.request_overflow = False
        self.method: str | None = None
        self.id: Any = None
        self.trace_id: str | None = None
        self.status: int | None = None
        self.streamed = False
        self.answer = bytearray()
        self.answer_overflow = False

    def wrap_receive(self, receive: Receive) -> Receive:
        async def receiving() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                self._take(self.request_body, message.get("body", b""), incoming=True)
                if not message.get("more_body", False):
                    self._incoming()
            return message

        return receiving

    def wrap_send(self, send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.status = message["status"]
                headers = dict(message.get("headers", []))
                self.streamed = headers.get(b"content-type", b"").startswith(b"text/event-stream")
            elif message["type"] == "http.response.body":
                self._take(self.answer, message.get("body", b""), incoming=False)
                if self.streamed:
                    self._events()
                elif not message.get("more_body", False) and (self.answer or self.answer_overflow):
                    self._outgoing(bytes(self.answer), overflow=self.answer_overflow)
            await send(message)

        return sending

    def _take(self, buffer: bytearray, chunk: bytes, *, incoming: bool) -> None:
        overflow = self.request_overflow if incoming else self.answer_overflow
        if overflow:
            return
        if len(buffer) + len(chunk) > self.log.max_body_bytes:
            buffer.clear()
            if incoming:
                self.request_overflow = True
            else:
                self.answer_overflow = True
            return
        buffer.extend(chunk)

    def _elapsed(self) -> float:
        return (self.log.clock() - self.started) * 1000

    def _incoming(self) -> None:
        if self.request_overflow:
            self._emit("in", "oversized", None)
            return
        message = _parse(bytes(self.request_body))
        if not isinstance(message, dict):
            self._emit("in", "unreadable", None)
            return
        self.method = message.get("method") if isinstance(message.get("method"), str) else None
        self.id = message.get("id")
        params = message.get("params")
        self.trace_id = telemetry.trace_id(params.get("_meta") if isinstance(params, dict) else None)
        self._emit("in", "request" if "id" in message else "notification", None, method=self.method, id=self.id)

    def _events(self) -> None:
        """Report each complete SSE event in the answer so far, and keep the unfinished rest."""
        text = bytes(self.answer).replace(b"\r\n", b"\n")
        *complete, rest = text.split(b"\n\n")
        self.answer = bytearray(rest)
        for event in complete:
            data = b"\n".join(line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:"))
            if data:
                self._outgoing(data, overflow=False)

    def _outgoing(self, body: bytes, *, overflow: bool) -> None:
        if overflow:
            self._emit("out", "oversized", self.status)
            return
        message = _parse(body)
        if not isinstance(message, dict):
            self._emit("out", "unreadable", self.status)
        elif "method" in message:
            self._emit("out", "notification", self.status, method=message["method"], id=self.id)
        elif isinstance(message.get("error"), dict):
            code = message["error"].get("code")
            self._emit("out", "error", self.status, method=self.method, id=message.get("id"), detail=str(code))
        else:
            result = message.get("result")
            kind = result.get("resultType") if isinstance(result, dict) else None
            self._emit("out", "result", self.status, method=self.method, id=message.get("id"), detail=kind)

    def _emit(
        self, direction: str, kind: str, status: int | None, *, method: Any = None, id: Any = None, detail: Any = None
    ) -> None:
        frame = Frame(direction, kind, method, id, status, self._elapsed(), self.trace_id, detail)
        self.log.sink(frame)


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None
