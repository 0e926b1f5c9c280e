"""Collects every page under docs/ as tests: see tests/docs/pages.py for what runs and how.

Kept here (and excluded from the built site in mkdocs.yml) because pytest hands a conftest only
the files under its own folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcpref.limits import ServerLimits
from tests.conftest import running
from tests.docs import pages, update


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-frames",
        action="store_true",
        help="rewrite every response frame on the pages that differs from the reference server",
    )


def pytest_configure(config: pytest.Config) -> None:
    pages.settings["update"] = config.getoption("--update-frames")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under --update-frames: write the refreshed blocks, say so, then check the rewritten pages
    again as a normal run would, and fail the run (listing why) if any of them still fails."""
    done = update.apply_pending()
    if not done:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    write = reporter.write_line if reporter is not None else print
    for line in update.summary(done):
        write(line)
    with live_site() as url:
        failures = pages.recheck(done, url)
    if failures:
        write(f"\n{len(failures)} block(s) still fail after the refresh; fix them by hand:\n")
        for failure in failures:
            write(failure + "\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        write("every rewritten page passes a normal run")


@contextmanager
def live_site() -> Iterator[str]:
    """The site app (pages and /mcp) under a real uvicorn with the bounds `./scripts/serve` has
    (`mcpref.limits`), for the pages' curl and httpx examples. The one place that builds it: the
    normal run (`live_url`) and `--update-frames`' recheck run the same server."""
    from docsite import app

    with running(app, limits=ServerLimits()) as url:
        yield url


@pytest.fixture(scope="session")
def live_url() -> Iterator[str]:
    with live_site() as url:
        yield url


pytest_collect_file = pages.make_sybil(fixtures=["live_url"], path=str(Path(__file__).parent)).pytest()
