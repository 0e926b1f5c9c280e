"""Fair shares counted over every instance of a deployment that shares a PostgreSQL database.

Listen slots per caller (`SubscriptionHub.max_per_caller`) and live tasks per caller
(`TaskQuota.max_per_caller`) are counted by each process. Behind a balancer a caller's requests
spread over N instances, so N processes counting alone would give it N shares. `PostgresShares`
lets them count together: each instance writes its own counts, one row per (kind, caller), under
a lease it renews every `refresh_seconds`, and reads back the sum of the others' rows. A limit then
compares the larger of its own count and that sum plus its own with its bound, so the process's
own count stays the floor whatever the database says.

Rows of an instance that stopped renewing them (killed, cut off) stop counting once its lease
runs out (`lease_seconds`), and the next instance to write deletes them. While this instance
cannot reach the database, it forgets the others' counts once its last reading is older than a
lease, and counts alone: the per-process bound, never a caller locked out by numbers nobody
renews.

The count is as fresh as the last round trip: a caller that opens streams on several instances
within one `refresh_seconds` can pass its bound by what those instances admit meanwhile, each
still within its own per-process bound. A fair share needs no more: it stops one caller taking
every slot, not one request more than the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .catchall import LogBudget

if TYPE_CHECKING:  # psycopg is the `postgres` extra's; imported only when the shares run
    import psycopg

__all__ = ["PostgresShares", "Share"]

logger = logging.getLogger("mcpref.shares")

SCHEMA = """
CREATE TABLE IF NOT EXISTS mcp_fair_shares (
    kind TEXT NOT NULL,
    caller TEXT NOT NULL,
    instance TEXT NOT NULL,
    count INTEGER NOT NULL,
    lease_until TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (kind, caller, instance)
)
"""


class Share:
    """One kind of count (listen slots, live tasks): this instance's own, read when asked, plus the
    other instances' as last read from the database. `PostgresShares.track` makes one.

    Args:
        kind: What is counted (`"listen"`, `"tasks"`), its rows' key in the table.
        counts: Returns this instance's counts by caller, read afresh each time.
    """

    def __init__(self, kind: str, counts: Callable[[], Mapping[str, int]]) -> None:
        self.kind = kind
        self.counts = counts
        #: The other instances' counts by caller, from the last reading (empty if none is fresh).
        self.others: dict[str, int] = {}

    def live(self, caller: str | None = None) -> int:
        """How many `caller` holds on every instance.

        Args:
            caller: Whose count (`context.fair_share_caller`); None counts every caller.

        Returns:
            This instance's count now plus the others' as last read.
        """
        own = self.counts()
        if caller is None:
            return sum(own.values()) + sum(self.others.values())
        return own.get(caller, 0) + self.others.get(caller, 0)

    def live_tasks(self, caller: str | None) -> int:
        """`live`, under the name `TaskQuota(shared=...)` asks for.

        Args:
            caller: Whose live tasks; None counts every caller's.

        Returns:
            The count on every instance.
        """
        return self.live(caller)


class PostgresShares:
    """Counts shared through the PostgreSQL database `dsn` names (the table is created if missing).

    `track(kind, counts)` gives the `Share` a limit reads; `start()` runs the refresh on the
    server's event loop (a server's `services` are started with it), `stop()` ends it and removes
    this instance's rows. While the database is away, each instance counts alone, and the others'
    counts are forgotten once their lease is over.

    Args:
        dsn: The PostgreSQL connection string (needs the `postgres` extra: psycopg).
        refresh_seconds: How often this instance writes its counts and reads the others'.
        lease_seconds: How long an instance's counts stand without a refresh: an instance that
            stopped without removing its rows stops counting after this long.

    Raises:
        ValueError: `refresh_seconds` is not positive or not shorter than `lease_seconds`.
    """

    def __init__(self, dsn: str, *, refresh_seconds: float = 0.5, lease_seconds: float = 5.0) -> None:
        if not 0 < refresh_seconds < lease_seconds:
            raise ValueError("refresh_seconds must be positive and shorter than lease_seconds")
        self.dsn = dsn
        self.refresh_seconds = refresh_seconds
        self.lease_seconds = lease_seconds
        #: This instance's name in the table.
        self.instance = secrets.token_hex(8)
        self.shares: dict[str, Share] = {}
        #: When the others' counts were last read (monotonic seconds), or None.
        self.last_read: float | None = None
        self._task: asyncio.Task[None] | None = None
        self._log = LogBudget(1)

    def track(self, kind: str, counts: Callable[[], Mapping[str, int]]) -> Share:
        """Share a kind of count between the instances.

        Args:
            kind: What is counted; the same on every instance.
            counts: Returns this instance's counts by caller.

        Returns:
            The `Share` a limit reads (`TaskQuota(shared=...)`, the listen slots).
        """
        share = self.shares[kind] = Share(kind, counts)
        return share

    async def start(self) -> None:
        """Start refreshing in the background on this event loop; `Server.start` calls it."""
        self._task = asyncio.create_task(self._refresh(), name="mcpref shares: refresh")

    async def stop(self) -> None:
        """Stop refreshing, and remove this instance's rows (best effort: else their lease ends)."""
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
        with contextlib.suppress(Exception):  # best effort: otherwise the rows expire with the lease
            async with await self._connect() as connection:
                await connection.execute("DELETE FROM mcp_fair_shares WHERE instance = %s", [self.instance])

    async def _refresh(self) -> None:
        import psycopg

        connection: psycopg.AsyncConnection[Any] | None = None
        try:
            while True:
                try:
                    if connection is None or connection.closed or connection.broken:
                        connection = await self._connect()
                        await connection.execute(SCHEMA)
                    await self._exchange(connection)
                except (psycopg.Error, OSError) as exc:
                    if connection is not None:  # a failed statement (two instances creating the table at once)
                        with contextlib.suppress(psycopg.Error, OSError):
                            await connection.close()
                    connection = None
                    if self._log.take() is not None:
                        logger.warning("shares: refreshing counts failed (%s); counting alone meanwhile", exc)
                if self.last_read is not None and time.monotonic() - self.last_read > self.lease_seconds:
                    for share in self.shares.values():
                        share.others = {}
                await asyncio.sleep(self.refresh_seconds)
        finally:
            if connection is not None:
                await connection.close()

    async def _exchange(self, connection: psycopg.AsyncConnection[Any]) -> None:
        """Write this instance's counts under a fresh lease, drop expired rows, read the others'."""
        rows = [
            (kind, caller, count, self.instance)
            for kind, share in self.shares.items()
            for caller, count in share.counts().items()
            if count > 0
        ]
        lease = f"{self.lease_seconds} seconds"
        async with connection.transaction():
            await connection.execute(
                "DELETE FROM mcp_fair_shares WHERE instance = %s OR lease_until < now()", [self.instance]
            )
            if rows:
                async with connection.cursor() as cursor:
                    await cursor.executemany(
                        "INSERT INTO mcp_fair_shares (kind, caller, count, instance, lease_until)"
                        " VALUES (%s, %s, %s, %s, now() + %s::interval)",
                        [(*row, lease) for row in rows],
                    )
            others = await connection.execute(
                "SELECT kind, caller, sum(count) FROM mcp_fair_shares WHERE instance <> %s GROUP BY kind, caller",
                [self.instance],
            )
            read: dict[str, dict[str, int]] = {kind: {} for kind in self.shares}
            for kind, caller, count in await others.fetchall():
                if kind in read:
                    read[kind][caller] = int(count)
        for kind, share in self.shares.items():
            share.others = read[kind]
        self.last_read = time.monotonic()

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        import psycopg

        return await psycopg.AsyncConnection.connect(
            self.dsn, autocommit=True, connect_timeout=10, application_name=f"mcpref-shares {self.instance}"
        )
