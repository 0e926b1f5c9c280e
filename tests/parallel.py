"""What the suite's processes share when pytest-xdist runs it in parallel workers (`./scripts/test`):
work done once for the run (`Once`: the site build, the browser survey), one install at a time
(`exclusive`), and the sections tests hand to `terminal_report`, printed at the end of the run by
the process that prints the summary. tests/conftest.py wires them in; pytest and the standard
library only, so a process that only waits for a result starts fast."""

from __future__ import annotations

import fcntl
import os
import pickle
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


@contextmanager
def exclusive(lock: Path) -> Iterator[None]:
    """Hold an exclusive `flock` on `lock` (created if missing): one process of any run at a time."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


class Once:
    """Work one process does for the whole run, however many pytest-xdist workers share it: the
    site's build, the browser survey. The process that `claim`s it holds an exclusive `flock` on
    `NAME.lock` in the run's folder until it has left the result in `NAME.pickle` (`done`); any
    other process `wait`s for the lock and reads the result. A lock dies with its process, so a
    worker that crashed mid-work leaves no result, and the waiters say so instead of hanging."""

    #: How long a waiter waits: longer than the site build's and the survey's own bounds.
    WAIT = 900.0

    def __init__(self, folder: Path, name: str) -> None:
        self.name = name
        self.lock = folder / f"{name}.lock"
        self.result = folder / f"{name}.pickle"
        self._held: int | None = None

    def claim(self) -> bool:
        """True if this process is to do the work: nobody has done it, nor is doing it."""
        fd = os.open(self.lock, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        if self.result.exists():
            os.close(fd)
            return False
        self._held = fd
        return True

    def done(self, value: Any) -> None:
        """Leave `value` (picklable) for every process, and let the waiters go."""
        partial = self.result.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(value))
        partial.replace(self.result)
        if self._held is not None:
            os.close(self._held)
            self._held = None

    def wait(self) -> Any:
        """The result another process left; never called by the process that claimed the work
        (its own lock would block it)."""
        fd = os.open(self.lock, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            deadline = time.monotonic() + self.WAIT
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        waited = f"{self.name}: not done by another worker within {self.WAIT:.0f} s"
                        raise TimeoutError(waited) from None
                    time.sleep(0.2)  # the work takes tens of seconds; this only bounds the wait's lag
            if not self.result.exists():
                raise RuntimeError(f"{self.name}: the worker doing it stopped before it was done ({self.lock})")
            return pickle.loads(self.result.read_bytes())
        finally:
            os.close(fd)


#: The key a `terminal_report` section travels under, in a test report's `user_properties`.
REPORT_PROPERTY = "mcpref terminal report"


@pytest.fixture
def terminal_report(request: pytest.FixtureRequest) -> Callable[[str, list[str]], None]:
    """Call with a title and lines; they appear in the terminal summary under that title (lines
    of every call with the same title together), however the output is captured. Output from a
    passing test is never shown, and `-s` is not always on; nor does a pytest-xdist worker's
    output reach the terminal. So the lines ride in the test's report (`user_properties`, which
    xdist sends to its controller), and `ReportSections` writes them after the run."""

    def add(title: str, lines: list[str]) -> None:
        request.node.user_properties.append((REPORT_PROPERTY, (title, list(lines))))

    return add


class ReportSections:
    """Gathers the `terminal_report` sections from the reports of the process that prints the
    summary (pytest-xdist's controller, or the only process), and prints them."""

    def __init__(self) -> None:
        self.sections: dict[str, list[str]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":  # the last report of a test carries all it added
            return
        for key, value in report.user_properties:
            if key == REPORT_PROPERTY:
                title, lines = value
                self.sections.setdefault(title, []).extend(lines)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for title, lines in self.sections.items():
            terminalreporter.write_sep("=", title)
            for line in lines:
                # A margin on every line: the conformance suite's own "Total: N passed, N failed"
                # would otherwise read, to a CI log scanner, like this run's closing line.
                terminalreporter.write_line(f"  | {line}")
