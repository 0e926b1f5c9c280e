"""The everything server's task fixtures: the tools the suite's `tasks-*` scenarios call.

Each tool decides for itself whether to answer at once or to hand its work off as a task
(`tasks.hand_off`). A client that declared `io.modelcontextprotocol/tasks` on the call gets a
`CreateTaskResult` and polls `tasks/get`; one that did not gets the plain result after the work
ran within its request, or -32021 from a tool that only runs as a task (`required=True`).
"""

from __future__ import annotations

from typing import Any

from mcpref import INTERNAL_ERROR, InputRequired, MCPError, RequestContext, Server, ToolError, elicit_form
from mcpref.tasks import Task, TasksExtension

from .input_required import accepted, ask_name

NO_ARGUMENTS = {"type": "object", "properties": {}}


def confirm(message: str) -> dict[str, Any]:
    return elicit_form(message, {"confirm": {"type": "boolean"}}, required=["confirm"])


def confirmed(answer: dict[str, Any]) -> bool:
    return answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm") is True


def register_tasks(server: Server, tasks: TasksExtension) -> None:
    @server.tool(input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
    def greet(name: str) -> str:
        """Greets at once: a tool that never makes a task."""
        return f"Hello, {name}!"

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 600}, "label": {"type": "string"}},
            "required": ["seconds"],
        }
    )
    async def slow_compute(seconds: float, ctx: RequestContext, label: str = "") -> Any:
        """Sleeps `seconds`, then reports; as a task unless there is nothing to wait for."""

        async def work(task: Task) -> str:
            await task.report(f"computing {label or 'something'} for {seconds:g} s")
            await task.sleep(seconds)
            return f"Computed {label or 'something'} in {seconds:g} s"

        if seconds == 0:
            return await work(Task(None, None, ctx))  # the server's choice: no task for instant work
        return await tasks.hand_off(ctx, work)

    @server.tool(input_schema=NO_ARGUMENTS)
    async def failing_job(ctx: RequestContext) -> Any:
        """Fails after a second with a tool error (isError): a task that still ends `completed`."""

        async def work(task: Task) -> str:
            await task.sleep(1)
            raise ToolError("The job failed: the input data was rejected")

        return await tasks.hand_off(ctx, work, required=True)

    @server.tool(input_schema=NO_ARGUMENTS)
    async def protocol_error_job(ctx: RequestContext) -> Any:
        """Fails with a JSON-RPC error: a task that ends `failed`."""

        async def work(task: Task) -> str:
            await task.sleep(0.2)
            raise MCPError(INTERNAL_ERROR, "The job's backend crashed")

        return await tasks.hand_off(ctx, work)

    @server.tool(
        input_schema={"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]}
    )
    async def confirm_delete(filename: str, ctx: RequestContext) -> Any:
        """Asks the user to confirm (input_required mid-task), then deletes, or not."""

        async def work(task: Task) -> str:
            answers = await task.ask({"confirm": confirm(f"Delete {filename}?")}, f"Waiting to delete {filename}")
            return f"Deleted {filename}" if confirmed(answers["confirm"]) else f"Kept {filename}"

        return await tasks.hand_off(ctx, work)

    @server.tool(input_schema=NO_ARGUMENTS)
    async def multi_input(ctx: RequestContext) -> Any:
        """Asks two things at once; the client may answer them one at a time."""

        async def work(task: Task) -> str:
            answers = await task.ask({"name": ask_name(), "confirm": confirm("Go ahead?")}, "Waiting for two answers")
            name = (answers["name"].get("content") or {}).get("name", "someone")
            return f"{name} {'went ahead' if confirmed(answers['confirm']) else 'stopped'}"

        return await tasks.hand_off(ctx, work)

    @server.tool(input_schema=NO_ARGUMENTS)
    async def test_tool_with_task(ctx: RequestContext) -> Any:
        """Asks for a name with MRTR first (synchronously), then runs as a task that uses it."""
        answer = accepted(ctx, "user_name")
        if answer is None or not isinstance(answer.get("name"), str):
            return InputRequired({"user_name": ask_name()})
        name = answer["name"]

        async def work(task: Task) -> str:
            await task.sleep(0.2)
            return f"Hello, {name}! (from a task)"

        return await tasks.hand_off(ctx, work, required=True)
