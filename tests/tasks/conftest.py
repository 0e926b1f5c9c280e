"""Fixtures for the task stores: a real PostgreSQL server, started from Debian's packages.

The server is a throwaway cluster in a temporary directory (initdb, then pg_ctl start on a free
loopback port), started once per test session and stopped at its end. Without PostgreSQL's
binaries the PostgreSQL tests skip, saying so; under CI=true they fail instead (./scripts/test,
run as root, installs the `postgresql` package).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpref.tasks import SQLiteTaskStore, TaskStore

from . import pg


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A DSN for a fresh PostgreSQL cluster that lives as long as the test session."""
    if pg.bindir() is None:
        reason = "PostgreSQL is not installed (no initdb): apt-get install postgresql"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; under CI=true this is a failure, not a skip")
        pytest.skip(reason)
    try:
        with pg.cluster() as dsn:
            yield dsn
    except RuntimeError as exc:
        pytest.fail(str(exc))


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
