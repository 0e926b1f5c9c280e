"""Tasks: the `io.modelcontextprotocol/tasks` extension (SEP-2663) and the stores it keeps tasks in.

```python
from mcpref import Server
from mcpref.tasks import SQLiteTaskStore, TasksExtension

server = Server("jobs", "1.0.0")
tasks = server.add_extension(TasksExtension(SQLiteTaskStore("tasks.sqlite3")))

@server.tool()
async def build(target: str, ctx):
    async def work(task):
        await task.report(f"building {target}")
        await task.sleep(30)
        return f"{target} built"

    return await tasks.hand_off(ctx, work)
```

`mcpref.tasks.postgres.PostgresTaskStore` keeps them in PostgreSQL instead, for several instances.
"""

from .extension import TASKS_EXTENSION, Task, TasksExtension
from .record import TaskRecord
from .store import SQLiteTaskStore, TaskStore

__all__ = ["TASKS_EXTENSION", "SQLiteTaskStore", "Task", "TaskRecord", "TaskStore", "TasksExtension"]
