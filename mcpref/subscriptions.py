"""`subscriptions/listen`: the one place change notifications travel (basic/patterns/subscriptions.mdx).

A client that wants to hear about changes opens a listen request naming what it cares about:

    {"method": "subscriptions/listen",
     "params": {"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]}}}

The server answers with a stream. Its first message acknowledges the subset of the filter the
server will honour; every later message is a notification tagged with the listen request's id
as `io.modelcontextprotocol/subscriptionId`; if the server ends the subscription it sends the
listen request's result last. Progress and log messages never travel here: they belong to the
stream of the request they describe.

The hub keeps nothing about a subscription once its stream closes: after a reconnect the client
listens again. It is bounded, since every open stream holds a connection and a queue:

- `max_subscriptions` open streams in all, and `max_per_caller` for any one caller (a principal,
  or a peer address for anonymous callers), so one client cannot take every slot. Past either, a
  new listen is refused with 503 and `Retry-After`.
- Instances sharing a database count a caller's slots together when `shared` is set (a
  `mcpref.shares.Share`): the larger of this hub's count and the shared one is compared with
  `max_per_caller`, so the hub's own count stays the floor.
- A filter of at most `max_filter_uris` resource URIs and `max_filter_bytes` bytes of them; a
  larger one is -32602, and the error says which limit without echoing the filter back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from .jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, MCPError, RequestId, notification
from .meta import SUBSCRIPTION_ID_KEY

#: Filter flag → (the capability that must be offered, the notification it turns on).
LIST_FLAGS = {
    "toolsListChanged": ("tools", "notifications/tools/list_changed"),
    "promptsListChanged": ("prompts", "notifications/prompts/list_changed"),
    "resourcesListChanged": ("resources", "notifications/resources/list_changed"),
}
RESOURCE_UPDATED = "notifications/resources/updated"


class Mailbox:
    """A bounded queue of notifications for one stream: the part of `asyncio.Queue` a stream uses
    (`get`, `put_nowait`, `get_nowait`, `qsize`), in a fraction of its memory. An idle listen
    stream is mostly its queue; `asyncio.Queue` keeps four deques and an event per queue (about
    3.5 KiB), this keeps a list made on the first message and one future while a reader waits."""

    __slots__ = ("maxsize", "_items", "_reader")

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._items: list[dict[str, Any] | None] | None = None
        self._reader: asyncio.Future[None] | None = None

    def qsize(self) -> int:
        return len(self._items) if self._items else 0

    def put_nowait(self, item: dict[str, Any] | None) -> None:
        if self._items is None:
            self._items = []
        if len(self._items) >= self.maxsize:
            raise asyncio.QueueFull
        self._items.append(item)
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(None)

    def get_nowait(self) -> dict[str, Any] | None:
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.pop(0)

    async def get(self) -> dict[str, Any] | None:
        while not self._items:
            self._reader = asyncio.get_running_loop().create_future()
            try:
                await self._reader
            finally:
                self._reader = None
        return self._items.pop(0)


class ListenStream:
    """One open listen stream: what it honours, and the queue of notifications waiting to be sent."""

    def __init__(self, subscription_id: RequestId, honoured: dict[str, Any], queue_size: int) -> None:
        self.id = subscription_id
        self.honoured = honoured
        #: Whose share this subscription counts against (see `SubscriptionHub.max_per_caller`).
        self.caller = ""
        #: Who is listening, as the registries' `visible` predicates know them (None: anonymous).
        self.principal: str | None = None
        self.queue = Mailbox(queue_size)
        self._methods = {LIST_FLAGS[flag][1] for flag in honoured if flag in LIST_FLAGS}
        self._uris = set(honoured.get("resourceSubscriptions", []))

    def wants(self, method: str, uri: str | None) -> bool:
        if method == RESOURCE_UPDATED:
            return uri in self._uris
        return method in self._methods

    def acknowledgement(self) -> dict[str, Any]:
        return notification(
            "notifications/subscriptions/acknowledged",
            {"_meta": {SUBSCRIPTION_ID_KEY: self.id}, "notifications": self.honoured},
        )

    def tagged(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return notification(method, {**params, "_meta": {SUBSCRIPTION_ID_KEY: self.id}})

    def completion(self) -> dict[str, Any]:
        """The listen request's result: sent when the server ends the subscription gracefully."""
        return {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: self.id}}


#: Seconds a refused listener is asked to wait before trying again.
RETRY_AFTER_SECONDS = 5


class SharedCount(Protocol):
    """A count over every instance of a deployment (`mcpref.shares.Share`)."""

    def live(self, caller: str | None = None) -> int: ...


class SubscriptionHub:
    def __init__(
        self,
        max_subscriptions: int = 1000,
        queue_size: int = 64,
        *,
        max_per_caller: int = 32,
        max_filter_uris: int = 256,
        max_filter_bytes: int = 32 * 1024,
    ) -> None:
        self.max_subscriptions = max_subscriptions
        self.queue_size = queue_size
        self.max_per_caller = max_per_caller
        self.max_filter_uris = max_filter_uris
        self.max_filter_bytes = max_filter_bytes
        self._open: set[ListenStream] = set()
        #: The event loop the streams are served on, so a handler in a worker thread can publish.
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Open subscriptions by caller, for the fair share.
        self._by_caller: dict[str, int] = {}
        #: A caller's slots on every instance of a deployment (`mcpref.shares`), or None.
        self.shared: SharedCount | None = None

    def __len__(self) -> int:
        return len(self._open)

    def open(
        self,
        subscription_id: RequestId,
        params: dict[str, Any],
        offered: dict[str, Any],
        caller: str = "",
        principal: str | None = None,
    ) -> ListenStream:
        """Start a subscription, honouring only what the server offers (its capabilities).

        `caller` says whose share the subscription counts against; `principal` is who listens,
        whom `publish` asks its `audience` about."""
        requested = params.get("notifications")
        if not isinstance(requested, dict):
            raise MCPError(INVALID_PARAMS, "Invalid params: subscriptions/listen needs a `notifications` object")
        honoured: dict[str, Any] = {}
        for flag, (capability, _) in LIST_FLAGS.items():
            if requested.get(flag) is True and capability in offered:
                honoured[flag] = True
        uris = requested.get("resourceSubscriptions")
        if uris is not None:
            if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
                raise MCPError(INVALID_PARAMS, "Invalid params: resourceSubscriptions must be a list of URIs")
            self._check_filter_size(uris)
            if uris and offered.get("resources", {}).get("subscribe"):
                honoured["resourceSubscriptions"] = list(dict.fromkeys(uris))
        if len(self._open) >= self.max_subscriptions:
            raise _no_room(f"Too many open subscriptions (limit {self.max_subscriptions}); retry later")
        held = self._by_caller.get(caller, 0)
        if self.shared is not None:
            held = max(held, self.shared.live(caller))
        if held >= self.max_per_caller:
            raise _no_room(f"Too many open subscriptions for one caller (limit {self.max_per_caller}); retry later")
        subscription = ListenStream(subscription_id, honoured, self.queue_size)
        subscription.caller = caller
        subscription.principal = principal
        self._loop = _current_loop() or self._loop
        self._open.add(subscription)
        self._by_caller[caller] = self._by_caller.get(caller, 0) + 1
        return subscription

    def counts(self) -> dict[str, int]:
        """Open subscriptions by caller, on this hub."""
        return dict(self._by_caller)

    def _check_filter_size(self, uris: list[str]) -> None:
        if len(uris) > self.max_filter_uris:
            raise MCPError(
                INVALID_PARAMS,
                f"Invalid params: resourceSubscriptions lists {len(uris)} URIs; the limit is {self.max_filter_uris}",
            )
        size = sum(len(uri) for uri in uris)
        if size > self.max_filter_bytes:
            raise MCPError(
                INVALID_PARAMS,
                f"Invalid params: resourceSubscriptions holds {size} characters of URIs; "
                f"the limit is {self.max_filter_bytes}",
            )

    def close(self, subscription: ListenStream) -> None:
        self._forget(subscription)

    def _forget(self, subscription: ListenStream) -> None:
        if subscription not in self._open:
            return
        self._open.discard(subscription)
        left = self._by_caller[subscription.caller] - 1
        if left:
            self._by_caller[subscription.caller] = left
        else:
            del self._by_caller[subscription.caller]

    def publish(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        audience: Callable[[str | None], bool] | None = None,
    ) -> None:
        """Queue a change notification for every subscription that asked for it and, if an
        `audience` is given, whose principal it accepts: a listener hears only of what it may see.

        Safe to call from a sync handler's worker thread: the work is handed to the loop. A
        subscriber too slow to keep up loses its stream (it gets the completion result and
        listens again) rather than holding memory forever.
        """
        if self._loop is not None and _current_loop() is not self._loop:
            self._loop.call_soon_threadsafe(self.publish, method, params, audience)
            return
        params = params or {}
        accepted: dict[str | None, bool] = {}  # asked once per principal, however many streams it has
        for subscription in list(self._open):
            if not subscription.wants(method, params.get("uri")):
                continue
            if audience is not None:
                principal = subscription.principal
                if principal not in accepted:
                    accepted[principal] = audience(principal)
                if not accepted[principal]:
                    continue
            self._put(subscription, subscription.tagged(method, params))

    def publish_stale(self, audience_of: Callable[[str], Callable[[str | None], bool] | None]) -> None:
        """Tell every stream it may have missed changes (a relay between instances lost some):
        each list-changed notification it asked for, and an update for each URI it watches that
        its listener may see (`audience_of(uri)`), so its client reads everything again."""
        if self._loop is not None and _current_loop() is not self._loop:
            self._loop.call_soon_threadsafe(self.publish_stale, audience_of)
            return
        for subscription in list(self._open):
            for flag, (_, method) in LIST_FLAGS.items():
                if flag in subscription.honoured:
                    self._put(subscription, subscription.tagged(method, {}))
            for uri in subscription.honoured.get("resourceSubscriptions", []):
                audience = audience_of(uri)
                if audience is None or audience(subscription.principal):
                    self._put(subscription, subscription.tagged(RESOURCE_UPDATED, {"uri": uri}))

    def _put(self, subscription: ListenStream, message: dict[str, Any]) -> None:
        if subscription not in self._open:
            return  # ended by an earlier message of the same round: it listens again anyway
        try:
            subscription.queue.put_nowait(message)
        except asyncio.QueueFull:
            self._end(subscription)

    def end_all(self) -> None:
        """End every subscription gracefully, as on shutdown."""
        for subscription in list(self._open):
            self._end(subscription)

    def _end(self, subscription: ListenStream) -> None:
        self._forget(subscription)
        while True:
            try:
                subscription.queue.put_nowait(None)
                return
            except asyncio.QueueFull:
                subscription.queue.get_nowait()


def _no_room(message: str) -> MCPError:
    return MCPError(
        INTERNAL_ERROR,
        message,
        http_status=503,
        http_headers=[(b"retry-after", str(RETRY_AFTER_SECONDS).encode())],
    )


def _current_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
