"""`mcpref.shares`: fair shares counted over the instances that share a PostgreSQL database, the
per-process count kept as the floor, and the rows of an instance that stopped renewing them expiring."""

from __future__ import annotations

import asyncio

import pytest

from bench.procs import free_port
from mcpref.jsonrpc import MCPError
from mcpref.shares import PostgresShares, Share
from mcpref.subscriptions import SubscriptionHub
from mcpref.tasks import TaskQuota

LISTEN = {"notifications": {"toolsListChanged": True}}
OFFERED = {"tools": {"listChanged": True}}


def test_a_hub_refuses_a_caller_whose_slots_on_every_instance_reach_its_share() -> None:
    hub = SubscriptionHub(max_per_caller=3)
    share = Share("listen", hub.counts)
    hub.shared = share
    share.others = {"peer:a": 2}  # two streams of a's on other instances
    hub.open(1, LISTEN, OFFERED, caller="peer:a")
    with pytest.raises(MCPError, match="for one caller") as refused:
        hub.open(2, LISTEN, OFFERED, caller="peer:a")
    assert refused.value.http_status == 503
    hub.open(3, LISTEN, OFFERED, caller="peer:b")  # another caller's share is its own


def test_the_process_count_is_the_floor_whatever_the_shared_count_says() -> None:
    class Lagging:
        def live(self, caller: str | None = None) -> int:
            return 0  # a reading that has not seen this instance's streams yet

    hub = SubscriptionHub(max_per_caller=2)
    hub.shared = Lagging()
    hub.open(1, LISTEN, OFFERED, caller="peer:a")
    hub.open(2, LISTEN, OFFERED, caller="peer:a")
    with pytest.raises(MCPError, match="for one caller"):
        hub.open(3, LISTEN, OFFERED, caller="peer:a")


def test_a_task_quota_counts_the_other_instances_tasks() -> None:
    quota = TaskQuota(max_per_caller=2, max_tasks=4)
    share = quota.shared = Share("tasks", quota.counts)
    share.others = {"peer:a": 1}  # a task of a's on another instance
    quota.admit("peer:a", "t1")
    with pytest.raises(MCPError, match="for one caller"):
        quota.admit("peer:a", "t2")
    quota.admit("peer:c", "t3")
    quota.admit("peer:d", "t4")
    with pytest.raises(MCPError, match="Too many tasks running"):  # 4 in all, over every instance
        quota.admit("peer:e", "t5")


async def _until(condition, seconds: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not reached in time")


def test_instances_read_each_others_counts_and_a_silent_instances_rows_expire(postgres_dsn: str) -> None:
    async def scenario() -> None:
        mine, theirs, gone = ({"peer:a": 1}, {"peer:a": 2, "peer:b": 1}, {"peer:a": 4})
        one, two, three = (PostgresShares(postgres_dsn, refresh_seconds=0.1, lease_seconds=1.0) for _ in range(3))
        share = one.track("listen", lambda: mine)
        two.track("listen", lambda: theirs)
        three.track("listen", lambda: gone)
        for shares in (one, two, three):
            await shares.start()
        await _until(lambda: share.live("peer:a") == 7)
        assert share.live("peer:b") == 1 and share.live() == 8
        # Killed: it stops renewing without removing its rows; they count until its lease runs out.
        assert three._task is not None
        three._task.cancel()
        await _until(lambda: share.live("peer:a") == 3, seconds=5)
        await two.stop()  # stopped cleanly: its rows go at once
        await _until(lambda: share.live("peer:a") == 1, seconds=2)
        await one.stop()

    asyncio.run(scenario())


def test_without_its_database_an_instance_counts_alone() -> None:
    async def scenario() -> int:
        shares = PostgresShares(f"postgresql://nobody@127.0.0.1:{free_port()}/none", refresh_seconds=0.05,
                                lease_seconds=0.2)
        share = shares.track("tasks", lambda: {"peer:a": 1})
        share.others = {"peer:a": 9}  # a reading from before the database went away
        shares.last_read = 0.0
        await shares.start()
        await asyncio.sleep(0.3)
        await shares.stop()
        return share.live("peer:a")

    assert asyncio.run(scenario()) == 1


def test_a_refresh_longer_than_the_lease_is_refused() -> None:
    with pytest.raises(ValueError, match="shorter than lease_seconds"):
        PostgresShares("postgresql://", refresh_seconds=5, lease_seconds=5)
