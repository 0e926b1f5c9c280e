"""Tasks: the `io.modelcontextprotocol/tasks` extension (SEP-2663) and the stores it keeps tasks in.

```python
from mcpref import Server
from mcpref.tasks import SQLiteTaskStore, TasksExtension

server = Server("jobs", "1.0.0")
# ":memory:" for this example; a file name keeps the tasks across restarts.
tasks = server.add_extension(TasksExtension(SQLiteTaskStore(":memory:")))

@server.tool()
async def build(target: str, ctx):
    async def work(task):
        await task.report(f"building {target}")
        await task.sleep(30)
        return f"{target} built"

    return await tasks.hand_off(ctx, work)
```

`mcpref.tasks.postgres.PostgresTaskStore` keeps them in PostgreSQL instead, for several instances.
`TaskQuota` bounds the live tasks of each caller and of all (`TasksExtension(quota=...)`).
"""

from .extension import Task, TasksExtension
from .quota import TaskQuota
from .record import TASKS_EXTENSION, TaskRecord
from .store import SQLiteTaskStore, TaskStore

__all__ = ["TASKS_EXTENSION", "SQLiteTaskStore", "Task", "TaskQuota", "TaskRecord", "TaskStore", "TasksExtension"]
