"""A report desk whose tools run as tasks: the example of docs/patterns/long-running-work.md.

- `export_report(region)`: collects for a moment, asks the user whether to send the report to
  the board (an elicitation, mid-task), then sends it or keeps it as a draft.
- `count_slowly(to)`: counts, half a second a step; long enough to cancel.

A client that declares `io.modelcontextprotocol/tasks` gets a task handle from both and polls
`tasks/get`; one that does not gets `count_slowly`'s result within its request, and -32021 from
`export_report`, which cannot ask for input mid-flight without a task.

Tasks are kept in SQLite: in memory by default, in the file `MCPREF_TASKS_DB` names if set (then
they survive a restart). Run it with `uvicorn mcpref.examples.tasks_server:app`; the site serves it at
`/tasks/mcp`.
"""

from __future__ import annotations

import os
from typing import Any

from mcpref import RequestContext, Server, StreamableHTTP, elicit_form
from mcpref.tasks import SQLiteTaskStore, Task, TasksExtension


def build_server(tasks: TasksExtension | None = None) -> Server:
    server = Server("report-desk", "1.0.0", title="Report desk (a tasks example)")
    if tasks is None:
        tasks = TasksExtension(SQLiteTaskStore(os.environ.get("MCPREF_TASKS_DB", ":memory:")), poll_interval_ms=100)
    server.add_extension(tasks)

    @server.tool(
        input_schema={"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}
    )
    async def export_report(region: str, ctx: RequestContext) -> Any:
        """Build the quarterly report for a region and, if the user agrees, send it to the board."""

        async def work(task: Task) -> str:
            await task.report(f"collecting figures for {region}")
            await task.sleep(0.2)
            question = elicit_form(f"Send the {region} report to the board?", {"send": {"type": "boolean"}}, ["send"])
            answers = await task.ask({"send_to_board": question}, "waiting for the user")
            answer = answers["send_to_board"]
            if answer.get("action") == "accept" and (answer.get("content") or {}).get("send") is True:
                return f"The {region} report was sent to the board."
            return f"The {region} report was kept as a draft."

        return await tasks.hand_off(ctx, work, required=True)

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"to": {"type": "integer", "minimum": 1, "maximum": 100}},
            "required": ["to"],
        }
    )
    async def count_slowly(to: int, ctx: RequestContext) -> Any:
        """Count to `to`, half a second a number."""

        async def work(task: Task) -> str:
            for number in range(1, to + 1):
                await task.report(f"at {number} of {to}")
                await task.sleep(0.5)
            return f"Counted to {to}."

        return await tasks.hand_off(ctx, work)

    return server


def create_app() -> StreamableHTTP:
    """A fresh endpoint at the path `mcpref demo` (`mcpref.demo`) serves it on."""
    return StreamableHTTP(build_server(), path="/tasks/mcp")


app = StreamableHTTP(build_server())
