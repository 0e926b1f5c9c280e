"""Print the conformance suite's scenario table in pytest's terminal summary.

Output captured from a passing test is never shown, and `-s` is not always on. Anything
handed to the `terminal_report` fixture is written after the run by the terminal reporter
itself, so a CI log shows the table whatever the capture settings.
"""

from __future__ import annotations

import pytest

REPORT = pytest.StashKey[list[tuple[str, list[str]]]]()


@pytest.fixture
def terminal_report(request: pytest.FixtureRequest):
    """Call with a title and lines; they appear in the terminal summary under that title."""
    sections = request.config.stash.setdefault(REPORT, [])

    def add(title: str, lines: list[str]) -> None:
        sections.append((title, lines))

    return add


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # type: ignore[no-untyped-def]
    for title, lines in config.stash.get(REPORT, []):
        terminalreporter.write_sep("=", title)
        for line in lines:
            # A margin on every line: the suite's own "Total: N passed, N failed" would otherwise
            # read, to a CI log scanner, like this test run's closing line, expected failures included.
            terminalreporter.write_line(f"  | {line}")
