"""Change notifications across server instances: a relay between each instance's listen streams.

A listen stream lives on the instance whose connection holds it (mcpref.subscriptions), but a
change can happen on any instance behind the balancer: a tool registered, a resource edited. A
relay carries the *fact* of the change to every other instance, which then tells its own
listeners, deciding visibility there as for a local change (the registries' `visible=`).

What travels is deliberately small: the kind of list that changed, or the URI of the resource
that was updated, never content, so a relayed notification can carry nothing a listener may not
see. When a relay may have lost notifications (its database connection dropped, or more changes
came than it could send), the instances say so the only way the protocol can: every stream gets
each list-changed notification it asked for and an update for each URI it watches, so clients
treat everything as stale and read it again (a change notification invalidates what a client
cached: [caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching#interaction-with-notifications)).

`PostgresRelay` uses PostgreSQL's `LISTEN`/`NOTIFY`, so a deployment that keeps its tasks in
PostgreSQL needs nothing more. Without a relay (the default, and with SQLite or the in-memory
store) notifications stay on the instance where the change happened.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .catchall import LogBudget

if TYPE_CHECKING:  # psycopg is the `postgres` extra's; imported only when a relay runs
    import psycopg

__all__ = ["STALE", "Change", "PostgresRelay", "Relay"]

logger = logging.getLogger("mcpref.relay")

#: PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; a larger change goes as "stale".
MAX_PAYLOAD_BYTES = 7900
#: Changes sent in one round trip to the database at most.
BATCH = 64


@dataclass(frozen=True)
class Change:
    """One change to tell other instances of: a list, or an updated resource.

    Args:
        list: The list that changed: `"tools"`, `"prompts"` or `"resources"`.
        uri: The URI of the resource that was updated.
        stale: Changes may have been missed: every listen stream is told that everything may
            have changed (`STALE`).
    """

    list: str | None = None
    uri: str | None = None
    stale: bool = False


STALE = Change(stale=True)
"""The change that stands for "changes may have been missed": every stream reads everything again."""


class Relay(Protocol):
    """What a server needs of a relay. `deliver` is called on the server's event loop for each
    change another instance sent; `send` may be called from any thread."""

    async def start(self, deliver: Callable[[Change], None]) -> None:
        """Start hearing of the other instances' changes; `Server.start` calls it.

        Args:
            deliver: Called on the server's event loop with each change another instance sent.
        """

    def send(self, change: Change) -> None:
        """Tell the other instances of a change made here, without waiting for them.

        Args:
            change: What changed; called from any thread.
        """

    async def stop(self) -> None:
        """Stop hearing and sending; `Server.stop` calls it."""


def encode(origin: str, change: Change) -> str:
    """The NOTIFY payload: who sent it and what changed, or `stale` if it would not fit."""
    fields: dict[str, Any] = {"from": origin}
    if change.stale:
        fields["stale"] = True
    elif change.uri is not None:
        fields["uri"] = change.uri
    else:
        fields["list"] = change.list
    payload = json.dumps(fields, ensure_ascii=False)
    if len(payload.encode()) > MAX_PAYLOAD_BYTES:
        return json.dumps({"from": origin, "stale": True})
    return payload


def decode(payload: str) -> tuple[str, Change] | None:
    """The sender and the change of a payload, or None for one this module did not write."""
    try:
        fields = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(fields, dict) or not isinstance(fields.get("from"), str):
        return None
    if fields.get("stale") is True:
        return fields["from"], STALE
    if isinstance(fields.get("uri"), str):
        return fields["from"], Change(uri=fields["uri"])
    if fields.get("list") in ("tools", "prompts", "resources"):
        return fields["from"], Change(list=fields["list"])
    return None


class PostgresRelay:
    """Relays changes through PostgreSQL `LISTEN`/`NOTIFY` on `channel` (one per server).

    Two connections: one listens, one sends. Either one lost is opened again after a pause that
    grows from `min_delay` to `max_delay` seconds; once listening again, the instance tells its
    own streams that they may have missed changes (`STALE`). At most `max_pending` changes wait to
    be sent while the database is away; past that they are dropped and one `STALE` goes instead,
    so memory stays bounded and no instance is left believing it missed nothing.

    Args:
        dsn: The PostgreSQL connection string (needs the `postgres` extra: psycopg).
        channel: The `LISTEN`/`NOTIFY` channel; the instances of one server share one, and no
            other server uses it.
        min_delay: The first pause before opening a lost connection again, in seconds.
        max_delay: The longest pause, in seconds, as it doubles.
        max_pending: The most changes waiting while the database is away; past that, one
            `STALE` goes instead of the ones dropped.
    """

    def __init__(
        self,
        dsn: str,
        channel: str,
        *,
        min_delay: float = 0.2,
        max_delay: float = 5.0,
        max_pending: int = 1024,
    ) -> None:
        self.dsn = dsn
        self.channel = channel
        self.min_delay = min_delay
        self.max_delay = max_delay
        self.max_pending = max_pending
        #: This instance, so it does not hear its own changes twice (it told its streams already).
        self.origin = secrets.token_hex(8)
        #: Set while the listening connection is up: tests and health checks read it.
        self.listening = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: collections.deque[str] = collections.deque()
        self._overflowed = False
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._log = LogBudget(1)

    async def start(self, deliver: Callable[[Change], None]) -> None:
        """Open the two connections in the background, and return at once.

        Args:
            deliver: Called on this event loop with each change another instance sent; `STALE`
                after each time listening started again.
        """
        self._loop = asyncio.get_running_loop()
        self._tasks = [
            asyncio.create_task(self._listen(deliver), name="mcpref relay: listen"),
            asyncio.create_task(self._send_pending(), name="mcpref relay: send"),
        ]

    def send(self, change: Change) -> None:
        """Queue a change for `NOTIFY`; before `start`, or after `stop`, nothing is sent.

        Args:
            change: What changed; a payload too large for `NOTIFY` goes as `STALE`. Safe to
                call from any thread.
        """
        loop = self._loop
        if loop is None or loop.is_closed():
            return  # not started: nothing runs yet that another instance could be told about
        payload = encode(self.origin, change)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._enqueue(payload)
        else:
            loop.call_soon_threadsafe(self._enqueue, payload)

    async def stop(self) -> None:
        """Close both connections; changes still waiting are dropped."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        self._loop = None

    def _enqueue(self, payload: str) -> None:
        if len(self._pending) >= self.max_pending:
            self._overflowed = True
        else:
            self._pending.append(payload)
        self._wake.set()

    async def _listen(self, deliver: Callable[[Change], None]) -> None:
        import psycopg
        from psycopg import sql

        delay, interrupted = self.min_delay, False
        while True:
            try:
                async with await self._connect() as connection:
                    await connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                    self.listening.set()
                    delay = self.min_delay
                    if interrupted:  # whatever was sent while we were away is lost to us
                        deliver(STALE)
                    interrupted = False
                    async for notice in connection.notifies():
                        decoded = decode(notice.payload)
                        if decoded is not None and decoded[0] != self.origin:
                            deliver(decoded[1])
            except (psycopg.Error, OSError) as exc:
                self.listening.clear()
                interrupted = True
                self._warn("listening", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.max_delay)

    async def _send_pending(self) -> None:
        import psycopg

        connection: psycopg.AsyncConnection[Any] | None = None
        delay = self.min_delay
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._pending or self._overflowed:
                    if self._overflowed and not self._pending:  # what was dropped, said once
                        self._pending.append(encode(self.origin, STALE))
                        self._overflowed = False
                    try:
                        if connection is None or connection.closed or connection.broken:
                            connection = await self._connect()
                        # Whatever is waiting goes in one round trip (a burst of changes does not
                        # queue behind one NOTIFY each); PostgreSQL folds identical ones.
                        batch = list(itertools.islice(self._pending, BATCH))
                        calls = ", ".join(["pg_notify(%s, %s)"] * len(batch))
                        await connection.execute(f"SELECT {calls}", [v for p in batch for v in (self.channel, p)])
                    except (psycopg.Error, OSError) as exc:
                        connection = None
                        self._warn("sending", exc, delay)
                        await asyncio.sleep(delay)
                        delay = min(delay * 2, self.max_delay)
                        continue
                    for _ in batch:
                        self._pending.popleft()
                    delay = self.min_delay
        finally:
            if connection is not None:
                await connection.close()

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        import psycopg

        return await psycopg.AsyncConnection.connect(
            self.dsn, autocommit=True, connect_timeout=10, application_name=f"mcpref-relay {self.origin}"
        )

    def _warn(self, doing: str, exc: BaseException, delay: float) -> None:
        if self._log.take() is not None:
            logger.warning("relay: %s on %r failed (%s); again in %.1f s", doing, self.channel, exc, delay)
