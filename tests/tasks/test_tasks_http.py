"""The tasks extension end to end: mcpref's client against the everything server on real uvicorn.

One instance on SQLite (lifecycle, principals, cancel, restart), and two uvicorn processes
sharing a real PostgreSQL (a task accepted by one is polled, answered, cancelled and finished
through the other; an instance killed mid-task leaves a task the other reports failed).
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.procs import ServerProcess
from mcpref import StreamableHTTP
from mcpref.client import Client, InvalidParams, MissingRequiredClientCapability, TaskCancelled
from mcpref.client._errors import InternalError
from mcpref.examples.everything_server import build_server
from mcpref.meta import CLIENT_CAPABILITIES_KEY
from mcpref.tasks import TASKS_EXTENSION, SQLiteTaskStore, TasksExtension
from mcpref.tasks.quota import TaskQuota
from tests.conftest import META, mcp_body, mcp_headers, running

ROOT = Path(__file__).resolve().parents[2]


def app_on(path: Path, *, lease_seconds: float = 15.0, quota: TaskQuota | None = None) -> StreamableHTTP:
    tasks = TasksExtension(SQLiteTaskStore(path), poll_interval_ms=50, lease_seconds=lease_seconds, quota=quota)
    return StreamableHTTP(build_server(tasks))


def accept(params: dict[str, Any]) -> dict[str, Any]:
    """The user says yes to every form."""
    return {"action": "accept", "content": {"confirm": True, "name": "Ada"}}


def client(url: str, *, token: str = "alice", tasks: bool = True) -> Client:
    return Client(url + "/mcp", tasks=tasks, elicitation=accept, headers={"Authorization": f"Bearer {token}"})


def test_a_task_asks_for_input_and_finishes(tmp_path: Path) -> None:
    async def scenario(url: str) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
        seen: list[tuple[str, Any]] = []
        async with client(url) as c:
            result = await c.call_tool(
                "confirm_delete",
                {"filename": "notes.txt"},
                on_status=lambda task: seen.append((task["status"], sorted(task.get("inputRequests", {})))),
            )
        return result, seen

    with running(app_on(tmp_path / "t.sqlite3")) as url:
        result, seen = asyncio.run(scenario(url))
    assert result["content"] == [{"type": "text", "text": "Deleted notes.txt"}]
    assert ("input_required", ["confirm"]) in seen
    assert seen[-1] == ("completed", [])


def test_one_peer_gets_one_share_of_tasks_whatever_authorization_it_sends(tmp_path: Path) -> None:
    """Issue 25: on an endpoint without authorization, tasks had no quota, and an unverified
    `Authorization` header would have named a new caller each time. The peer is the caller: its
    share is three here, then 503 with Retry-After, and the made-up headers change nothing."""
    meta = {**META, CLIENT_CAPABILITIES_KEY: {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}}
    body = mcp_body("tools/call", {"name": "confirm_delete", "arguments": {"filename": "a.txt"}}, meta=meta)
    headers = mcp_headers("tools/call", "confirm_delete")
    app = app_on(tmp_path / "t.sqlite3", quota=TaskQuota(max_per_caller=3))
    with running(app) as url, httpx.Client(base_url=url, timeout=10) as http:
        answers = [
            http.post("/mcp", json=body, headers={**headers, "Authorization": f"Bearer made-up-{n}"}) for n in range(5)
        ]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 503, 503]
    assert [answer.json()["result"]["resultType"] for answer in answers[:3]] == ["task"] * 3
    assert answers[3].headers["retry-after"] == "5"
    assert answers[3].json()["error"]["code"] == -32603 and "one caller" in answers[3].json()["error"]["message"]


def test_without_the_extension_the_work_runs_within_the_request(tmp_path: Path) -> None:
    async def scenario(url: str) -> dict[str, Any]:
        async with client(url, tasks=False) as c:
            with pytest.raises(MissingRequiredClientCapability):
                await c.call_tool("failing_job", {})  # runs only as a task
            return await c.call_tool("slow_compute", {"seconds": 0.1, "label": "inline"})

    with running(app_on(tmp_path / "t.sqlite3")) as url:
        result = asyncio.run(scenario(url))
    assert result["resultType"] == "complete" and "taskId" not in result


def test_a_task_stores_only_the_capabilities_its_input_requests_need(tmp_path: Path) -> None:
    """Issue 25: each task kept the caller's whole `clientCapabilities` (up to the 1 MiB body) for
    its hour: 200 tasks wrote 182 MB to the SQLite file. Now the row holds what input requests
    depend on, however much the request declared."""
    junk = {"experimental": {"padding": "x" * 500_000}, "elicitation": {"form": {}, "note": "y" * 100_000}}
    caps = {**junk, "extensions": {TASKS_EXTENSION: {}}}
    params = {"name": "confirm_delete", "arguments": {"filename": "a.txt"}}
    body = mcp_body("tools/call", params, meta={**META, CLIENT_CAPABILITIES_KEY: caps})
    with running(app_on(tmp_path / "t.sqlite3")) as url, httpx.Client(base_url=url, timeout=10) as http:
        created = http.post("/mcp", json=body, headers=mcp_headers("tools/call", "confirm_delete")).json()["result"]
        with closing(SQLiteTaskStore(tmp_path / "t.sqlite3")) as store:
            stored = store.get(created["taskId"])
    assert stored is not None
    assert stored.client_capabilities == {"elicitation": {"form": {}}, "extensions": {TASKS_EXTENSION: {}}}
    assert (tmp_path / "t.sqlite3").stat().st_size < 200_000


def test_a_2025_client_calling_a_task_only_tool_is_told_why(tmp_path: Path) -> None:
    """Issue 25: a 2025-11-25 caller of a tool that runs only as a task was told the call "needs
    input from the client (extensions)". It needs an extension 2025-era clients cannot declare
    (SEP-2663 §Backward Compatibility), and says so."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "failing_job", "arguments": {}}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    with running(app_on(tmp_path / "t.sqlite3")) as url, httpx.Client(base_url=url, timeout=10) as http:
        answer = http.post("/mcp", json=body, headers=headers)
    assert answer.status_code == 200
    assert answer.json()["result"] == {
        "content": [
            {
                "type": "text",
                "text": "Cannot complete: this request needs the io.modelcontextprotocol/tasks extension of "
                "2026-07-28, which 2025-era clients cannot use.",
            }
        ],
        "isError": True,
    }


def test_another_principal_cannot_see_or_touch_a_task(tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        async with client(url, token="alice") as alice, client(url, token="mallory") as mallory:
            created = await alice.start_tool("slow_compute", {"seconds": 30})
            task_id = created["taskId"]
            for attempt in (mallory.get_task, mallory.cancel_task):
                with pytest.raises(InvalidParams, match="not found"):
                    await attempt(task_id)
            assert (await alice.get_task(task_id))["status"] == "working"
            await alice.cancel_task(task_id)
            with pytest.raises(TaskCancelled):
                await alice.wait_for_task(task_id)

    with running(app_on(tmp_path / "t.sqlite3")) as url:
        asyncio.run(scenario(url))


def test_sqlite_keeps_tasks_across_a_restart(tmp_path: Path) -> None:
    """A finished task is still there after a restart; one cut off by it is reported failed."""
    database = tmp_path / "t.sqlite3"

    async def start(url: str) -> tuple[str, str]:
        async with client(url) as c:
            done = (await c.start_tool("slow_compute", {"seconds": 0.1, "label": "before"}))["taskId"]
            await c.wait_for_task(done)
            cut = (await c.start_tool("slow_compute", {"seconds": 60, "label": "cut off"}))["taskId"]
            return done, cut

    async def resume(url: str, done: str, cut: str) -> None:
        async with client(url) as c:  # a new client, knowing only the ids
            assert (await c.wait_for_task(done))["content"][0]["text"] == "Computed before in 0.1 s"
            await asyncio.sleep(1.1)  # the cut-off task's lease runs out
            with pytest.raises(InternalError, match="stopped before it finished"):
                await c.wait_for_task(cut)

    with running(app_on(database, lease_seconds=1.0)) as url:
        done, cut = asyncio.run(start(url))
    with running(app_on(database, lease_seconds=1.0)) as url:
        asyncio.run(resume(url, done, cut))


# -- two instances on one PostgreSQL ---------------------------------------------------------


@contextmanager
def instance(dsn: str, lease: float = 6.0) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`tests/tasks/app.py` in its own uvicorn process; yields its URL and the process.

    `lease`: long enough that a loaded machine never lets a live instance's lease run out."""
    env = {"TASKS_DSN": dsn, "TASKS_LEASE": str(lease)}
    with ServerProcess("tests.tasks.app:app", options=("--log-level", "warning"), env=env) as server:
        server.wait_ready(None, timeout=20)
        yield server.base_url, server.proc


def test_two_instances_share_the_lifecycle_of_a_task(postgres_dsn: str) -> None:
    async def scenario(first: str, second: str) -> None:
        async with client(first) as a, client(second) as b:
            # Accepted by the first, answered and finished through the second.
            asked = (await a.start_tool("multi_input", {}))["taskId"]
            result = await b.wait_for_task(asked)
            assert result["content"][0]["text"] == "Ada went ahead"
            # Accepted by the first, cancelled through the second (noticed within a lease tick).
            slow = (await a.start_tool("slow_compute", {"seconds": 60}))["taskId"]
            await b.cancel_task(slow)
            with pytest.raises(TaskCancelled):
                await a.wait_for_task(slow)

    with instance(postgres_dsn) as (first, _), instance(postgres_dsn) as (second, _):
        asyncio.run(scenario(first, second))


def test_a_task_of_a_killed_instance_is_reported_failed(postgres_dsn: str) -> None:
    lease = 3.0
    with instance(postgres_dsn, lease) as (first, process), instance(postgres_dsn, lease) as (second, _):

        async def start() -> str:
            async with client(first) as a:
                return (await a.start_tool("slow_compute", {"seconds": 60}))["taskId"]

        task_id = asyncio.run(start())
        killed = time.monotonic()
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

        async def poll() -> None:
            async with client(second) as b:
                status = (await b.get_task(task_id))["status"]
                if time.monotonic() - killed < lease / 3:  # the last renewal was at most lease/3 ago
                    assert status == "working"  # the dead instance's lease still runs
                await asyncio.sleep(lease + 0.2)
                with pytest.raises(InternalError, match="stopped before it finished"):
                    await b.wait_for_task(task_id)

        asyncio.run(poll())
