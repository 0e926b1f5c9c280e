"""Tasks in PostgreSQL, for several server instances sharing one database (psycopg 3).

The `postgres` extra brings psycopg: `pip install "./mcpref[postgres]"` from a clone (mcpref is not
on PyPI yet), then:

```python
from mcpref.tasks import TasksExtension
from mcpref.tasks.postgres import PostgresTaskStore

store = PostgresTaskStore("postgresql://mcp@db/mcp")
tasks = server.add_extension(TasksExtension(store))
```

The SQL is `SQLTaskStore`'s, shared with SQLite; here a read that precedes a write in one
transaction locks its row (`FOR UPDATE`), so two instances answering the same task at once
queue rather than overwrite each other's answers. One connection per store, used by one thread
at a time; a connection found broken is opened again before its next use.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from .store import ADDED_COLUMNS, SCHEMA, SQLTaskStore

__all__ = ["PostgresTaskStore"]


class PostgresTaskStore(SQLTaskStore):
    """Tasks in the PostgreSQL database `dsn` names; the table is created if missing.

    Every instance of a deployment opens one on the same database, so any of them answers
    `tasks/get` for a task another runs. A lost connection is opened again on the next call.

    Args:
        dsn: The PostgreSQL connection string (needs the `postgres` extra: psycopg).

    Raises:
        psycopg.OperationalError: The database cannot be reached (within 10 seconds).
    """

    placeholder = "%s"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._lock = threading.Lock()
        self._connection = self._connect()
        # Two instances starting at once may race to create the table; a lock serialises them.
        with self._transaction() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(2663)")
            for statement in filter(str.strip, SCHEMA.split(";")):
                cursor.execute(statement)
            for name, kind in ADDED_COLUMNS.items():
                cursor.execute(f"ALTER TABLE mcp_tasks ADD COLUMN IF NOT EXISTS {name} {kind}")

    def _connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.dsn, autocommit=True, connect_timeout=10)

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Cursor[Any]]:
        with self._lock:
            if self._connection.closed or self._connection.broken:
                self._connection = self._connect()
            with self._connection.transaction(), self._connection.cursor() as cursor:
                yield cursor

    def _locking(self, select: str) -> str:
        return select + " FOR UPDATE"

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._connection.close()
