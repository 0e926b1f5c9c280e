"""`TaskWaiter`, the client's wait for a task (SEP-2663), against scripted `tasks/get` answers:
what each status means to the caller, input answered once, and the polling pace. The end-to-end
runs against the real tasks server are in tests/tasks/; these state the waiter's own rules,
including answers the real server never gives (a completed task without a result)."""

from __future__ import annotations

import types

import pytest

from mcpref.client import InternalError, InvalidParams, ProtocolError, TaskCancelled, _tasks
from mcpref.client._tasks import TaskWaiter, task_params

pytestmark = pytest.mark.anyio


class Server:
    """Answers `tasks/get` with the next scripted task, records every call and every pause."""

    def __init__(self, *tasks: dict) -> None:
        self.tasks = list(tasks)
        self.calls: list[tuple[str, dict]] = []
        self.responded: list[dict] = []
        self.sleeps: list[float] = []

    async def call(self, method: str, params: dict) -> dict:
        self.calls.append((method, params))
        return self.tasks.pop(0) if method == "tasks/get" else {}

    async def respond(self, requests: dict) -> dict:
        self.responded.append(requests)
        return {key: {"action": "accept"} for key in requests}

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A scripted server whose `sleep` stands in for the waiter's pauses (no test waits for real)."""
    scripted = Server()
    monkeypatch.setattr(
        _tasks, "asyncio", types.SimpleNamespace(sleep=scripted.sleep, iscoroutine=_tasks.asyncio.iscoroutine)
    )
    return scripted


def waiter(server: Server, **options) -> TaskWaiter:  # type: ignore[no-untyped-def]
    return TaskWaiter(server.call, server.respond, **options)


def task(status: str, **fields) -> dict:  # type: ignore[no-untyped-def]
    return {"taskId": "t1", "status": status, **fields}


async def test_a_completed_task_gives_its_result(server):
    server.tasks = [task("working", pollIntervalMs=10), task("completed", result={"content": []})]
    assert await waiter(server).wait("t1") == {"content": []}
    assert server.calls == [("tasks/get", {"taskId": "t1"})] * 2


@pytest.mark.parametrize("result", [None, "done", ["x"]])
async def test_a_completed_task_without_a_result_object_is_a_protocol_error(server, result):
    server.tasks = [task("completed", result=result)]
    with pytest.raises(ProtocolError, match="task t1 completed without a result object"):
        await waiter(server).wait("t1")


async def test_a_failed_task_raises_its_error_or_an_internal_error(server):
    server.tasks = [task("failed", error={"code": -32602, "message": "no such city"})]
    with pytest.raises(InvalidParams, match="no such city"):
        await waiter(server).wait("t1")
    server.tasks = [task("failed")]
    with pytest.raises(InternalError, match="task failed without an error"):
        await waiter(server).wait("t1")


async def test_a_cancelled_task_raises_task_cancelled_with_its_message(server):
    server.tasks = [task("cancelled", statusMessage="stopped by the operator")]
    with pytest.raises(TaskCancelled, match="stopped by the operator"):
        await waiter(server).wait("t1")
    server.tasks = [task("cancelled")]
    with pytest.raises(TaskCancelled, match="task t1 was cancelled"):
        await waiter(server).wait("t1")


async def test_an_unknown_status_is_a_protocol_error(server):
    server.tasks = [task("paused")]
    with pytest.raises(ProtocolError, match="task t1 has unknown status 'paused'"):
        await waiter(server).wait("t1")


async def test_input_is_answered_once_per_key_and_the_next_poll_waits_the_poll_interval(server):
    ask = {"method": "elicitation/create", "params": {"message": "Sure?", "requestedSchema": {}}}
    server.tasks = [
        task("input_required", inputRequests={"a": ask}, pollIntervalMs=10),
        task("input_required", inputRequests={"a": ask}, pollIntervalMs=10),  # not taken in yet
        task("input_required", inputRequests={"a": ask, "b": ask}, pollIntervalMs=10),
        task("completed", result={}),
    ]
    await waiter(server).wait("t1")
    assert server.responded == [{"a": ask}, {"b": ask}]
    updates = [params for method, params in server.calls if method == "tasks/update"]
    assert updates == [
        {"taskId": "t1", "inputResponses": {"a": {"action": "accept"}}},
        {"taskId": "t1", "inputResponses": {"b": {"action": "accept"}}},
    ]
    # The server's pace after each update (SEP-2663: clients SHOULD respect pollIntervalMs; issue 25:
    # the waiter polled again at once), ×1.5 after the poll that brought nothing new.
    assert server.sleeps == [0.01, 0.015, 0.01]


async def test_each_new_status_or_message_is_shown_once(server):
    shown: list[tuple] = []
    server.tasks = [
        task("working", statusMessage="10%"),
        task("working", statusMessage="10%"),
        task("working", statusMessage="50%"),
        task("completed", result={}),
    ]
    await waiter(server).wait("t1", on_status=lambda t: shown.append((t["status"], t.get("statusMessage"))))
    assert shown == [("working", "10%"), ("working", "50%"), ("completed", None)]


async def test_an_async_status_callback_is_awaited(server):
    shown: list[str] = []

    async def show(t: dict) -> None:
        shown.append(t["status"])

    server.tasks = [task("working"), task("completed", result={})]
    await waiter(server).wait("t1", on_status=show)
    assert shown == ["working", "completed"]


async def test_polling_slows_while_nothing_changes_and_returns_to_the_servers_pace(server):
    unchanged = [task("working", pollIntervalMs=1000) for _ in range(5)]
    server.tasks = [
        *unchanged,
        task("working", statusMessage="moved", pollIntervalMs=1000),
        task("completed", result={}),
    ]
    await waiter(server, max_interval=3.0, backoff=1.5).wait("t1")
    assert server.sleeps == [1.0, 1.5, 2.25, 3.0, 3.0, 1.0]


async def test_polling_is_never_faster_than_the_server_asks(server):
    # The server's pace wins over a smaller max_interval.
    server.tasks = [
        task("working", pollIntervalMs=5000),
        task("working", pollIntervalMs=5000),
        task("completed", result={}),
    ]
    await waiter(server, max_interval=2.0).wait("t1")
    assert server.sleeps == [5.0, 5.0]


@pytest.mark.parametrize("interval", [{}, {"pollIntervalMs": 0}, {"pollIntervalMs": None}])
async def test_without_a_poll_interval_the_pace_is_once_a_second(server, interval):
    server.tasks = [task("working", **interval), task("completed", result={})]
    await waiter(server).wait("t1")
    assert server.sleeps == [1.0]


@pytest.mark.parametrize("task_id", ["", None, 7])
def test_a_task_id_is_a_non_empty_string(task_id):
    with pytest.raises(ValueError, match="task_id must be a non-empty string"):
        task_params(task_id)


async def test_new_input_requests_are_shown_even_when_status_and_message_stay(server):
    ask = {"method": "elicitation/create", "params": {"message": "Sure?", "requestedSchema": {}}}
    shown: list[list[str]] = []
    server.tasks = [
        task("input_required", statusMessage="waiting", inputRequests={"a": ask}),
        task("input_required", statusMessage="waiting", inputRequests={"a": ask, "b": ask}),
        task("completed", result={}),
    ]
    await waiter(server).wait("t1", on_status=lambda t: shown.append(sorted(t.get("inputRequests") or {})))
    assert shown == [["a"], ["a", "b"], []]


@pytest.mark.parametrize(("interval", "pause"), [(1, 0.001), (-5, 0.001), (250, 0.25)])
async def test_a_tiny_or_negative_poll_interval_is_one_millisecond(server, interval, pause):
    server.tasks = [task("working", pollIntervalMs=interval), task("completed", result={})]
    await waiter(server).wait("t1")
    assert server.sleeps == [pause]


async def test_by_default_polling_slows_to_at_most_ten_seconds(server):
    server.tasks = [*(task("working") for _ in range(9)), task("completed", result={})]
    await waiter(server).wait("t1")
    assert server.sleeps == pytest.approx([1.0, 1.5, 2.25, 3.375, 5.0625, 7.59375, 10.0, 10.0, 10.0])


def test_the_waiters_messages_in_full():
    with pytest.raises(ValueError) as caught:
        task_params("")
    assert str(caught.value) == "task_id must be a non-empty string"


async def test_a_failed_task_without_an_error_says_so(server):
    server.tasks = [task("failed")]
    with pytest.raises(InternalError) as caught:
        await waiter(server).wait("t1")
    assert str(caught.value) == "task failed without an error"
