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
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from ..jsonrpc import Notification, same_id
from ..meta import SUBSCRIPTION_ID_KEY
from ._errors import MCPClientError, ProtocolError, TransportError, error_from

if TYPE_CHECKING:
    from ._client import Client

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

#: Which cached lists each notification makes stale.
STALE_LISTS = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}
#: The same, by filter field, for what a reconnect may have missed.
FILTER_LISTS = {
    "toolsListChanged": ("tools/list",),
    "promptsListChanged": ("prompts/list",),
    "resourcesListChanged": ("resources/list", "resources/templates/list"),
}
#: Request-scoped notifications never travel on a listen stream (changelog.mdx #4); skip them.
NOT_FOR_LISTEN = frozenset({"notifications/progress", "notifications/message"})


class Subscription:
    """One `subscriptions/listen` stream. Use it as `async with` (opens it and waits for the
    acknowledgement) and iterate it; or iterate it bare, which opens it on first use and closes
    it when the loop ends.

    - `requested`: the filter sent.
    - `honored`: the filter the server acknowledged, `None` until the stream is open.
    - `subscription_id`: the JSON-RPC id of the current listen request (new after a reconnect).
    - `ended_by_server`: `True` once the server closed the subscription gracefully.
    """

    def __init__(
        self, client: Client, notifications: dict[str, Any], *, max_reconnects: int = 3, backoff: float = 0.05
    ) -> None:
        self._client = client
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
                return note
        raise StopAsyncIteration

    # -- internals -----------------------------------------------------------------------

    async def _open(self) -> None:
        era = await self._client._ready()
        if era.era != "modern":
            raise ProtocolError(f"subscriptions/listen needs a 2026-07-28 server; this one speaks {era.version}")
        request_id = next(self._client._ids)
        params = self._client._with_meta({"notifications": self.requested}, era.version, None)
        message = {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}
        stream = self._client.transport.exchange(message, long_lived=True)
        self._stream, self.subscription_id = stream, request_id
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
        self._client._forget_lists(*STALE_LISTS.get(method, ()))
        if method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            self._client.cache.invalidate(endpoint=self._client.endpoint, method="resources/read", uri=params["uri"])
        return Notification(method=method, params=params)

    def _forget_filtered_lists(self) -> None:
        for field, methods in FILTER_LISTS.items():
            if self.requested.get(field):
                self._client._forget_lists(*methods)
        for uri in self.requested.get("resourceSubscriptions") or ():
            self._client.cache.invalidate(endpoint=self._client.endpoint, method="resources/read", uri=uri)

    async def _drop_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            with suppress(MCPClientError):
                await stream.aclose()
