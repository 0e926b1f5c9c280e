"""A balanced deployment for the tests: HAProxy and three instances on a throwaway PostgreSQL.

Needs HAProxy and PostgreSQL's server binaries (scripts/system-packages): without them these
tests skip, saying so; under CI=true they fail instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from bench.balanced import Deployment, balanced


def needs_haproxy() -> None:
    if shutil.which("haproxy") is None:
        reason = "HAProxy is not installed: apt-get install haproxy"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; under CI=true this is a failure, not a skip")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def deployment(postgres_dsn: str) -> Iterator[Deployment]:
    """Three instances behind the balancer, shared by a module's tests (which leave them running)."""
    needs_haproxy()
    # A 6 s task lease (renewed every 2 s): a cancel made through another instance is noticed in
    # 2 s rather than 5, and a loaded machine still renews in time.
    with balanced(postgres_dsn, task_lease=6.0) as running:
        yield running
        for name, server in running.instances.items():
            assert "Traceback" not in server.log(), f"{name}: {server.log()}"
