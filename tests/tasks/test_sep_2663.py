"""SEP-2663's rules about other revisions and other shapes of tasks, each shown once (the compliance
matrix's evidence for them): the 2025-11-25 design's leftovers are gone or ignored."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpref import InputRequired, MCPError, elicit_form
from mcpref.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, Request
from mcpref.legacy import handle_legacy
from mcpref.tasks import TASKS_EXTENSION, Task
from tests.tasks.test_extension import DECLARING, build, handle

#: What a 2025-11-25 client declared for its experimental tasks: not this extension.
LEGACY_TASKS = {"elicitation": {}, "tasks": {"requests": {"tools": {"call": {}}}, "cancel": {}, "list": {}}}


def test_tasks_result_is_method_not_found_even_to_a_declaring_client() -> None:
    """§Backward Compatibility: `tasks/result` is removed; clients calling it MUST receive -32601."""
    server, _ = build()
    with pytest.raises(MCPError) as caught:
        asyncio.run(handle(server, "tasks/result", {"taskId": "t"}))
    assert caught.value.code == METHOD_NOT_FOUND


def test_the_task_parameter_of_a_tool_call_is_ignored() -> None:
    """§Backward Compatibility: the `task` parameter of 2025-11-25 is removed; servers MUST ignore it
    rather than take it as an opt-in. Without the extension the work runs in the request."""

    async def scenario() -> tuple[Any, Any]:
        server, _ = build()
        asked = {"name": "ends", "arguments": {"how": "result"}, "task": {"ttl": 60_000}}
        undeclared = await handle(server, "tools/call", asked, caps={})
        declared = await handle(server, "tools/call", {"name": "greet", "task": {"ttl": 60_000}})
        return undeclared, declared

    undeclared, declared = asyncio.run(scenario())
    assert undeclared["resultType"] == "complete" and undeclared["content"][0]["text"] == "ended by result"
    assert declared["resultType"] == "complete" and "taskId" not in declared


def test_only_the_legacy_tasks_capability_is_not_declaring_the_extension() -> None:
    """§Backward Compatibility: servers MUST treat clients declaring only the legacy capability as
    non-declaring: no task, and -32021 from the tasks methods and a task-only tool."""

    async def scenario() -> list[Any]:
        server, _ = build()
        plain = await handle(server, "tools/call", {"name": "ends", "arguments": {"how": "result"}}, caps=LEGACY_TASKS)
        refusals = []
        for method, params in (("tools/call", {"name": "only_as_task"}), ("tasks/get", {"taskId": "t"})):
            with pytest.raises(MCPError) as caught:
                await handle(server, method, params, caps=LEGACY_TASKS)
            refusals.append((caught.value.code, caught.value.data))
        return [plain, refusals]

    plain, refusals = asyncio.run(scenario())
    assert plain["resultType"] == "complete"
    required = {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
    assert refusals == [(MISSING_REQUIRED_CLIENT_CAPABILITY, required)] * 2


def test_no_revision_advertises_the_legacy_tasks_capabilities() -> None:
    """§Backward Compatibility: servers MUST declare `io.modelcontextprotocol/tasks` and MUST NOT
    advertise `tasks.requests.*`, `tasks.cancel` or `tasks.list`, in either era's answer."""

    async def scenario() -> tuple[Any, Any]:
        server, _ = build()
        discovered = await handle(server, "server/discover", {}, caps={})
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
        initialize = Request(0, "initialize", hello)
        initialized = await handle_legacy(server, initialize, "2025-11-25", None)
        return discovered["capabilities"], initialized["capabilities"]

    modern, legacy = asyncio.run(scenario())
    assert modern["extensions"] == {TASKS_EXTENSION: {}} and "tasks" not in modern
    assert "tasks" not in legacy and TASKS_EXTENSION not in str(legacy)


def test_under_2025_11_25_the_extension_enables_no_task() -> None:
    """§Backward Compatibility: the extension is not defined under 2025-11-25; a legacy request is
    served as if no task capability were declared (the work runs within the request)."""

    async def scenario() -> Any:
        server, _ = build()
        request = Request(1, "tools/call", {"name": "ends", "arguments": {"how": "result"}})
        return await handle_legacy(server, request, "2025-11-25", None)

    result = asyncio.run(scenario())
    assert "taskId" not in result and result["content"][0]["text"] == "ended by result"


def test_a_declaring_client_may_get_either_shape_from_one_tool_server() -> None:
    """§Capability Negotiation: the server decides per request; a declaring client's call of a tool
    that hands off gets a task, of one that answers at once a result, both on one server."""

    async def scenario() -> tuple[str, str]:
        server, _ = build()
        task = await handle(server, "tools/call", {"name": "ends", "arguments": {"how": "result"}}, caps=DECLARING)
        plain = await handle(server, "tools/call", {"name": "greet"}, caps=DECLARING)
        return task["resultType"], plain["resultType"]

    assert asyncio.run(scenario()) == ("task", "complete")


def test_updating_or_cancelling_an_unknown_task_is_an_error_not_an_ack() -> None:
    """§Task Update Requests, §Task Cancellation, §Ack-only Cancellation: ack-only methods still
    answer an unknown `taskId` with a JSON-RPC error."""

    async def scenario() -> list[tuple[int, str]]:
        server, _ = build()
        answers = {"k": {"action": "accept", "content": {}}}
        errors = []
        calls = (("tasks/update", {"taskId": "nope", "inputResponses": answers}), ("tasks/cancel", {"taskId": "nope"}))
        for method, params in calls:
            with pytest.raises(MCPError) as caught:
                await handle(server, method, params)
            errors.append((caught.value.code, caught.value.message))
        return errors

    assert asyncio.run(scenario()) == [(INVALID_PARAMS, "Failed to retrieve task: Task not found")] * 2


def test_mrtr_rounds_are_finished_before_the_task_is_created() -> None:
    """§Task Creation, §Composition with Multi Round-Trip Requests: a tool that needs input before
    it can decide answers `input_required` first (no task exists yet); the retry that carries the
    answer gets the task."""
    server, tasks = build()

    @server.tool()
    async def confirm_then_run(ctx):  # type: ignore[no-untyped-def]
        answer = ctx.input_response("go")
        if answer is None:
            return InputRequired({"go": elicit_form("Run it?", {"ok": {"type": "boolean"}})})

        async def work(task: Task) -> str:
            return "ran"

        return await tasks.hand_off(ctx, work)

    async def scenario() -> tuple[Any, Any, int]:
        first = await handle(server, "tools/call", {"name": "confirm_then_run"})
        stored_after_first = len(tasks._running)
        retry = {"name": "confirm_then_run", "inputResponses": {"go": {"action": "accept", "content": {"ok": True}}}}
        second = await handle(server, "tools/call", retry)
        return first, second, stored_after_first

    first, second, stored_after_first = asyncio.run(scenario())
    assert first["resultType"] == "input_required" and stored_after_first == 0
    assert second["resultType"] == "task"
