"""A throwaway PostgreSQL cluster from the machine's PostgreSQL binaries (Debian's, by default).

`cluster()` runs initdb in a temporary directory, starts the server on a free loopback port with
durability off (nothing here needs to survive a crash), yields a DSN, and stops and deletes it
all. Run as root, it runs PostgreSQL as the `postgres` user Debian's package creates, since
PostgreSQL refuses to run as root. Used by the tests (tests/tasks/conftest.py) and the benchmark.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.procs import free_port


class NoPostgres(RuntimeError):
    """PostgreSQL's server binaries are not installed."""


def bindir() -> Path | None:
    """Where initdb and pg_ctl are: Debian's newest PostgreSQL, else whatever PATH has."""
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parent.parent.name))
    if debian:
        return Path(debian[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@contextmanager
def cluster() -> Iterator[str]:
    """A DSN for a fresh cluster that lives as long as the `with` block."""
    binaries = bindir()
    if binaries is None:
        raise NoPostgres("PostgreSQL is not installed (no initdb): apt-get install postgresql")
    root = Path(tempfile.mkdtemp(prefix="mcpref-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    as_user: list[str] = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    port = free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, text=True)

    try:
        run(str(binaries / "initdb"), "-D", str(data), "-U", "mcpref", "--auth=trust", "--no-sync", "-E", "UTF8")
        options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        run(str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start")
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"could not start PostgreSQL: {exc.stderr or exc.stdout}") from None
    try:
        yield f"postgresql://mcpref@127.0.0.1:{port}/postgres"
    finally:
        stop = [*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]
        subprocess.run(stop, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
