"""The tasks extension's rules that the conformance suite does not reach, in process (no network)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from mcpref import InputRequired, MCPError, Server, ToolError, ToolResult, elicit_form, text
from mcpref.client._tasks import TaskWaiter
from mcpref.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, Request
from mcpref.meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcpref.tasks import TASKS_EXTENSION, SQLiteTaskStore, Task, TasksExtension
from mcpref.tasks.quota import TaskQuota

DECLARING = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}


def build(store: str | Path = ":memory:", **options: Any) -> tuple[Server, TasksExtension]:
    """A server with the tasks extension on `store` (a file that several of them may share)."""
    server = Server("unit", "1")
    tasks = server.add_extension(TasksExtension(SQLiteTaskStore(store), **options))

    @server.tool()
    async def wait(ctx, seconds: float = 30):  # type: ignore[no-untyped-def]
        async def work(task: Task) -> str:
            await task.report(f"waiting {seconds:g} s")
            await task.sleep(seconds)
            return "done"

        return await tasks.hand_off(ctx, work)

    @server.tool()
    async def ask_roots(ctx):  # type: ignore[no-untyped-def]
        async def work(task: Task) -> str:
            await task.ask({"roots": {"method": "roots/list"}})
            return "never"

        return await tasks.hand_off(ctx, work)

    @server.tool()
    async def ask_name(ctx, then: float = 0):  # type: ignore[no-untyped-def]
        async def work(task: Task) -> str:
            answers = await task.ask({"name": elicit_form("Your name?", {"name": {"type": "string"}})}, "Waiting")
            await task.sleep(then)
            return f"Hello, {answers['name']['content']['name']}"

        return await tasks.hand_off(ctx, work)

    @server.tool()
    async def only_as_task(ctx):  # type: ignore[no-untyped-def]
        async def work(task: Task) -> str:
            return "done"

        return await tasks.hand_off(ctx, work, required=True)

    @server.tool()
    async def ends(how: str, ctx):  # type: ignore[no-untyped-def]
        async def work(task: Task) -> Any:
            await task.report(f"ending by {how}")
            await asyncio.sleep(0)
            if how == "tool error":
                raise ToolError("the input was rejected")
            if how == "protocol error":
                raise MCPError(INVALID_PARAMS, "Invalid params: no such file")
            if how == "crash":
                raise RuntimeError("a bug")
            if how == "input required":
                return InputRequired({"name": elicit_form("Name?", {"name": {"type": "string"}})})
            # The work sees the request that started it: its arguments, its principal.
            return ToolResult(content=[text(f"ended by {how}")], structured=task.ctx.params["arguments"])

        return await tasks.hand_off(ctx, work)

    @server.tool()
    def greet() -> str:
        return "hello at once"

    @server.tool()
    async def progressing(ctx):  # type: ignore[no-untyped-def]
        async def work(task: Task) -> str:
            await task.ctx.report_progress(1, 2)
            await task.ctx.log("error", "half way")
            return "done"

        return await tasks.hand_off(ctx, work)

    @server.prompt()
    async def slow_prompt(ctx):  # type: ignore[no-untyped-def]
        async def work(task: Task) -> str:
            return "a prompt is never a task"

        return await tasks.hand_off(ctx, work)

    return server, tasks


async def handle(
    server: Server,
    method: str,
    params: dict[str, Any],
    caps: dict[str, Any] = DECLARING,
    principal: str | None = None,
) -> Any:
    meta = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: caps}
    return await server.handle(Request(1, method, {**params, "_meta": meta}), principal=principal)


async def refused(
    server: Server, method: str, params: dict[str, Any], caps: dict[str, Any] = DECLARING, principal: str | None = None
) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await handle(server, method, params, caps, principal)
    return caught.value


async def until(server: Server, task_id: str, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Poll `tasks/get` until `done(task)` (for at most ten seconds)."""
    for _ in range(500):
        task: dict[str, Any] = await handle(server, "tasks/get", {"taskId": task_id})
        if done(task):
            return task
        await asyncio.sleep(0.02)
    raise AssertionError(f"the task is still {task['status']}")


def acked(result: dict[str, Any]) -> bool:
    """An empty result: what `tasks/update` and `tasks/cancel` answer (`resultType` "complete")."""
    return {key: value for key, value in result.items() if key != "_meta"} == {"resultType": "complete"}


def ended(task: dict[str, Any]) -> bool:
    return task["status"] in ("completed", "failed", "cancelled")


def test_tasks_carry_no_request_state_and_get_takes_no_answers() -> None:
    async def scenario() -> None:
        server, _ = build()
        task_id = (await handle(server, "tools/call", {"name": "wait"}))["taskId"]
        error = await refused(server, "tasks/get", {"taskId": task_id, "requestState": "x"})
        assert error.code == INVALID_PARAMS and "requestState" in error.message
        error = await refused(server, "tasks/get", {"taskId": task_id, "inputResponses": {}})
        assert error.code == INVALID_PARAMS
        assert error.message == "Invalid params: tasks/get only reads; answer with tasks/update"
        error = await refused(server, "tasks/update", {"taskId": task_id})
        assert (error.code, error.message) == (INVALID_PARAMS, "Invalid params: tasks/update needs inputResponses")
        await handle(server, "tasks/cancel", {"taskId": task_id})

    asyncio.run(scenario())


def test_an_expired_task_is_gone() -> None:
    """Asked for before its purge is due (here a minute later: `watch_seconds`), an expired task is
    refused and deleted at once."""

    async def scenario() -> None:
        server, tasks = build(ttl_ms=100, watch_seconds=60)
        task_id = (await handle(server, "tools/call", {"name": "wait"}))["taskId"]
        await asyncio.sleep(0.15)
        error = await refused(server, "tasks/get", {"taskId": task_id})
        assert (error.code, error.message) == (INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        assert tasks.store.get(task_id) is None  # purged, not only hidden
        error = await refused(server, "tasks/get", {"taskId": task_id})
        assert error.message == "Failed to retrieve task: Task not found"

    asyncio.run(scenario())


def test_a_task_asks_only_for_what_its_client_declared() -> None:
    """Input requests need the capability the client declared when it started the task."""

    async def scenario() -> dict[str, Any]:
        server, _ = build()
        task_id = (await handle(server, "tools/call", {"name": "ask_roots"}))["taskId"]
        return await until(server, task_id, ended)

    task = asyncio.run(scenario())
    assert task["status"] == "failed" and task["error"]["code"] == -32021
    assert task["error"]["data"] == {"requiredCapabilities": {"roots": {}}}


def test_ids_are_long_random_and_never_repeat() -> None:
    async def scenario() -> list[str]:
        server, _ = build(quota=TaskQuota(max_per_caller=20))
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


def test_no_poll_comes_sooner_than_poll_interval_ms_after_creation_or_after_an_update() -> None:
    """Issue 25: the page and the client said polls never come faster than `pollIntervalMs`
    (SEP-2663 §Task Polling: clients SHOULD respect it), but the waiter polled at once after the
    `CreateTaskResult` and at once after each `tasks/update`."""
    asking = {"status": "input_required", "pollIntervalMs": 50, "inputRequests": {"k": {"method": "roots/list"}}}
    done = {"status": "completed", "pollIntervalMs": 50, "result": {"content": []}}
    sent: list[tuple[str, float]] = []

    async def call(method: str, params: dict[str, Any]) -> dict[str, Any]:
        sent.append((method, time.monotonic()))
        if method != "tasks/get":
            return {}
        return asking if [name for name, _ in sent].count("tasks/get") == 1 else done

    async def respond(requests: Any) -> dict[str, Any]:
        return {"k": {"roots": []}}

    async def scenario() -> dict[str, Any]:
        created = {"resultType": "task", "taskId": "t", "status": "working", "pollIntervalMs": 50}
        sent.append(("tools/call", time.monotonic()))
        return await TaskWaiter(call, respond).wait("t", created=created)

    assert asyncio.run(scenario()) == {"content": []}
    assert [method for method, _ in sent] == ["tools/call", "tasks/get", "tasks/update", "tasks/get"]
    assert sent[1][1] - sent[0][1] >= 0.049, sent  # the first poll, after creation
    assert sent[3][1] - sent[1][1] >= 0.049, sent  # the poll after the update, after the last poll


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


# -- the task lifecycle, in process ----------------------------------------------------------


def test_a_task_is_stored_before_its_handle_is_answered() -> None:
    """SEP-2663 §Task Creation: `CreateTaskResult` (resultType "task") only once `tasks/get` finds
    the task; it carries the server's TTL and poll interval."""

    async def scenario() -> None:
        server, tasks = build(ttl_ms=5000, poll_interval_ms=250)
        created = await handle(server, "tools/call", {"name": "wait"})
        assert created["resultType"] == "task" and created["status"] == "working"
        assert (created["ttlMs"], created["pollIntervalMs"]) == (5000, 250)
        assert created["createdAt"] == created["lastUpdatedAt"]
        stored = tasks.store.get(created["taskId"])
        assert stored is not None and stored.status == "working"
        assert stored.owner == tasks.instance  # who runs it, for whoever reads the table
        assert isinstance(stored.owner, str) and stored.owner != build()[1].instance
        await handle(server, "tasks/cancel", {"taskId": created["taskId"]})

    asyncio.run(scenario())


def test_a_task_reports_progress_in_its_status_message() -> None:
    async def scenario() -> None:
        server, _ = build()
        task_id = (await handle(server, "tools/call", {"name": "wait", "arguments": {"seconds": 5}}))["taskId"]
        task = await until(server, task_id, lambda task: "statusMessage" in task)
        assert (task["status"], task["statusMessage"]) == ("working", "waiting 5 s")
        await handle(server, "tasks/cancel", {"taskId": task_id})

    asyncio.run(scenario())


def test_how_the_work_ends_decides_how_the_task_ends(caplog: pytest.LogCaptureFixture) -> None:
    """SEP-2663 §Task Status: a tool error is a result (`completed`, `isError`); only a JSON-RPC error
    makes a task `failed`, with that error; a crash is -32603 in fixed words, its traceback logged."""

    async def scenario() -> dict[str, dict[str, Any]]:
        server, _ = build()
        outcomes = {}
        for how in ("result", "tool error", "protocol error", "crash", "input required"):
            task_id = (await handle(server, "tools/call", {"name": "ends", "arguments": {"how": how}}))["taskId"]
            outcomes[how] = await until(server, task_id, ended)
        return outcomes

    with caplog.at_level("ERROR", logger="mcpref.tasks"):
        outcomes = asyncio.run(scenario())
    done = outcomes["result"]
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "ended by result"}]
    assert done["result"]["structuredContent"] == {"how": "result"}  # the work's `task.ctx`
    assert done["result"].get("isError", False) is False
    tool_error = outcomes["tool error"]
    assert tool_error["status"] == "completed"
    assert tool_error["result"] == {"content": [{"type": "text", "text": "the input was rejected"}], "isError": True}
    protocol_error = outcomes["protocol error"]
    assert protocol_error["status"] == "failed" and "result" not in protocol_error
    assert protocol_error["error"] == {"code": INVALID_PARAMS, "message": "Invalid params: no such file"}
    assert protocol_error["statusMessage"] == "Invalid params: no such file"
    for how in ("crash", "input required"):
        failed = outcomes[how]
        assert failed["status"] == "failed", how
        assert failed["error"] == {"code": INTERNAL_ERROR, "message": "Internal error while running ends"}, how
        assert failed["statusMessage"] == "Internal error while running ends", how
    crash, returned_input = (r for r in caplog.records if r.name == "mcpref.tasks")
    assert crash.getMessage() == "task work of tool 'ends' raised" and crash.exc_info is not None
    assert returned_input.getMessage() == "task work of tool 'ends' returned InputRequired; use task.ask"


def test_without_the_extension_the_work_runs_in_the_request_or_is_refused() -> None:
    """SEP-2663 §Capability Negotiation: never a task for a client that did not declare the
    extension; work that needs one (a task-only tool, or one asking for input mid-flight) is -32021."""

    async def scenario() -> None:
        server, tasks = build()
        plain = {"elicitation": {}}
        result = await handle(server, "tools/call", {"name": "ends", "arguments": {"how": "result"}}, plain)
        assert result["content"] == [{"type": "text", "text": "ended by result"}] and "taskId" not in result
        for tool, words in (("only_as_task", "only_as_task runs as a task"), ("ask_name", "asks for input")):
            error = await refused(server, "tools/call", {"name": tool}, plain)
            assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY, tool
            assert error.data == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}, tool
            assert error.message.startswith("Missing required client capability: ") and words in error.message
            assert TASKS_EXTENSION in error.message
        # The declaring client gets the task-only tool as a task.
        created = await handle(server, "tools/call", {"name": "only_as_task"})
        assert (await until(server, created["taskId"], ended))["result"]["content"][0]["text"] == "done"
        assert tasks._handed_off == {}  # nothing kept per request once it is answered

    asyncio.run(scenario())


def test_input_is_asked_for_and_answered_with_tasks_update() -> None:
    """SEP-2663 §Task Update Requests: `input_required` shows the outstanding requests; answers to
    unknown keys are ignored; once every key is answered the task works on; a finished task
    takes no more answers."""

    async def scenario() -> None:
        server, _ = build()
        task_id = (await handle(server, "tools/call", {"name": "ask_name", "arguments": {"then": 0.3}}))["taskId"]
        task = await until(server, task_id, lambda task: task["status"] != "working")
        assert task["status"] == "input_required" and task["statusMessage"] == "Waiting"
        assert list(task["inputRequests"]) == ["name"]
        assert task["inputRequests"]["name"]["method"] == "elicitation/create"
        unknown = {"taskId": task_id, "inputResponses": {"other": {"action": "decline"}}}
        assert acked(await handle(server, "tasks/update", unknown))
        assert (await handle(server, "tasks/get", {"taskId": task_id}))["status"] == "input_required"
        answer = {"name": {"action": "accept", "content": {"name": "Ada"}}}
        assert acked(await handle(server, "tasks/update", {"taskId": task_id, "inputResponses": answer}))
        working = await until(server, task_id, lambda task: task["status"] != "input_required")
        assert working["status"] == "working"
        assert "inputRequests" not in working and "statusMessage" not in working  # "Waiting" ended with the wait
        done = await until(server, task_id, ended)
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "Hello, Ada"
        again = {"name": {"action": "accept", "content": {"name": "Bob"}}}
        assert acked(await handle(server, "tasks/update", {"taskId": task_id, "inputResponses": again}))
        assert await handle(server, "tasks/get", {"taskId": task_id}) == done

    asyncio.run(scenario())


def test_a_task_waiting_for_input_does_not_hold_up_a_shutdown() -> None:
    """A server stopping (its event loop cancelling what runs) while a task waits for an answer it
    was just woken for: the loop ends. Under Python 3.11, `asyncio.wait_for` swallowed that cancel
    and the wait went on polling forever, so the server never exited (a regression test)."""

    async def scenario() -> None:
        server, _ = build()
        task_id = (await handle(server, "tools/call", {"name": "ask_name"}))["taskId"]
        await until(server, task_id, lambda task: task["status"] == "input_required")
        unknown = {"taskId": task_id, "inputResponses": {"other": {"action": "decline"}}}
        await handle(server, "tasks/update", unknown)  # wakes the work, which waits again

    thread = threading.Thread(target=asyncio.run, args=(scenario(),), daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the event loop never finished cancelling the task's work"


def test_a_cancelled_task_says_so_and_a_finished_one_stays_finished() -> None:
    """SEP-2663 §Task Cancellation: the ack is empty; a terminal task never changes again. The
    cancel stops work on the instance it reaches at once (the lease's tick, a third of a minute
    here, is for cancels reaching another instance)."""

    async def scenario() -> None:
        server, tasks = build(lease_seconds=60)
        task_id = (await handle(server, "tools/call", {"name": "wait"}))["taskId"]
        assert acked(await handle(server, "tasks/cancel", {"taskId": task_id}))
        cancelled = await until(server, task_id, ended)
        assert (cancelled["status"], cancelled["statusMessage"]) == ("cancelled", "Cancelled at the client's request")
        assert tasks._running == {}  # the work stopped, not only the record
        finished = (await handle(server, "tools/call", {"name": "ends", "arguments": {"how": "result"}}))["taskId"]
        done = await until(server, finished, ended)
        for ended_id, final in ((task_id, cancelled), (finished, done)):
            assert acked(await handle(server, "tasks/cancel", {"taskId": ended_id}))
            assert await handle(server, "tasks/get", {"taskId": ended_id}) == final

    asyncio.run(scenario())


def test_a_task_is_only_its_principals_and_named_by_a_string() -> None:
    """SEP-2663 §Security: another principal's task is "not found", as an unknown one is."""

    async def scenario() -> None:
        server, _ = build()
        task_id = (await handle(server, "tools/call", {"name": "wait"}, principal="alice"))["taskId"]
        for method in ("tasks/get", "tasks/cancel"):
            error = await refused(server, method, {"taskId": task_id}, principal="mallory")
            assert (error.code, error.message) == (INVALID_PARAMS, "Failed to retrieve task: Task not found")
        error = await refused(server, "tasks/get", {"taskId": 7}, principal="alice")
        assert (error.code, error.message) == (INVALID_PARAMS, "Invalid params: tasks/get needs taskId, a string")
        task = await handle(server, "tasks/get", {"taskId": task_id}, principal="alice")
        assert task["status"] == "working"
        await handle(server, "tasks/cancel", {"taskId": task_id}, principal="alice")

    asyncio.run(scenario())


def test_expired_tasks_stop_and_are_deleted_on_time_with_no_request() -> None:
    """Issue 25: an expired task's work ran on, and the task stayed stored, until another request
    happened to purge. Now its work stops at its TTL and it is deleted within `watch_seconds`."""

    async def scenario() -> tuple[TasksExtension, list[str]]:
        server, tasks = build(ttl_ms=100, watch_seconds=0.05)
        ids = [(await handle(server, "tools/call", {"name": "ends", "arguments": {"how": "result"}}))["taskId"]]
        ids.append((await handle(server, "tools/call", {"name": "wait"}))["taskId"])
        ids.append((await handle(server, "tools/call", {"name": "ask_name"}))["taskId"])
        for _ in range(100):
            if not tasks._running and all(tasks.store.get(task_id) is None for task_id in ids):
                break
            await asyncio.sleep(0.02)
        return tasks, ids

    tasks, ids = asyncio.run(scenario())
    assert tasks._running == {} and tasks.quota.live() == 0
    assert [tasks.store.get(task_id) for task_id in ids] == [None, None, None]


# -- two instances sharing one store ---------------------------------------------------------


def test_any_instance_sharing_the_store_serves_a_running_task(tmp_path: Path) -> None:
    """A task started on one instance is polled, answered and cancelled through another; the owner
    renews its lease while the work runs, so the other never takes a long task for a dead one."""
    database = tmp_path / "tasks.sqlite3"

    async def scenario() -> None:
        # A lease of a second, renewed every third of one: a loaded machine's pauses stay well
        # inside it (at 0.3 s, a 0.2 s stall of the renewing loop let the task lapse).
        first, _ = build(database, lease_seconds=1.0)
        second, _ = build(database, lease_seconds=1.0)
        long = (await handle(first, "tools/call", {"name": "wait", "arguments": {"seconds": 3.0}}))["taskId"]
        await asyncio.sleep(2.2)  # more than twice the lease: only renewals keep it alive
        assert (await handle(second, "tasks/get", {"taskId": long}))["status"] == "working"
        assert (await until(second, long, ended))["result"]["content"][0]["text"] == "done"

        asked = (await handle(first, "tools/call", {"name": "ask_name"}))["taskId"]
        await until(second, asked, lambda task: task["status"] == "input_required")
        answer = {"name": {"action": "accept", "content": {"name": "Ada"}}}
        await handle(second, "tasks/update", {"taskId": asked, "inputResponses": answer})
        assert (await until(second, asked, ended))["result"]["content"][0]["text"] == "Hello, Ada"

        slow = (await handle(first, "tools/call", {"name": "wait"}))["taskId"]
        assert acked(await handle(second, "tasks/cancel", {"taskId": slow}))
        task = await until(first, slow, ended)
        assert (task["status"], task["statusMessage"]) == ("cancelled", "Cancelled at the client's request")

    asyncio.run(scenario())


def test_a_task_whose_instance_stopped_is_reported_failed(tmp_path: Path) -> None:
    """The instance running a task shuts down mid-work: once its lease runs out, the next instance
    asked about the task reports it `failed` (-32603); mcpref never runs the work twice."""
    database = tmp_path / "tasks.sqlite3"
    lease = 1.0

    async def start() -> str:
        first, _ = build(database, lease_seconds=lease)
        task_id: str = (await handle(first, "tools/call", {"name": "wait"}))["taskId"]
        return task_id

    task_id = asyncio.run(start())  # the loop ends: the work is cancelled as at a shutdown
    stopped = time.monotonic()

    async def poll() -> dict[str, Any]:
        second, _ = build(database, lease_seconds=lease)
        status = (await handle(second, "tasks/get", {"taskId": task_id}))["status"]
        if time.monotonic() - stopped < lease / 2:
            assert status == "working"  # a shutdown is not a cancel, and the lease still runs
        await asyncio.sleep(lease)
        return await handle(second, "tasks/get", {"taskId": task_id})  # type: ignore[no-any-return]

    task = asyncio.run(poll())
    message = "The server instance running this task stopped before it finished"
    assert task["status"] == "failed" and task["statusMessage"] == message
    assert task["error"] == {"code": INTERNAL_ERROR, "message": message}


def test_only_a_tool_call_becomes_a_task() -> None:
    """SEP-2663 §Supported Methods: `tools/call` only; work a prompt hands off runs in its request."""

    async def scenario() -> None:
        server, tasks = build()
        result = await handle(server, "prompts/get", {"name": "slow_prompt"})
        assert "taskId" not in result and result["resultType"] == "complete"
        assert result["messages"][0]["content"]["text"] == "a prompt is never a task"
        assert tasks._handed_off == {} and tasks._running == {}

    asyncio.run(scenario())


def test_a_finished_task_leaves_nothing_in_the_instances_memory() -> None:
    """Everything about a task is in the store: once its work ends, whichever way, the instance
    holds nothing for it (memory stays bounded however many tasks run)."""

    async def scenario() -> TasksExtension:
        server, tasks = build()
        asked = (await handle(server, "tools/call", {"name": "ask_name"}))["taskId"]
        await until(server, asked, lambda task: task["status"] == "input_required")
        answer = {"name": {"action": "accept", "content": {"name": "Ada"}}}
        await handle(server, "tasks/update", {"taskId": asked, "inputResponses": answer})
        cancelled = (await handle(server, "tools/call", {"name": "wait"}))["taskId"]
        await handle(server, "tasks/cancel", {"taskId": cancelled})
        crashed = (await handle(server, "tools/call", {"name": "ends", "arguments": {"how": "crash"}}))["taskId"]
        for task_id in (asked, cancelled, crashed):
            await until(server, task_id, ended)
        await asyncio.sleep(0.05)  # the runners' `finally` after the last store write
        return tasks

    tasks = asyncio.run(scenario())
    assert (tasks._running, tasks._wakeups, tasks._cancelling, tasks._handed_off) == ({}, {}, set(), {})
    assert (tasks._seen, tasks._kept, tasks._expiry, tasks.quota.live()) == ({}, {}, {}, 0)


def test_a_task_that_expires_while_waiting_for_input_stops_its_work(caplog: pytest.LogCaptureFixture) -> None:
    """Once its TTL ran out and it was deleted, nobody can answer or see it: the work stops, quietly."""

    async def scenario() -> TasksExtension:
        server, tasks = build(ttl_ms=300)
        task_id = (await handle(server, "tools/call", {"name": "ask_name"}))["taskId"]
        await until(server, task_id, lambda task: task["status"] == "input_required")
        await asyncio.sleep(0.35)
        await refused(server, "tasks/get", {"taskId": task_id})  # expired: deleted
        for _ in range(100):
            if not tasks._running:
                break
            await asyncio.sleep(0.02)
        return tasks

    with caplog.at_level("ERROR", logger="mcpref.tasks"):
        tasks = asyncio.run(scenario())
    assert tasks._running == {}
    assert [record.getMessage() for record in caplog.records if record.name == "mcpref.tasks"] == []


def test_a_cancel_through_another_instance_stops_a_wait_for_input_at_once(tmp_path: Path) -> None:
    """Work waiting for input looks at its task every half second, cancel included, not only at the
    lease's tick (a third of a minute here)."""
    database = tmp_path / "tasks.sqlite3"

    async def scenario() -> dict[str, Any]:
        first, _ = build(database, lease_seconds=60)
        second, _ = build(database, lease_seconds=60)
        task_id = (await handle(first, "tools/call", {"name": "ask_name"}))["taskId"]
        await until(second, task_id, lambda task: task["status"] == "input_required")
        await handle(second, "tasks/cancel", {"taskId": task_id})
        return await until(second, task_id, ended)

    task = asyncio.run(scenario())
    assert (task["status"], task["statusMessage"]) == ("cancelled", "Cancelled at the client's request")


def test_a_declaring_client_gets_a_plain_result_from_a_tool_that_answers_at_once() -> None:
    """SEP-2663 §Capability Negotiation: the server decides per request; declaring the extension
    does not ask for a task, and a tool that does not hand its work off answers as usual."""

    async def scenario() -> None:
        server, tasks = build()
        result = await handle(server, "tools/call", {"name": "greet"})
        assert result["resultType"] == "complete" and "taskId" not in result
        assert result["content"] == [{"type": "text", "text": "hello at once"}]
        assert tasks._handed_off == {}

    asyncio.run(scenario())


def test_a_tasks_work_sends_nothing_on_the_stream_of_the_request_that_started_it() -> None:
    """SEP-2663 §Task Status Notifications: progress and log notifications are not supported on
    tasks; the request was answered with the task, and its stream is gone."""

    async def scenario() -> list[Any]:
        server, _ = build()
        sent: list[Any] = []

        async def notify(message: Any) -> None:
            sent.append(message)

        meta = {
            PROTOCOL_VERSION_KEY: "2026-07-28",
            CLIENT_CAPABILITIES_KEY: DECLARING,
            "progressToken": "p1",
            "io.modelcontextprotocol/logLevel": "debug",
        }
        request = Request(1, "tools/call", {"name": "progressing", "_meta": meta})
        task_id = (await server.handle(request, notify=notify))["taskId"]
        assert (await until(server, task_id, ended))["result"]["content"][0]["text"] == "done"
        return sent

    assert asyncio.run(scenario()) == []


def test_tasks_live_in_the_store_given_else_in_mcp_tasks_sqlite3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    async def scenario() -> str:
        server, _ = build(tmp_path / "given.sqlite3")
        task_id: str = (await handle(server, "tools/call", {"name": "wait"}))["taskId"]
        await handle(server, "tasks/cancel", {"taskId": task_id})
        return task_id

    task_id = asyncio.run(scenario())
    with closing(SQLiteTaskStore(tmp_path / "given.sqlite3")) as given:
        assert given.get(task_id) is not None
    assert not (tmp_path / "mcp-tasks.sqlite3").exists()
    default = TasksExtension().store
    assert isinstance(default, SQLiteTaskStore) and (tmp_path / "mcp-tasks.sqlite3").is_file()
    default.close()


# -- what a task may cost (issue 25) -----------------------------------------------------------


def test_live_tasks_are_bounded_per_caller_and_in_all_and_freed_when_they_end() -> None:
    """Issue 25: 3,000 anonymous tasks waiting for input kept a server at 82% CPU. Past a caller's
    share, or past the bound for all callers, a call is refused (-32603, 503, Retry-After)."""

    async def scenario() -> None:
        server, tasks = build(quota=TaskQuota(max_per_caller=2, max_tasks=3))
        alice = [(await handle(server, "tools/call", {"name": "wait"}, principal="alice"))["taskId"] for _ in range(2)]
        error = await refused(server, "tools/call", {"name": "wait"}, principal="alice")
        assert (error.code, error.http_status) == (INTERNAL_ERROR, 503)
        assert error.http_headers == [(b"retry-after", b"5")] and "one caller" in error.message
        await handle(server, "tools/call", {"name": "wait"}, principal="bob")
        error = await refused(server, "tools/call", {"name": "wait"}, principal="carol")
        assert "Too many tasks running (limit 3)" in error.message
        assert tasks.quota.live() == 3 and tasks.quota.live("principal:alice") == 2
        await handle(server, "tasks/cancel", {"taskId": alice[0]}, principal="alice")
        for _ in range(50):
            if tasks.quota.live("principal:alice") == 1:
                break
            await asyncio.sleep(0.01)
        assert (await handle(server, "tools/call", {"name": "greet"}, principal="carol"))["resultType"] == "complete"
        again = await handle(server, "tools/call", {"name": "wait"}, principal="alice")
        assert again["resultType"] == "task"
        # A plain call is never counted; a refused one leaves nothing behind.
        assert tasks.quota.live() == 3 and len(tasks._running) == 3

    asyncio.run(scenario())


def test_a_shared_count_raises_the_count_never_lowers_it() -> None:
    """Issue 28 will count live tasks over every instance through PostgreSQL; this process's own
    count stays the floor."""

    class Elsewhere:
        def __init__(self, count: int) -> None:
            self.count = count

        def live_tasks(self, caller: str | None) -> int:
            return self.count

    quota = TaskQuota(max_per_caller=2, max_tasks=10, shared=Elsewhere(0))
    quota.admit("peer:a", "t1")
    assert quota.live("peer:a") == 1  # the shared count (0) is lower: the local one counts
    quota.shared = Elsewhere(2)
    with pytest.raises(MCPError, match="one caller"):
        quota.admit("peer:a", "t2")
    quota.release("t1")
    quota.release("t1")  # twice is harmless
    assert quota.live("peer:a") == 2  # still the shared count
    quota.shared = None
    assert quota.live() == 0


def test_a_task_keeps_only_what_it_needs_of_its_request() -> None:
    """Issue 25: each task kept the caller's whole `clientCapabilities` (up to the 1 MiB body) for
    its TTL: 300 tasks took 342 MB. It keeps what input requests depend on, and its arguments."""
    bulky = {**DECLARING, "elicitation": {"form": {}, "junk": "x" * 100_000}, "experimental": {"y": "z" * 100_000}}

    async def scenario() -> tuple[Any, Any]:
        server, tasks = build()
        created = await handle(server, "tools/call", {"name": "ends", "arguments": {"how": "result"}}, caps=bulky)
        done = await until(server, created["taskId"], ended)
        return tasks.store.get(created["taskId"]), done

    stored, done = asyncio.run(scenario())
    assert stored.client_capabilities == {"elicitation": {"form": {}}, "extensions": {TASKS_EXTENSION: {}}}
    # What the work saw of its request: the arguments, and no `_meta`.
    assert done["result"]["structuredContent"] == {"how": "result"}


def test_a_task_keeps_at_most_max_task_bytes_of_arguments_and_answers() -> None:
    async def scenario() -> None:
        server, tasks = build(max_task_bytes=2000)
        error = await refused(server, "tools/call", {"name": "ends", "arguments": {"how": "x" * 3000}})
        assert error.code == INVALID_PARAMS and "at most 2000 bytes" in error.message
        assert tasks._running == {} and tasks.quota.live() == 0
        task_id = (await handle(server, "tools/call", {"name": "ask_name"}))["taskId"]
        await until(server, task_id, lambda task: task["status"] == "input_required")
        big = {"name": {"action": "accept", "content": {"name": "A" * 3000}}}
        error = await refused(server, "tasks/update", {"taskId": task_id, "inputResponses": big})
        assert error.code == INVALID_PARAMS and "at most 2000 bytes" in error.message
        assert (await handle(server, "tasks/get", {"taskId": task_id}))["status"] == "input_required"
        ignored = {"unknown": {"action": "accept", "content": {"name": "A" * 3000}}}  # not kept: not counted
        assert acked(await handle(server, "tasks/update", {"taskId": task_id, "inputResponses": ignored}))
        fits = {"name": {"action": "accept", "content": {"name": "Ada"}}}
        await handle(server, "tasks/update", {"taskId": task_id, "inputResponses": fits})
        assert (await until(server, task_id, ended))["result"]["content"][0]["text"] == "Hello, Ada"

    asyncio.run(scenario())


class CountingStore(SQLiteTaskStore):
    """A SQLite store that counts the calls of each method (each one a worker thread's job)."""

    def __init__(self) -> None:
        super().__init__(":memory:")
        self.calls: dict[str, int] = {}

    def __getattribute__(self, name: str) -> Any:
        if name in ("get", "states", "renew", "touch", "purge"):
            calls = object.__getattribute__(self, "calls")
            calls[name] = calls.get(name, 0) + 1
        return object.__getattribute__(self, name)


def test_work_waiting_for_input_costs_no_thread_and_no_polling() -> None:
    """Issue 25: every task waiting for input read the store from a worker thread twice a second
    (3,000 of them: 82% CPU). Now it waits on an event; one heartbeat reads the state of all of
    them in one call per `watch_seconds` (half a second), and wakes the one whose task changed."""
    store = CountingStore()

    async def scenario() -> tuple[dict[str, int], str]:
        server = Server("unit", "1")
        tasks = server.add_extension(TasksExtension(store, lease_seconds=60))

        @server.tool()
        async def ask_name(ctx):  # type: ignore[no-untyped-def]
            async def work(task: Task) -> str:
                answers = await task.ask({"name": elicit_form("Name?", {"name": {"type": "string"}})})
                return f"Hello, {answers['name']['content']['name']}"

            return await tasks.hand_off(ctx, work)

        ids = [(await handle(server, "tools/call", {"name": "ask_name"}))["taskId"] for _ in range(10)]
        while len(tasks._seen) < 10:  # every one has read its task once and waits
            await asyncio.sleep(0.01)
        store.calls.clear()
        await asyncio.sleep(1.0)
        calls = dict(store.calls)
        # An answer through the store alone (as another instance would give it) wakes its work.
        store.answer(ids[0], {"name": {"action": "accept", "content": {"name": "Ada"}}})
        done = await until(server, ids[0], ended)
        for task_id in ids[1:]:
            await handle(server, "tasks/cancel", {"taskId": task_id})
        return calls, done["result"]["content"][0]["text"]

    calls, text_ = asyncio.run(scenario())
    assert text_ == "Hello, Ada"
    assert calls.get("get", 0) == 0, calls  # no task read its own record while it waited
    assert 1 <= calls.get("states", 0) <= 4, calls  # one read for all ten, every half second
