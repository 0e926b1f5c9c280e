"""stdio from the client's side: spawn the server, one JSON message per line each way.

(basic/transports/stdio.mdx.) Every exchange shares the child's stdout, so a reader task routes
each incoming line to the exchange it belongs to: a response by its `id`, a subscription's
notifications by `_meta` subscriptionId, progress by its `progressToken`. Log messages name no
request; they go to `on_stray`. stderr is free-form logging, never an error by itself.

Closing an exchange before its response sends `notifications/cancelled` (the stdio cancel
signal). If the server exits, open exchanges fail and the next one starts it again (`generation`
counts the launches, so the client knows to renegotiate). `aclose()` closes stdin, waits, then
escalates to SIGTERM and SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any

from .. import telemetry
from ..jsonrpc import MCPError, decode_json, encode, is_request_id
from ..meta import PROGRESS_TOKEN_KEY, SUBSCRIPTION_ID_KEY
from ._errors import TransportError
from ._transport import DEFAULT_MAX_MESSAGE_BYTES, HeaderParams, StrayHandler

logger = logging.getLogger("mcpref.client.stdio")

DEFAULT_MAX_LINE_BYTES = DEFAULT_MAX_MESSAGE_BYTES
_EXITED = object()


class StdioTransport:
    """Runs `command` as a child process and talks MCP over its stdin and stdout.

    The process starts on first use, and again if it died (a new `generation`)
    ([`basic/transports/stdio.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio)).

    Args:
        command: The program and its arguments, such as
            `["python", "-m", "mcpref.examples.minimal_server", "--stdio"]`.
        env: The child's environment; None inherits ours.
        cwd: The child's working directory; None: ours.
        on_stderr: Called with each line the server logs; None passes stderr through to ours.
        timeout: Seconds to wait for a response (not for `subscriptions/listen`).
        shutdown_timeout: Seconds to wait after closing stdin, and again after SIGTERM, before
            the next step.
        max_line_bytes: The longest line read from the server, 16 MiB by default; a longer one
            is skipped, with a warning, rather than filling memory.

    Raises:
        ValueError: An empty `command`.
    """

    #: No headers on stdio: everything travels in the body.
    uses_headers = False

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_stderr: Callable[[str], None] | None = None,
        timeout: float = 30.0,
        shutdown_timeout: float = 2.0,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        if not command:
            raise ValueError("command must name the server program")
        self.command = list(command)
        self.endpoint = "stdio:" + shlex.join(self.command)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.on_stderr = on_stderr
        self.timeout = timeout
        self.shutdown_timeout = shutdown_timeout
        self.max_line_bytes = max_line_bytes
        self.legacy_version: str | None = None
        #: Called with notifications that belong to no open exchange (e.g. log messages).
        self.on_stray: StrayHandler | None = None
        #: How many times the server was started: a change means its process-scoped state (a
        #: legacy handshake, the detected era, subscriptions) is gone.
        self.generation = 0
        self.process: asyncio.subprocess.Process | None = None
        self._routes: dict[Any, asyncio.Queue[Any]] = {}
        self._tokens: dict[Any, Any] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._start_lock = asyncio.Lock()
        self._closed = False

    # -- the Transport interface ---------------------------------------------------------

    async def exchange(
        self, message: dict[str, Any], *, header_params: HeaderParams | None = None, long_lived: bool = False
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Write one request; yield the messages routed to it, its response last.

        Stopping early sends `notifications/cancelled` for it.

        Args:
            message: The JSON-RPC request.
            header_params: Unused: stdio has no headers.
            long_lived: Wait without the timeout, for `subscriptions/listen`.

        Yields:
            Each message routed to the request, its response last.

        Raises:
            TransportError: The process exited, or no answer came within `timeout`.
        """
        await self._ensure_started()
        request_id = message["id"]
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._routes[request_id] = queue
        token = ((message.get("params") or {}).get("_meta") or {}).get(PROGRESS_TOKEN_KEY)
        if token is not None:
            self._tokens[token] = request_id
        answered = False
        try:
            if self._tasks[0].done():  # it exited between the start check and now
                raise TransportError(f"the server process exited before answering {message['method']}")
            await self._write(message)
            while True:
                try:
                    item = await (queue.get() if long_lived else asyncio.wait_for(queue.get(), self.timeout))
                except TimeoutError:
                    raise TransportError(
                        f"no answer to {message['method']} within {self.timeout} s", timed_out=True
                    ) from None
                if item is _EXITED:
                    raise TransportError(f"the server process exited before answering {message['method']}")
                if "method" not in item:
                    answered = True
                yield item
                if answered:
                    return
        finally:
            self._routes.pop(request_id, None)
            if token is not None:
                self._tokens.pop(token, None)
            if not answered and self._alive():
                # The client gave up on it: tell the server to stop (stdio.mdx, cancellation.mdx),
                # and say why in the log, for whoever debugs a request that never finished.
                reason = "the caller stopped waiting"
                logger.debug("cancelling %s request %r: %s", message["method"], request_id, reason)
                with contextlib.suppress(TransportError):
                    params = {"requestId": request_id, "reason": reason}
                    await self.notify({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})

    async def notify(self, message: dict[str, Any]) -> None:
        """Send a notification (no answer expected), starting the server first if needed.

        Args:
            message: The JSON-RPC notification.
        """
        message = telemetry.inject(message)
        await self._ensure_started()
        await self._write(message)

    async def aclose(self) -> None:
        """Stop the server for good: later exchanges fail instead of starting it again."""
        self._closed = True
        await self._stop()

    async def _stop(self) -> None:
        """Close stdin so the server exits on its own; escalate if it does not."""
        process, self.process = self.process, None
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                process.stdin.close()
            for stop in (None, process.terminate, process.kill):
                if stop is not None:
                    with contextlib.suppress(ProcessLookupError):
                        stop()
                try:
                    await asyncio.wait_for(process.wait(), self.shutdown_timeout)
                    break
                except TimeoutError:
                    continue
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    # -- the child process ---------------------------------------------------------------

    def _alive(self) -> bool:
        return self.process is not None and self.process.returncode is None and not self.process.stdin.is_closing()  # type: ignore[union-attr]

    async def connect(self) -> None:
        """Start the server, or start it again if it exited."""
        await self._ensure_started()

    async def _ensure_started(self) -> None:
        async with self._start_lock:
            if self._closed:
                raise TransportError("this stdio transport is closed")
            if self._alive():
                return
            if self.process is not None:
                await self._stop()
            self.process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE if self.on_stderr is not None else None,
                env=self.env,
                cwd=self.cwd,
                limit=self.max_line_bytes,
            )
            self.generation += 1
            self._tasks = [asyncio.ensure_future(self._read_stdout(self.process))]
            if self.on_stderr is not None:
                self._tasks.append(asyncio.ensure_future(self._read_stderr(self.process)))

    async def _write(self, message: dict[str, Any]) -> None:
        process = self.process
        if process is None or process.stdin is None:
            raise TransportError("the server process is not running")
        try:
            process.stdin.write(encode(message) + b"\n")
            await process.stdin.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise TransportError(f"could not write to the server process: {exc!r}") from exc

    async def _read_stdout(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        try:
            while True:
                try:
                    line = await process.stdout.readline()
                except ValueError:  # a line over the limit: skip it, it cannot be a message of ours
                    logger.warning("skipped a stdout line longer than %d bytes", self.max_line_bytes)
                    continue
                if not line:
                    break
                if line.strip():
                    await self._route(line)
        finally:
            await process.wait()
            for queue in self._routes.values():
                queue.put_nowait(_EXITED)

    async def _route(self, line: bytes) -> None:
        try:
            message = decode_json(line)
        except MCPError as error:
            # The line itself is what finds the stray print: show its start.
            excerpt = line[:120].decode("utf-8", "replace").strip()
            logger.warning("the server wrote a line that is not JSON: %r (%s)", excerpt, error.message)
            return
        if not isinstance(message, dict):
            logger.warning("the server wrote JSON that is not a message: %r", message)
            return
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if "method" in message:
            meta = params.get("_meta")
            meta = meta if isinstance(meta, dict) else {}
            token = params.get(PROGRESS_TOKEN_KEY)
            owner = meta.get(SUBSCRIPTION_ID_KEY, self._tokens.get(token) if is_request_id(token) else None)
            if "id" in message:
                owner = None  # servers never send requests; nothing can answer it
        else:
            owner = message.get("id")
        # Ids match as JSON-RPC ids do, by type and value: `true` or `1.0` is not the request 1,
        # and `[1]` (unhashable) must not stop the reader.
        queue = self._routes.get(owner) if is_request_id(owner) else None
        if queue is not None:
            queue.put_nowait(message)
        elif "method" in message and "id" not in message and self.on_stray is not None:
            await self.on_stray(message)

    async def _read_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None and self.on_stderr is not None
        while line := await process.stderr.readline():
            self.on_stderr(line.decode("utf-8", "replace").rstrip("\r\n"))
