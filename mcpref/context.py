"""What a tool, resource or prompt handler may know about the request it is serving.

A handler that declares a parameter named `ctx` receives a `RequestContext`. Everything on it
comes from the request itself: the server keeps nothing between requests (basic/index.mdx
§Statelessness), so two requests never share a context.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .jsonrpc import RequestId, notification
from .meta import LOG_LEVELS, RequestMeta

#: The caller of a request that came without a transport (`Server.handle`: tests, embedding).
LOCAL_PEER = "local"


def fair_share_caller(verified_principal: str | None, peer: str | None) -> str:
    """Whose fair share a request counts against: listen slots, live tasks (the one definition).

    A share means something only if a caller cannot name itself. So the caller is what the
    server verified (the principal an authentication layer such as `auth.ProtectedResource`
    put on the request) or, without one, the peer (the client's address; stdio's one process).
    A header nobody verified never makes a new caller: a peer sending a thousand made-up
    `Authorization` values is still one caller. Behind a reverse proxy every anonymous caller
    is the proxy, and shares one share: authenticate, or bound callers at the proxy.
    """
    if verified_principal is not None:
        return f"principal:{verified_principal}"
    return f"peer:{peer or 'unknown'}"


#: Sends one request-scoped notification on the request's own response stream.
NotifySink = Callable[[dict[str, Any]], Awaitable[None]]

logger = logging.getLogger("mcpref.server")


@dataclass
class RequestContext:
    """What a handler may know about the request it serves: declare a parameter named `ctx` to get it.

    The server makes it; a handler reads it. Everything on it comes from the request.

    Args:
        request_id: The JSON-RPC `id` of the request.
        method: The request's method, such as `tools/call`.
        params: The request's params, as sent.
        meta: The request's `_meta` as read: version, client capabilities, log level, progress token.
        notify: Sends a notification on the request's own response stream; None (no stream to send
            on) makes `report_progress` and `log` do nothing.
        principal: Who is asking, as the transport authenticated it; None when anonymous.
        input_responses: On an MRTR retry, the client's answers by input-request key
            ([`basic/patterns/mrtr.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).
        state: On an MRTR retry, the state the handler asked to keep, opened from `requestState`.
        may_log: Whether the server declares `logging`, without which `log` sends nothing.
        caller: Whose fair share the request counts against (`fair_share_caller`).
    """

    request_id: RequestId
    method: str
    params: dict[str, Any]
    meta: RequestMeta
    notify: NotifySink | None = None
    #: The last progress sent: each notification's progress must be greater (progress.mdx).
    _last_progress: float | None = field(default=None, init=False, repr=False)
    principal: str | None = None
    caller: str = field(default=f"peer:{LOCAL_PEER}", kw_only=True)
    input_responses: dict[str, dict[str, Any]] = field(default_factory=dict)
    state: Any = None
    may_log: bool = True

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared on this request (each request declares its own)."""
        return self.meta.client_capabilities

    def input_response(self, key: str) -> dict[str, Any] | None:
        """The client's answer to the input request `key`, if this round carries one.

        Args:
            key: The key the handler gave the input request in `InputRequired`.

        Returns:
            The client's answer (such as an elicitation's `{"action": "accept", "content": ...}`),
                or None on the first round or when the client did not answer that one.
        """
        return self.input_responses.get(key)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send `notifications/progress`, only if the request asked for it with a `progressToken`
        ([`basic/patterns/progress.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress)).

        Args:
            progress: How far along; it must increase with each call, and a value that does not is
                logged and not sent.
            total: The value `progress` reaches when done, if known.
            message: A line for people on what is happening now.
        """
        if self.notify is None or self.meta.progress_token is None:
            return
        if self._last_progress is not None and not progress > self._last_progress:
            # basic/patterns/progress.mdx: progress MUST increase with each notification.
            logger.warning(
                "%s: progress %r after %r does not increase; not sent", self.method, progress, self._last_progress
            )
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self.meta.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify(notification("notifications/progress", params))

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send `notifications/message`, only at or above the level the request's `_meta` set.

        Without `io.modelcontextprotocol/logLevel` on the request, or when the server does not
        declare `logging`, nothing is sent
        ([`server/utilities/logging.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging)).

        Args:
            level: A syslog level name: `"debug"`, `"info"`, `"notice"`, `"warning"`, `"error"`,
                `"critical"`, `"alert"` or `"emergency"`.
            data: What to log: a string or any JSON value.
            logger: The name of the part of the server logging it, if any.

        Raises:
            ValueError: `level` is none of these (when the message would be sent).
        """
        wanted = self.meta.log_level
        if self.notify is None or not self.may_log or wanted not in LOG_LEVELS:
            return
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.notify(notification("notifications/message", params))
