"""Fixtures for the task stores: a real PostgreSQL server, started from Debian's packages.

The server is a throwaway cluster in a temporary directory (initdb, then pg_ctl start on a free
loopback port), started once per test session and stopped at its end. Without PostgreSQL's
binaries the PostgreSQL tests skip, saying so; under CI=true they fail instead (.ci/run installs
the `postgresql` package).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpref.tasks import SQLiteTaskStore, TaskStore


def _bindir() -> Path | None:
    """Where initdb and pg_ctl are: Debian's newest PostgreSQL, else whatever PATH has."""
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parent.parent.name))
    if debian:
        return Path(debian[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A DSN for a fresh PostgreSQL cluster that lives as long as the test session."""
    bindir = _bindir()
    if bindir is None:
        reason = "PostgreSQL is not installed (no initdb): apt-get install postgresql"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; under CI=true this is a failure, not a skip")
        pytest.skip(reason)
    root = Path(tempfile.mkdtemp(prefix="mcpref-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    # PostgreSQL refuses to run as root: run it as the `postgres` user Debian's package creates.
    as_user: list[str] = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    port = _free_port()
    run = lambda *args: subprocess.run([*as_user, *args], check=True, capture_output=True, text=True)  # noqa: E731
    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", "mcpref", "--auth=trust", "--no-sync", "-E", "UTF8")
        options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        run(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start")
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"could not start PostgreSQL: {exc.stderr or exc.stdout}")
    try:
        yield f"postgresql://mcpref@127.0.0.1:{port}/postgres"
    finally:
        stop = [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]
        subprocess.run(stop, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


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
