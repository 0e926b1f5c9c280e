"""What `Client` needs from a transport: one request in, the messages that belong to it out.

`HTTPTransport` (`_http`) and `StdioTransport` (`_stdio`) are the two; pass either, or your own,
to `Client`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, Protocol

#: A tool's `x-mcp-header` parameters: each header name and the argument path it mirrors
#: (`mcpref.headers.header_params`), for the transports that put them in headers.
HeaderParams = Mapping[str, tuple[str, ...]]
#: Receives a notification that belongs to no open exchange.
StrayHandler = Callable[[dict[str, Any]], Awaitable[None]]
#: The most bytes the client reads for one message from a server, on every transport: a stdio
#: line, an HTTP JSON body, one SSE event. 16 MiB holds any answer a person or a model would
#: use (a page of text is a few KiB, a large image a few MiB, base64 adds a third) while a
#: server that never stops sending costs the client no more than that.
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024


class Transport(Protocol):
    """What the client needs from a transport: one request in, its messages out, response last."""

    #: Whether requests mirror parts of their body in headers (Streamable HTTP does).
    uses_headers: bool
    #: Names the server in cache keys: the URL, or the stdio command line.
    endpoint: str
    #: Set after a legacy `initialize`; transports that carry a version outside the body use it.
    legacy_version: str | None
    #: Changes when the server's process-scoped state is gone (a restarted stdio server).
    generation: int
    #: Receives notifications that belong to no open exchange (stdio log messages).
    on_stray: StrayHandler | None

    def exchange(
        self, message: dict[str, Any], *, header_params: HeaderParams | None = None, long_lived: bool = False
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Send one request; yield the messages that belong to it, its response last.

        Args:
            message: The JSON-RPC request, `_meta` included.
            header_params: The tool's `x-mcp-header` parameters, for a transport that mirrors
                them in headers; None for none.
            long_lived: Lift the response timeout, for `subscriptions/listen`.

        Yields:
            Each message that belongs to the request (notifications), its response last.
        """
        ...

    async def notify(self, message: dict[str, Any]) -> None:
        """Send one notification.

        Args:
            message: The JSON-RPC notification.
        """

    async def connect(self) -> None:
        """Make sure the server can be reached (start a stdio server, or restart a dead one)."""

    async def aclose(self) -> None:
        """Release what the transport holds: end a legacy session, stop a stdio server."""
