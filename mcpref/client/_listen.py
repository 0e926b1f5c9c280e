"""`subscriptions/listen` as an async iterator of change notifications (basic/patterns/subscriptions.mdx).

The stream opens with `notifications/subscriptions/acknowledged`, whose `notifications` field is
the part of the filter the server will honour; then come the notifications, each tagged with
the listen request's id as `io.modelcontextprotocol/subscriptionId`. The client ends it by closing
the stream (HTTP) or sending `notifications/cancelled` (stdio: the transport does that when the
exchange is closed). The server ends it gracefully with a result for the listen request.

A stream that breaks without that result is re-opened with a new request id (there is no
resumption, streamable-http.mdx §SSE), a few times, with jittered backoff. Notifications sent
while it was down are lost, so the cached results the filter covers are dropped on reconnect.
Each notification also drops the cached results it makes stale (caching.mdx §Interaction with
Notifications).

A `Subscription` knows nothing of the client that made it: `Client.listen()` hands it one
callable that sends the listen request (in the negotiated era, with the client's `_meta`) and
one that forgets a cached method.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Hashable, Mapping
from contextlib import suppress
from typing import Any, Protocol

from .. import telemetry
from ..jsonrpc import Notification, same_id
from ..meta import SUBSCRIPTION_ID_KEY
from ..subscriptions import LIST_FLAGS, RESOURCE_UPDATED
from ._errors import MCPClientError, ProtocolError, TransportError, error_from

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
#: The filter field naming the resources whose `notifications/resources/updated` is wanted.
RESOURCE_SUBSCRIPTIONS = "resourceSubscriptions"

#: The cached lists behind each list capability: what its `list_changed` makes stale.
_LISTS = {
    "tools": ("tools/list",),
    "prompts": ("prompts/list",),
    "resources": ("resources/list", "resources/templates/list"),
}
#: Which cached lists each notification makes stale.
STALE_LISTS = {notification: _LISTS[capability] for capability, notification in LIST_FLAGS.values()}
#: The same, by filter flag, for what a reconnect may have missed.
FILTER_LISTS = {flag: _LISTS[capability] for flag, (capability, _) in LIST_FLAGS.items()}
#: Request-scoped notifications never travel on a listen stream (changelog.mdx #4); skip them.
NOT_FOR_LISTEN = frozenset({"notifications/progress", "notifications/message"})

#: Sends a `subscriptions/listen` request with this filter; gives back its id and its stream.
OpenListen = Callable[[dict[str, Any]], Awaitable[tuple[int, AsyncGenerator[dict[str, Any], None]]]]


class Forget(Protocol):
    """Drops the cached results of `method` (only those with these params, if any are given)."""

    def __call__(self, method: str, /, **params: Hashable) -> None: ...


def _snake(flag: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", flag).lower()


#: `Client.listen()` keywords and the filter fields they stand for: `tools_list_changed=True`
#: is `{"toolsListChanged": true}`, `resource_subscriptions=[uri]` is `resourceSubscriptions`.
FILTER_KEYWORDS = {_snake(field): field for field in (*LIST_FLAGS, RESOURCE_SUBSCRIPTIONS)}


def listen_filter(notifications: Mapping[str, Any] | None, wanted: Mapping[str, Any]) -> dict[str, Any]:
    """The wire filter for `Client.listen()`: `notifications` as given, plus the keywords in `wanted`."""
    unknown = sorted(set(wanted) - set(FILTER_KEYWORDS))
    if unknown:
        raise TypeError(
            f"unknown listen filter keyword(s): {', '.join(unknown)}; expected {', '.join(FILTER_KEYWORDS)}"
        )
    result = dict(notifications or {})
    for keyword, value in wanted.items():
        field = FILTER_KEYWORDS[keyword]
        if field == RESOURCE_SUBSCRIPTIONS:
            if isinstance(value, str) or not all(isinstance(uri, str) for uri in value):
                raise TypeError("resource_subscriptions must be a list of URI strings")
            result[field] = list(value)
        elif value:
            result[field] = True
    if not result:
        raise ValueError("listen() needs at least one notification type to subscribe to")
    return result


class Subscription:
    """One `subscriptions/listen` stream. Use it as `async with` (opens it and waits for the
    acknowledgement) and iterate it; or iterate it bare, which opens it on first use and closes
    it when the loop ends.

    - `requested`: the filter sent.
    - `honored`: the filter the server acknowledged, `None` until the stream is open.
    - `subscription_id`: the JSON-RPC id of the current listen request (new after a reconnect).
    - `ended_by_server`: `True` once the server closed the subscription gracefully.

    `Client.listen` makes one ([`basic/patterns/subscriptions.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)).

    Args:
        open_listen: Sends the listen request for a filter and gives back its id and stream.
        forget: Drops the cached results a notification makes stale.
        notifications: The filter sent, as `subscriptions/listen` takes it.
        max_reconnects: How many times in a row a stream that broke is opened again before a
            `TransportError` reaches the loop; on each reconnect the cached results the filter
            covers are dropped, since notifications sent meanwhile are lost.
        backoff: The first pause before reconnecting, in seconds; it doubles each time, jittered.
    """

    def __init__(
        self,
        open_listen: OpenListen,
        forget: Forget,
        notifications: dict[str, Any],
        *,
        max_reconnects: int = 3,
        backoff: float = 0.05,
    ) -> None:
        self._open_listen = open_listen
        self._forget = forget
        self.requested = notifications
        self.honored: dict[str, Any] | None = None
        self.subscription_id: int | None = None
        self.ended_by_server = False
        self.reconnects = 0
        self.max_reconnects = max_reconnects
        self.backoff = backoff
        self._stream: AsyncGenerator[dict[str, Any], None] | None = None
        self._closed = False
        self._entered = False

    async def __aenter__(self) -> Subscription:
        self._entered = True
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __aiter__(self) -> AsyncIterator[Notification]:
        """Inside `async with`, the subscription itself (the block closes it); iterated bare, a
        generator that closes it when the loop ends, even by `break`."""
        return self if self._entered else self._closing()

    async def _closing(self) -> AsyncIterator[Notification]:
        try:
            while True:
                try:
                    note = await self.__anext__()
                except StopAsyncIteration:
                    return
                yield note
        finally:
            await self.aclose()

    async def start(self) -> None:
        """Open the stream and wait for the acknowledgement, if not done already."""
        if self._stream is None and not self._closed:
            await self._open()

    async def aclose(self) -> None:
        """Cancel the subscription: close the stream. Closing twice is harmless."""
        self._closed = True
        await self._drop_stream()

    async def __anext__(self) -> Notification:
        failures = 0
        while not self._closed:
            try:
                if self._stream is None:
                    await self._open()
                    if failures:
                        self.reconnects += 1
                        self._forget_filtered_lists()
                assert self._stream is not None
                message = await anext(self._stream)
            except (StopAsyncIteration, TransportError) as broken:
                # Ended without the listen result: an abrupt drop, so listen again with a new id.
                await self._drop_stream()
                failures += 1
                if failures > self.max_reconnects:
                    self._closed = True
                    if isinstance(broken, TransportError):
                        raise
                    raise TransportError(f"the subscription stream kept breaking ({failures} times)") from None
                await asyncio.sleep(self.backoff * 2 ** (failures - 1) * random.uniform(0.5, 1.5))
                continue
            failures = 0
            try:
                note = self._accept(message)
            finally:
                if self._closed:
                    await self._drop_stream()
            if note is not None:
                with telemetry.receiving(message):  # its parent: the server's listen span
                    return note
        raise StopAsyncIteration

    # -- internals -----------------------------------------------------------------------

    async def _open(self) -> None:
        self.subscription_id, stream = await self._open_listen(self.requested)
        self._stream = stream
        try:
            first = await anext(stream)
        except StopAsyncIteration:
            await self._drop_stream()
            raise TransportError("the listen stream ended before its acknowledgement") from None
        if first.get("method") != ACKNOWLEDGED:
            await self._drop_stream()
            if "error" in first:
                self._closed = True
                raise error_from(first["error"])
            raise ProtocolError(f"the listen stream must open with {ACKNOWLEDGED}, got {first!r}")
        honored = (first.get("params") or {}).get("notifications")
        self.honored = honored if isinstance(honored, dict) else {}

    def _accept(self, message: dict[str, Any]) -> Notification | None:
        """The notification to hand to the caller, or `None` for messages that are not for it."""
        if "method" not in message:
            if self.subscription_id is None or not same_id(message.get("id"), self.subscription_id):
                raise ProtocolError(f"the listen stream carried a response for id {message.get('id')!r}")
            self._closed = True
            if "error" in message:
                raise error_from(message["error"])
            self.ended_by_server = True
            return None
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        method = message["method"]
        tag = (params.get("_meta") or {}).get(SUBSCRIPTION_ID_KEY, self.subscription_id)
        if "id" in message or method in NOT_FOR_LISTEN or tag != self.subscription_id:
            return None
        if method == ACKNOWLEDGED:
            honored = params.get("notifications")
            self.honored = honored if isinstance(honored, dict) else {}
            return None
        for stale in STALE_LISTS.get(method, ()):
            self._forget(stale)
        if method == RESOURCE_UPDATED and isinstance(params.get("uri"), str):
            self._forget("resources/read", uri=params["uri"])
        return Notification(method=method, params=params)

    def _forget_filtered_lists(self) -> None:
        for field, methods in FILTER_LISTS.items():
            if self.requested.get(field):
                for stale in methods:
                    self._forget(stale)
        for uri in self.requested.get(RESOURCE_SUBSCRIPTIONS) or ():
            self._forget("resources/read", uri=uri)

    async def _drop_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            with suppress(MCPClientError):
                await stream.aclose()
