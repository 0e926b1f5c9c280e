"""The last line of defence: an exception nothing else caught becomes one uniform JSON 500.

Every error the protocol knows has its own answer (see `transports.http`). This is for the rest,
a bug: the client learns only that the server failed (`-32603`, no details, no traceback), and
the log gets one line per failure, at most `LINES_PER_SECOND` a second, so a client that found
a crashing input cannot flood the log by repeating it. The traceback is logged at DEBUG.

A handler's own bug is caught nearer (the dispatcher answers -32603, a tool `isError`), and its
traceback is worth logging: `log_bug` logs it within the same budget.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .jsonrpc import INTERNAL_ERROR, MCPError, encode, error_response

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger("mcpref.errors")

#: Errors, streams and plain answers say their type is what they claim, so no browser sniffs
#: another (http.py's `_json` says why a POST's 200 JSON result goes without it).
NOSNIFF = (b"x-content-type-options", b"nosniff")
LINES_PER_SECOND = 5
INTERNAL_ERROR_BODY = encode(error_response(None, MCPError(INTERNAL_ERROR, "Internal error")))


class LogBudget:
    """A few log lines a second; the ones over budget are counted and reported with the next."""

    def __init__(self, per_second: int) -> None:
        self.per_second = per_second
        self.window = 0
        self.used = 0
        self.dropped = 0

    def take(self) -> int | None:
        """The number of lines dropped since the last one logged, or None to drop this one."""
        now = int(time.monotonic())
        if now != self.window:
            self.window, self.used = now, 0
        if self.used >= self.per_second:
            self.dropped += 1
            return None
        self.used += 1
        dropped, self.dropped = self.dropped, 0
        return dropped


_budget = LogBudget(LINES_PER_SECOND)


def log_bug(log: logging.Logger, message: str, *args: Any) -> None:
    """Log the exception being handled, traceback included, within the budget `internal_error`
    spends: a client repeating an input that breaks a handler cannot flood the log either."""
    dropped = _budget.take()
    if dropped is not None:
        more = f" ({dropped} more not logged)" if dropped else ""
        log.error(message + "%s", *args, more, exc_info=True)


async def internal_error(scope: Scope, send: Send, exc: BaseException) -> None:
    """Log one line about `exc` and answer 500, unless the response had already begun."""
    dropped = _budget.take()
    if dropped is not None:
        method, path = scope.get("method", "-"), str(scope.get("path", ""))[:200]
        more = f" ({dropped} more not logged)" if dropped else ""
        logger.error("%s %s failed: %s%s", method, path, type(exc).__name__, more)
        logger.debug("traceback of the failure above", exc_info=exc)
    # After the response has begun there is nothing left to say; the server closes the connection.
    with contextlib.suppress(Exception):
        await plain_response(send, 500, INTERNAL_ERROR_BODY, content_type=b"application/json")


async def plain_response(
    send: Send,
    status: int,
    body: bytes,
    *,
    content_type: bytes = b"text/plain; charset=utf-8",
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """A whole response in two messages, with its length and `nosniff`."""
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode()), NOSNIFF, *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class CatchAll:
    """Wrap an ASGI app so that nothing it raises reaches the server as a traceback."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except Exception as exc:
            if scope["type"] != "http":
                raise
            await internal_error(scope, send, exc)
