"""The minimal example server plus the tasks extension, on the store `BENCH_TASKS_DB` names
(a SQLite path, or a `postgresql://` DSN): what the tasks rows of the benchmark measure.

`instant_task` hands off work that finishes at once, so creating tasks measures the store
(the durable insert before the answer), not the work.
"""

from __future__ import annotations

import os
from typing import Any

from mcpref import RequestContext, StreamableHTTP
from mcpref.examples.minimal_server import server
from mcpref.tasks import SQLiteTaskStore, Task, TaskQuota, TasksExtension, TaskStore


def _store(target: str) -> TaskStore:
    if target.startswith(("postgresql://", "postgres://")):
        from mcpref.tasks.postgres import PostgresTaskStore

        return PostgresTaskStore(target)
    return SQLiteTaskStore(target)


# This process's own copy of the minimal server (its `echo` is the plain tools/call baseline).
# The load is one caller creating tasks as fast as it can: its fair share is not what is measured,
# so the quota is out of its way (the default, 16 live tasks a caller, would answer it 503).
tasks = TasksExtension(
    _store(os.environ.get("BENCH_TASKS_DB", ":memory:")), quota=TaskQuota(max_per_caller=100_000, max_tasks=100_000)
)
server.add_extension(tasks)


@server.tool(input_schema={"type": "object", "properties": {}})
async def instant_task(ctx: RequestContext) -> Any:
    """Hands off work that is already done: a task whose creation is the whole cost."""

    async def work(task: Task) -> str:
        return "done"

    return await tasks.hand_off(ctx, work)


app = StreamableHTTP(server)
