"""Where tasks live: one small interface, two databases behind it.

A task must outlive the request that created it, and often the process: SEP-2663 lets a client
come back with the task id after a crash or restart, and lets any instance behind a load balancer
answer for it. So the task extension keeps nothing about a task in memory that another instance
could need; it all goes through a `TaskStore`:

- `SQLiteTaskStore` (stdlib `sqlite3`), the embedded default: one file, no set-up, survives a
  restart of the server. Several processes on one machine may share the file.
- `PostgresTaskStore` (`mcpref.tasks.postgres`, psycopg 3): for several instances on several
  machines sharing one database.

Both speak the same SQL through `SQLTaskStore`; only connecting and locking differ. Every change
of status is a compare-and-set on the status it comes from (`record.TRANSITIONS`), so two
instances racing (a worker finishing, a client cancelling) cannot move a task out of a terminal
state or through an illegal transition: the loser's update matches no row.

The methods are synchronous and short; the extension calls them in a worker thread. An instance
watches the tasks it runs with one `states` read and renews their leases with one `renew` write
per tick, however many there are.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from .record import ACTIVE, INPUT_REQUIRED, WORKING, TaskRecord, allowed_from

COLUMNS = (
    "task_id, principal, status, status_message, created_at, updated_at, ttl_ms, poll_interval_ms, "
    "client_capabilities, input_requests, input_responses, result, error, cancel_requested, owner, lease_until, "
    "trace_context"
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS mcp_tasks (
    task_id TEXT PRIMARY KEY,
    principal TEXT,
    status TEXT NOT NULL,
    status_message TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    ttl_ms BIGINT,
    poll_interval_ms BIGINT NOT NULL,
    expires_at DOUBLE PRECISION,
    client_capabilities TEXT NOT NULL,
    input_requests TEXT NOT NULL,
    input_responses TEXT NOT NULL,
    result TEXT,
    error TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    lease_until DOUBLE PRECISION NOT NULL DEFAULT 0,
    trace_context TEXT
);
CREATE INDEX IF NOT EXISTS mcp_tasks_expires_at ON mcp_tasks (expires_at);
"""
#: Columns added since the first schema, with their type: a store opened on an older table adds them.
ADDED_COLUMNS = {"trace_context": "TEXT"}


class TaskStore(Protocol):
    """What the tasks extension needs from a database. Every method is atomic."""

    def create(self, record: TaskRecord) -> None:
        """Store a new task; once this returns, `get` finds it from any instance (durable create).

        Args:
            record: The task, its id new.
        """

    def get(self, task_id: str) -> TaskRecord | None:
        """Read one task.

        Args:
            task_id: The task's id.

        Returns:
            The task, or None if there is none with that id (expired ones may already be gone).
        """

    def move(self, task_id: str, status: str, **fields: Any) -> bool:
        """Change the status, if the task may move there from where it is (`record.TRANSITIONS`).

        Args:
            task_id: The task's id.
            status: The status to move to.
            **fields: Other `TaskRecord` fields to set with it (`result`, `error`, ...).

        Returns:
            True if it moved; False if the move is not allowed or there is no such task.
        """

    def touch(self, task_id: str, **fields: Any) -> bool:
        """Change fields of an active task without changing its status.

        Args:
            task_id: The task's id.
            **fields: `TaskRecord` fields to set (`status_message`, `cancel_requested`, ...).

        Returns:
            True if changed; False if the task is not active.
        """

    def ask(self, task_id: str, requests: dict[str, Any], message: str | None) -> bool:
        """Add input requests and move to `input_required`.

        Args:
            task_id: The task's id.
            requests: Keys mapped to input requests; the keys must be new for this task.
            message: The status message while it waits.

        Returns:
            True if the task is now `input_required`; False if it is not active or a key was used.
        """

    def answer(self, task_id: str, responses: dict[str, Any]) -> None:
        """Keep the responses whose keys are outstanding, and ignore the rest; once none is
        outstanding, the task is `working` again ([SEP-2663](https://modelcontextprotocol.io/seps/2663-tasks-extension)).

        Args:
            task_id: The task's id.
            responses: The client's answers by key, from `tasks/update`.
        """

    def purge(self, now: float) -> int:
        """Delete tasks whose TTL ran out.

        Args:
            now: The time to judge by, in epoch seconds.

        Returns:
            How many were deleted.
        """

    def renew(self, owner: str, lease_until: float) -> int:
        """Extend the lease of every active task `owner` runs, in one statement.

        Args:
            owner: The instance (`TasksExtension.instance`).
            lease_until: The new end of the lease, in epoch seconds.

        Returns:
            How many tasks were renewed.
        """

    def states(self, task_ids: list[str]) -> dict[str, tuple[str, bool, float]]:
        """(status, cancel_requested, updated_at) of each of `task_ids` that still exists, in one
        read: how an instance watches every task it runs at once, rather than one read per task.

        Args:
            task_ids: The tasks to read.

        Returns:
            Each existing task's id mapped to its state; missing ones are left out.
        """


class SQLTaskStore:
    """The SQL both databases share. Subclasses provide `_transaction` (a cursor, committed on exit)."""

    #: Placeholder style of the driver: sqlite3 takes `?`, psycopg `%s`.
    placeholder = "?"

    @contextmanager
    def _transaction(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def _one(self, cursor: Any, sql: str, params: tuple[Any, ...]) -> Any:
        cursor.execute(self._sql(sql), params)
        return cursor.fetchone()

    # -- the interface ---------------------------------------------------------------------

    def create(self, record: TaskRecord) -> None:
        expires = None if record.ttl_ms is None else record.created_at + record.ttl_ms / 1000
        with self._transaction() as cursor:
            cursor.execute(
                self._sql(f"INSERT INTO mcp_tasks ({COLUMNS}, expires_at) VALUES ({', '.join('?' * 18)})"),
                (*_row_of(record), expires),
            )

    def get(self, task_id: str) -> TaskRecord | None:
        with self._transaction() as cursor:
            row = self._one(cursor, f"SELECT {COLUMNS} FROM mcp_tasks WHERE task_id = ?", (task_id,))
        return None if row is None else _record_of(row)

    def move(self, task_id: str, status: str, **fields: Any) -> bool:
        sources = sorted(allowed_from(status))
        sets, values = _assignments({"status": status, "updated_at": time.time(), **fields})
        with self._transaction() as cursor:
            cursor.execute(
                self._sql(
                    f"UPDATE mcp_tasks SET {sets} WHERE task_id = ? AND status IN ({', '.join('?' * len(sources))})"
                ),
                (*values, task_id, *sources),
            )
            changed: int = cursor.rowcount  # the cursor is sqlite3's or psycopg's, typed Any here
            return changed == 1

    def touch(self, task_id: str, **fields: Any) -> bool:
        if "status_message" in fields:
            fields["updated_at"] = time.time()
        sets, values = _assignments(fields)
        with self._transaction() as cursor:
            cursor.execute(
                self._sql(f"UPDATE mcp_tasks SET {sets} WHERE task_id = ? AND status IN (?, ?)"),
                (*values, task_id, *sorted(ACTIVE)),
            )
            changed: int = cursor.rowcount  # the cursor is sqlite3's or psycopg's, typed Any here
            return changed == 1

    def ask(self, task_id: str, requests: dict[str, Any], message: str | None) -> bool:
        with self._transaction() as cursor:
            select = self._locking("SELECT status, input_requests FROM mcp_tasks WHERE task_id = ?")
            row = self._one(cursor, select, (task_id,))
            if row is None or row[0] != WORKING:
                return False
            asked = json.loads(row[1])
            reused = sorted(set(asked) & set(requests))
            if reused:
                raise ValueError(f"input request keys must be unique over a task's lifetime; reused: {reused}")
            sets, values = _assignments(
                {
                    "status": INPUT_REQUIRED,
                    "status_message": message,
                    "input_requests": {**asked, **requests},
                    "updated_at": time.time(),
                }
            )
            cursor.execute(self._sql(f"UPDATE mcp_tasks SET {sets} WHERE task_id = ?"), (*values, task_id))
            return True

    def answer(self, task_id: str, responses: dict[str, Any]) -> None:
        with self._transaction() as cursor:
            row = self._one(
                cursor,
                self._locking("SELECT status, input_requests, input_responses FROM mcp_tasks WHERE task_id = ?"),
                (task_id,),
            )
            if row is None or row[0] != INPUT_REQUIRED:
                return
            asked, answered = json.loads(row[1]), json.loads(row[2])
            fresh = {key: value for key, value in responses.items() if key in asked and key not in answered}
            if not fresh:
                return
            sets, values = _assignments({"input_responses": {**answered, **fresh}, "updated_at": time.time()})
            cursor.execute(self._sql(f"UPDATE mcp_tasks SET {sets} WHERE task_id = ?"), (*values, task_id))

    def purge(self, now: float) -> int:
        with self._transaction() as cursor:
            cursor.execute(self._sql("DELETE FROM mcp_tasks WHERE expires_at < ?"), (now,))
            purged: int = cursor.rowcount
            return purged

    def renew(self, owner: str, lease_until: float) -> int:
        with self._transaction() as cursor:
            cursor.execute(
                self._sql("UPDATE mcp_tasks SET lease_until = ? WHERE owner = ? AND status IN (?, ?)"),
                (lease_until, owner, *sorted(ACTIVE)),
            )
            renewed: int = cursor.rowcount
            return renewed

    def states(self, task_ids: list[str]) -> dict[str, tuple[str, bool, float]]:
        found: dict[str, tuple[str, bool, float]] = {}
        with self._transaction() as cursor:
            for start in range(0, len(task_ids), _IDS_PER_QUERY):
                chunk = task_ids[start : start + _IDS_PER_QUERY]
                cursor.execute(
                    self._sql(
                        "SELECT task_id, status, cancel_requested, updated_at FROM mcp_tasks "
                        f"WHERE task_id IN ({', '.join('?' * len(chunk))})"
                    ),
                    tuple(chunk),
                )
                for task_id, status, cancel_requested, updated_at in cursor.fetchall():
                    found[task_id] = (status, bool(cancel_requested), float(updated_at))
        return found

    def _locking(self, select: str) -> str:
        """A read that locks its row until the transaction ends (PostgreSQL: FOR UPDATE)."""
        return select


class SQLiteTaskStore(SQLTaskStore):
    """Tasks in one SQLite file (`":memory:"` for a store that dies with the process).

    WAL mode lets readers and one writer work at once; `BEGIN IMMEDIATE` makes each change take
    the write lock up front, so two processes sharing the file never interleave a read-modify-write.

    Args:
        path: The database file, created with its table if missing; `":memory:"` for one that
            lives as long as the store.
    """

    def __init__(self, path: str | Path = "mcp-tasks.sqlite3") -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
        if self.path != ":memory:":
            self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.executescript(SCHEMA)
        present = {row[1] for row in self._connection.execute("PRAGMA table_info(mcp_tasks)")}
        for name, kind in ADDED_COLUMNS.items():
            if name not in present:
                self._connection.execute(f"ALTER TABLE mcp_tasks ADD COLUMN {name} {kind}")

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Cursor]:
        with self._lock:
            cursor = self._connection.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            try:
                yield cursor
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")

    def close(self) -> None:
        """Close the database connection; the store is unusable after."""
        with self._lock:
            self._connection.close()


#: Task ids per `states` query: well under SQLite's smallest limit on parameters (999).
_IDS_PER_QUERY = 500

_JSON_FIELDS = frozenset(
    {"client_capabilities", "input_requests", "input_responses", "result", "error", "trace_context"}
)


def _assignments(fields: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    names = list(fields)
    unknown = set(names) - set(COLUMNS.split(", "))
    if unknown:
        raise ValueError(f"not a task column: {sorted(unknown)}")
    values = tuple(_column_value(name, fields[name]) for name in names)
    return ", ".join(f"{name} = ?" for name in names), values


def _column_value(name: str, value: Any) -> Any:
    if name in _JSON_FIELDS:
        return None if value is None else json.dumps(value)
    if name == "cancel_requested":
        return int(bool(value))
    return value


def _row_of(record: TaskRecord) -> tuple[Any, ...]:
    return tuple(_column_value(name, getattr(record, name)) for name in COLUMNS.split(", "))


def _record_of(row: Any) -> TaskRecord:
    values = dict(zip(COLUMNS.split(", "), row, strict=True))
    for name in _JSON_FIELDS:
        if values[name] is not None:
            values[name] = json.loads(values[name])
    values["cancel_requested"] = bool(values["cancel_requested"])
    values["ttl_ms"] = None if values["ttl_ms"] is None else int(values["ttl_ms"])
    values["poll_interval_ms"] = int(values["poll_interval_ms"])
    return TaskRecord(**values)
