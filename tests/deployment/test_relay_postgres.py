"""`PostgresRelay` on a real PostgreSQL: a burst crosses whole, and a database that is away costs
bounded memory and ends in one "stale" rather than silence."""

from __future__ import annotations

import asyncio
import time

import pytest

from bench.procs import free_port
from mcpref.relay import Change, PostgresRelay


def test_a_burst_of_changes_reaches_the_other_instance_whole(postgres_dsn: str) -> None:
    async def scenario() -> list[Change]:
        sender, receiver = PostgresRelay(postgres_dsn, "burst"), PostgresRelay(postgres_dsn, "burst")
        heard: list[Change] = []
        await sender.start(lambda change: None)
        await receiver.start(heard.append)
        await asyncio.wait_for(receiver.listening.wait(), 10)
        for n in range(300):
            sender.send(Change(uri=f"memo://{n}"))
        for _ in range(200):  # 20 s at most
            if len(heard) >= 300:
                break
            await asyncio.sleep(0.1)
        await sender.stop()
        await receiver.stop()
        return heard

    heard = asyncio.run(scenario())
    assert heard == [Change(uri=f"memo://{n}") for n in range(300)]


def test_changes_for_a_database_that_is_away_are_bounded_and_end_as_stale() -> None:
    async def scenario() -> tuple[int, bool]:
        relay = PostgresRelay(f"postgresql://nobody@127.0.0.1:{free_port()}/none", "away", max_pending=5)
        await relay.start(lambda change: None)
        for n in range(50):
            relay.send(Change(uri=f"memo://{n}"))
        await asyncio.sleep(0.3)
        pending, overflowed = len(relay._pending), relay._overflowed
        await relay.stop()
        return pending, overflowed

    pending, overflowed = asyncio.run(scenario())
    assert pending == 5 and overflowed  # the first five wait; the rest are one STALE once the database is back


def test_a_relay_waits_longer_between_attempts_up_to_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Against a port nothing listens on, each failed connection waits twice as long as the one
    before, from `min_delay` to `max_delay`: a database that is down is not hammered."""
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def recorded(delay: float) -> None:
        waits.append(delay)
        await real_sleep(0)

    async def scenario() -> None:
        relay = PostgresRelay(f"postgresql://nobody@127.0.0.1:{free_port()}/none", "away")
        monkeypatch.setattr(asyncio, "sleep", recorded)
        await relay.start(lambda change: None)
        # Eight failed connections take well under a second; the deadline is for a loaded machine,
        # where 2,000 polls of 5 ms once ran out before the eighth.
        deadline = time.monotonic() + 60
        while len(waits) < 8 and time.monotonic() < deadline:
            await real_sleep(0.005)
        monkeypatch.undo()
        await relay.stop()

    asyncio.run(scenario())
    assert waits[:8] == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0]
