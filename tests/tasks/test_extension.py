"""The tasks extension's rules that the conformance suite does not reach, in process (no network)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from mcpref import MCPError, Server
from mcpref.client._tasks import TaskWaiter
from mcpref.jsonrpc import INVALID_PARAMS, Request
from mcpref.meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcpref.tasks import TASKS_EXTENSION, SQLiteTaskStore, Task, TasksExtension

DECLARING = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}


def build(**options: Any) -> tuple[Server, TasksExtension]:
    server = Server("unit", "1")
    tasks = server.add_extension(TasksExtension(SQLiteTaskStore(":memory:"), **options))

    @server.tool()
    async def wait(ctx):  # type: ignore[no-untyped-def]
        async def work(task: Task) -> str:
            await task.sleep(30)
            return "done"

        return await tasks.hand_off(ctx, work)

    @server.tool()
    async def ask_roots(ctx):  # type: ignore[no-untyped-def]
        async def work(task: Task) -> str:
            await task.ask({"roots": {"method": "roots/list"}})
            return "never"

        return await tasks.hand_off(ctx, work)

    return server, tasks


async def handle(server: Server, method: str, params: dict[str, Any], caps: dict[str, Any] = DECLARING) -> Any:
    meta = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: caps}
    return await server.handle(Request(1, method, {**params, "_meta": meta}))


async def refused(server: Server, method: str, params: dict[str, Any]) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await handle(server, method, params)
    return caught.value


def test_tasks_carry_no_request_state_and_get_takes_no_answers() -> None:
    async def scenario() -> None:
        server, _ = build()
        task_id = (await handle(server, "tools/call", {"name": "wait"}))["taskId"]
        error = await refused(server, "tasks/get", {"taskId": task_id, "requestState": "x"})
        assert error.code == INVALID_PARAMS and "requestState" in error.message
        error = await refused(server, "tasks/get", {"taskId": task_id, "inputResponses": {}})
        assert error.code == INVALID_PARAMS and "tasks/update" in error.message
        error = await refused(server, "tasks/update", {"taskId": task_id})
        assert error.code == INVALID_PARAMS
        await handle(server, "tasks/cancel", {"taskId": task_id})

    asyncio.run(scenario())


def test_an_expired_task_is_gone() -> None:
    async def scenario() -> None:
        server, tasks = build(ttl_ms=100)
        task_id = (await handle(server, "tools/call", {"name": "wait"}))["taskId"]
        await asyncio.sleep(0.15)
        error = await refused(server, "tasks/get", {"taskId": task_id})
        assert error.message == "Failed to retrieve task: Task has expired"
        assert tasks.store.get(task_id) is None  # purged, not only hidden
        error = await refused(server, "tasks/get", {"taskId": task_id})
        assert error.message == "Failed to retrieve task: Task not found"

    asyncio.run(scenario())


def test_a_task_asks_only_for_what_its_client_declared() -> None:
    """Input requests need the capability the client declared when it started the task."""

    async def scenario() -> dict[str, Any]:
        server, _ = build()
        task_id = (await handle(server, "tools/call", {"name": "ask_roots"}))["taskId"]
        for _ in range(50):
            task = await handle(server, "tasks/get", {"taskId": task_id})
            if task["status"] != "working":
                return task
            await asyncio.sleep(0.02)
        raise AssertionError("the task never ended")

    task = asyncio.run(scenario())
    assert task["status"] == "failed" and task["error"]["code"] == -32021
    assert task["error"]["data"] == {"requiredCapabilities": {"roots": {}}}


def test_ids_are_long_random_and_never_repeat() -> None:
    async def scenario() -> list[str]:
        server, _ = build()
        return [(await handle(server, "tools/call", {"name": "wait"}))["taskId"] for _ in range(20)]

    ids = asyncio.run(scenario())
    assert len(set(ids)) == 20 and all(len(task_id) >= 32 for task_id in ids)


class FakeClient:
    """Answers tasks/get from a script, recording when each poll came."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.polled: list[float] = []

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert (method, params) == ("tasks/get", {"taskId": "t"})
        self.polled.append(time.monotonic())
        return self.answers.pop(0)

    async def respond(self, input_requests: Any) -> dict[str, Any]:
        raise AssertionError("no task here asks for input")


def test_the_client_polls_no_faster_than_the_server_asks_and_backs_off() -> None:
    working = {"status": "working", "pollIntervalMs": 40}
    done = {"status": "completed", "pollIntervalMs": 40, "result": {"content": []}}
    client = FakeClient([working, working, working, working, done])
    result = asyncio.run(TaskWaiter(client.call, client.respond, backoff=2.0).wait("t"))
    gaps = [later - earlier for earlier, later in zip(client.polled, client.polled[1:], strict=False)]
    assert result == {"content": []}
    assert all(gap >= 0.039 for gap in gaps), gaps  # never faster than pollIntervalMs
    assert gaps[-1] > gaps[0] * 2.5, gaps  # and slower while nothing changes (0.04, 0.08, 0.16, 0.32)


def test_task_notifications_need_the_extension_and_are_not_promised() -> None:
    """`taskIds` on subscriptions/listen: -32021 without the extension (SEP-2663 §Task Status
    Notifications); with it, acknowledged without `taskIds`, since mcpref sends none (clients poll)."""
    server, _ = build()

    def listen(caps: dict[str, Any]) -> Any:
        meta = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: caps}
        params = {"notifications": {"taskIds": ["abc"], "toolsListChanged": True}, "_meta": meta}
        return server.open_subscription(Request(7, "subscriptions/listen", params))

    with pytest.raises(MCPError) as caught:
        listen({})
    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
    subscription = listen(DECLARING)
    assert subscription.honoured == {"toolsListChanged": True}
    server.subscriptions.close(subscription)
