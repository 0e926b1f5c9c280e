"""Fixtures for the task stores: SQLite in a file, and a real PostgreSQL (`postgres_dsn`, in
tests/conftest.py: a throwaway cluster from Debian's packages, shared with tests/deployment)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpref.tasks import SQLiteTaskStore, TaskStore


@pytest.fixture
def postgres_store(postgres_dsn: str) -> Iterator[TaskStore]:
    """A PostgreSQL store on an empty table."""
    from mcpref.tasks.postgres import PostgresTaskStore

    store = PostgresTaskStore(postgres_dsn)
    with store._transaction() as cursor:
        cursor.execute("TRUNCATE mcp_tasks")
    yield store
    store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TaskStore]:
    """Each store behind the one interface: SQLite in a file, and PostgreSQL."""
    if request.param == "sqlite":
        sqlite = SQLiteTaskStore(tmp_path / "tasks.sqlite3")
        yield sqlite
        sqlite.close()
    else:
        yield request.getfixturevalue("postgres_store")
