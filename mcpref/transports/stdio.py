"""stdio: the same dispatcher over a child process's stdin and stdout (basic/transports/stdio.mdx).

One JSON-RPC message per line, UTF-8, in both directions. stdout carries MCP messages only;
logs go to stderr. At EOF on stdin the server finishes the answers under way, then exits.

What differs from HTTP, because there is one channel and no headers:

- Requests run concurrently; each answer is written when it is ready, so answers can come out
  of order. Request-scoped notifications (progress, log messages) are written as they happen.
- `notifications/cancelled` is the cancel signal: the request's task is cancelled and no answer
  is written for it. It also ends a `subscriptions/listen` subscription.
- A listen subscription writes its acknowledgement, then its tagged notifications, to stdout.
  When the server ends it, it writes the listen result and a `notifications/cancelled` naming
  the listen id (the spec asks for one or the other in different places; both is safe).
- A legacy client's `initialize` selects legacy semantics for the rest of the process, which
  on stdio is the session (basic/versioning.mdx §Dual-era servers).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from typing import Any, BinaryIO

from .. import jsonrpc, telemetry
from ..context import fair_share_caller
from ..jsonrpc import MCPError, Notification, Request, encode, error_response, notification, result_response
from ..legacy import negotiate
from ..server import Server
from ..subscriptions import ListenStream

#: The one process at the other end of stdin and stdout: one caller, one fair share.
STDIO_CALLER = fair_share_caller(None, "stdio")
logger = logging.getLogger("mcpref.stdio")

DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024
#: How long answers under way may take to finish once stdin has closed; later ones are cancelled.
DEFAULT_GRACE_SECONDS = 5.0


class StdioServerTransport:
    """The server's end of stdio: reads requests from stdin, runs them on `server`, writes answers
    to stdout. (`mcpref.client.StdioTransport` is the client's end: it starts the process.)"""

    def __init__(
        self,
        server: Server,
        *,
        reader: asyncio.StreamReader | None = None,
        output: BinaryIO | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        grace_seconds: float = DEFAULT_GRACE_SECONDS,
    ) -> None:
        self.server = server
        self._reader = reader
        self._output = output or sys.stdout.buffer
        self.max_line_bytes = max_line_bytes
        self.grace_seconds = grace_seconds
        self._tasks: dict[Any, asyncio.Task[None]] = {}
        self.legacy_version: str | None = None

    async def run(self) -> None:
        """Serve until stdin closes, then cancel whatever is still running."""
        reader = self._reader or await _stdin_reader(self.max_line_bytes)
        try:
            while True:
                line = await _read_line(reader, self.max_line_bytes)
                if line is None:
                    break
                if isinstance(line, MCPError):
                    self._write(error_response(None, line))
                elif line.strip():
                    self._receive(line)
        finally:
            # EOF: the client is done sending. Let answers already on their way finish (a client
            # may write a request and close stdin at once), end subscriptions, then stop.
            self.server.end_subscriptions()
            if self._tasks:
                _, late = await asyncio.wait(list(self._tasks.values()), timeout=self.grace_seconds)
                for task in late:
                    task.cancel()
                await asyncio.gather(*late, return_exceptions=True)

    def _write(self, message: dict[str, Any]) -> None:
        self._output.write(encode(message) + b"\n")
        self._output.flush()

    def _receive(self, line: bytes) -> None:
        try:
            message = jsonrpc.parse_message(line)
        except MCPError as error:
            self._write(error_response(error.request_id, error))
            return
        if isinstance(message, Notification):
            with telemetry.serving(message, None):
                if message.method == "notifications/cancelled":
                    self._cancel(message.params.get("requestId"), message.params.get("reason"))
            return
        if message.id in self._tasks:
            self._write(
                error_response(message.id, MCPError(jsonrpc.INVALID_REQUEST, "Invalid Request: id already in use"))
            )
            return
        task = asyncio.ensure_future(telemetry.serve(self._answer(message), message, None))
        self._tasks[message.id] = task
        task.add_done_callback(lambda _: self._tasks.pop(message.id, None))

    def _cancel(self, request_id: Any, reason: Any = None) -> None:
        """Cancel the request a `notifications/cancelled` names. One that names none of ours, or
        is malformed, is ignored (cancellation.mdx §Error Handling). Ids match as JSON-RPC ids do,
        by type and value: Python would take `true` and `1.0` for the request with id 1. The reason
        is logged, for whoever debugs why a request stopped (cancellation.mdx §Implementation Notes)."""
        if jsonrpc.is_request_id(request_id):
            task = self._tasks.get(request_id)
            if task is not None:
                shown = reason if isinstance(reason, str) and reason else "no reason given"
                logger.debug("request %r cancelled by the client: %.200s", request_id, shown)
                task.cancel()

    async def _answer(self, request: Request) -> None:
        try:
            incoming = self.server.accept(request, legacy_version=self.legacy_version, caller=STDIO_CALLER)
            if incoming.listens:
                await self._listen(request)
                return
            if incoming.legacy and request.method == "initialize":
                # On stdio the process is the session: its `initialize` picks the era for the rest.
                self.legacy_version = negotiate(request.params.get("protocolVersion"))
            result = await self.server.answer(incoming, self._notify)
        except asyncio.CancelledError:
            return  # cancelled by the client: no answer (basic/patterns/cancellation.mdx)
        except MCPError as error:
            telemetry.failed(error)
            self._write(error_response(request.id, error))
            return
        self._write(result_response(request.id, result))

    async def _notify(self, message: dict[str, Any]) -> None:
        self._write(telemetry.outgoing(message))

    async def _listen(self, request: Request) -> None:
        subscription = self.server.open_subscription(request)
        try:
            self._write(subscription.acknowledgement())
            while (message := await subscription.queue.get()) is not None:
                self._write(telemetry.outgoing(message))
            self._end(request, subscription)
        finally:
            self.server.close_subscription(subscription)

    def _end(self, request: Request, subscription: ListenStream) -> None:
        self._write(result_response(request.id, self.server.finish_subscription(subscription)))
        self._write(notification("notifications/cancelled", {"requestId": request.id, "reason": "subscription ended"}))


async def _stdin_reader(limit: int) -> asyncio.StreamReader:
    """A reader of stdin, whatever stdin is. The event loop can watch only pipes and sockets: it
    refuses a regular file and never sees EOF on /dev/null. A thread reads any of them, and on a
    pipe it is as fast as the loop (20,000 requests: 0.85-0.91x the loop's time)."""
    reader = asyncio.StreamReader(limit=limit)
    _ThreadedStdin(sys.stdin.fileno(), reader, asyncio.get_running_loop()).start()
    return reader


class _ThreadedStdin:
    """Feeds a `StreamReader` from a blocking file descriptor on a daemon thread. The reader
    pauses us when its buffer passes twice its limit and we hand over one chunk at a time, so a
    large file is never read into memory ahead of the server."""

    CHUNK = 64 * 1024

    def __init__(self, fd: int, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
        self._fd = fd
        self._reader = reader
        self._loop = loop
        self._running = threading.Event()
        self._running.set()
        reader.set_transport(self)  # type: ignore[arg-type]  # the reader calls only the two below

    def pause_reading(self) -> None:
        self._running.clear()

    def resume_reading(self) -> None:
        self._running.set()

    def start(self) -> None:
        threading.Thread(target=self._pump, name="mcpref-stdin", daemon=True).start()

    async def _feed(self, data: bytes) -> None:
        if data:
            self._reader.feed_data(data)
        else:
            self._reader.feed_eof()

    def _pump(self) -> None:
        try:
            while True:
                self._running.wait()
                try:
                    data = os.read(self._fd, self.CHUNK)
                except OSError as error:
                    logger.error("reading stdin failed: %s", error)
                    data = b""
                # Wait until the loop has taken the chunk, so at most one is ever in flight.
                asyncio.run_coroutine_threadsafe(self._feed(data), self._loop).result()
                if not data:
                    return
        except RuntimeError:
            return  # the loop has closed: the server is gone, nobody is reading


async def _read_line(reader: asyncio.StreamReader, limit: int) -> bytes | MCPError | None:
    """The next line, `None` at EOF, or an error for a line longer than `limit` (skipped whole)."""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as end:
        return end.partial or None
    except asyncio.LimitOverrunError:
        while True:
            try:
                await reader.readuntil(b"\n")
                break
            except asyncio.LimitOverrunError as overrun:
                await reader.readexactly(overrun.consumed)
            except asyncio.IncompleteReadError:
                break
        return MCPError(jsonrpc.INVALID_REQUEST, f"Invalid Request: message longer than {limit} bytes")


def serve_stdio(server: Server) -> None:
    """Run `server` on this process's stdin and stdout; log to stderr."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    asyncio.run(StdioServerTransport(server).run())
