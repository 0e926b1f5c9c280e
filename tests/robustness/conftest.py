"""Fuzzing budgets, and a real server per test module that also reports what it logged.

Hypothesis profiles (choose with `HYPOTHESIS_PROFILE`; `scripts/fuzz` picks "long"):

- "ci", the default: a fixed, derandomized set of examples per test, small enough that every
  fuzz test together stays within about 20 s on two cores;
- "long": `FUZZ_EXAMPLES` examples per test (default 2000), random each run, with failures
  remembered in `.pytest_cache/hypothesis` and replayed first next time.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from mcpref import StreamableHTTP
from mcpref.examples.robustness_server import build_server
from tests.conftest import running
from tests.robustness import invariant

ROOT = Path(__file__).resolve().parents[2]
_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "ci",
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100")),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_SLOW_IS_FINE,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
)
settings.register_profile(
    "long",
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "2000")),
    deadline=None,
    database=DirectoryBasedExampleDatabase(str(ROOT / ".pytest_cache" / "hypothesis")),
    suppress_health_check=_SLOW_IS_FINE,
    print_blob=True,
)
#: Decorate each fuzz test with this (not loaded globally, so other suites keep their own settings).
FUZZ = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: Loggers whose ERROR records mean the server hit something it did not expect.
WATCHED_LOGGERS = ("uvicorn.error", "mcpref", "asyncio")


class ErrorLog(logging.Handler):
    """Collects ERROR records (an exception in the ASGI app, a handler bug) while a server runs."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def take(self) -> list[str]:
        lines = [self.format(record) for record in self.records]
        self.records.clear()
        return lines


#: Where the fuzz server answers: the dual-era server (the default configuration) and the same
#: server modern-only (`serve_legacy=False`), which refuses 2025-era requests its own way.
MODERN_ONLY = "/modern/mcp"
PATHS = ("/mcp", MODERN_ONLY)


def fuzz_app(max_body_bytes: int = 256 * 1024) -> Any:
    """Both configurations of the robustness server behind one uvicorn, told apart by path."""
    dual = StreamableHTTP(build_server(), max_body_bytes=max_body_bytes)
    modern = StreamableHTTP(build_server(serve_legacy=False), path=None, max_body_bytes=max_body_bytes)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        target = modern if scope.get("path") == MODERN_ONLY else dual
        await target(scope, receive, send)

    return app


@pytest.fixture(scope="module")
def fuzz_http() -> Iterator[httpx.Client]:
    """The fuzz server under a real uvicorn, and a client that sends only what it is told
    (httpx's default `Accept: */*` is removed, so a request can lack Accept)."""
    with running(fuzz_app()) as url, httpx.Client(base_url=url, timeout=5) as http:
        del http.headers["accept"]
        yield http


@pytest.fixture(scope="module")
def server_errors(fuzz_http: httpx.Client) -> Iterator[ErrorLog]:
    """Attached once the server runs: uvicorn's logging set-up would drop a handler added before."""
    handler = ErrorLog()
    for name in WATCHED_LOGGERS:
        logging.getLogger(name).addHandler(handler)
    yield handler
    for name in WATCHED_LOGGERS:
        logging.getLogger(name).removeHandler(handler)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """For scripts/fuzz: write "<requests sent> <failed tests>" to `FUZZ_COUNT_FILE`."""
    path = os.environ.get("FUZZ_COUNT_FILE")
    if path:
        Path(path).write_text(f"{invariant.sent_count} {session.testsfailed}\n")
