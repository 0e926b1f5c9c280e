"""The everything server on a shared PostgreSQL task store, for tests that run it as a process.

`TASKS_DSN` names the database; `TASKS_LEASE` the lease in seconds (short enough that a killed
instance's tasks are reported failed within a test's patience).
"""

from __future__ import annotations

import os

from mcpref import StreamableHTTP
from mcpref.examples.everything_server import build_server
from mcpref.tasks import TasksExtension
from mcpref.tasks.postgres import PostgresTaskStore

tasks = TasksExtension(
    PostgresTaskStore(os.environ["TASKS_DSN"]),
    poll_interval_ms=50,
    lease_seconds=float(os.environ.get("TASKS_LEASE", "1.5")),
)
app = StreamableHTTP(build_server(tasks))
