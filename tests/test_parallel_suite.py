"""What the suite shares between its parallel workers (pytest-xdist; tests/parallel.py): work done
once for the run (`Once`: the site build, the browser survey) and the sections a test hands to
`terminal_report`, which must reach the end of the output from any worker."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.parallel import Once

ROOT = Path(__file__).resolve().parents[1]

#: A process that claims `Once(FOLDER, "work")`, says so, and leaves the line it is sent as the result.
HOLDER = """
import sys
from pathlib import Path
from tests.parallel import Once
once = Once(Path(sys.argv[1]), "work")
print("claimed" if once.claim() else "not claimed", flush=True)
once.done(sys.stdin.readline().strip())
"""


@contextmanager
def holder(folder: Path) -> Iterator[subprocess.Popen[str]]:
    """A process that has claimed the work, and waits for its result on stdin."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None and process.stdin is not None
        assert process.stdout.readline() == "claimed\n"
        yield process


def test_work_one_process_claimed_is_waited_for_and_read_by_the_others(tmp_path: Path) -> None:
    with holder(tmp_path) as process:
        claimed_and_waited(process, tmp_path)
    assert not Once(tmp_path, "work").claim(), "done work is never claimed again"
    assert Once(tmp_path, "work").wait() == "the site"


def claimed_and_waited(process: subprocess.Popen[str], tmp_path: Path) -> None:
    assert not Once(tmp_path, "work").claim(), "held by the other process"
    results: list[str] = []
    waiter = threading.Thread(target=lambda: results.append(Once(tmp_path, "work").wait()))
    waiter.start()
    waiter.join(0.5)
    assert waiter.is_alive() and results == [], "a waiter waits while the work is being done"
    assert process.stdin is not None
    process.stdin.write("the site\n")
    process.stdin.close()
    assert process.wait(30) == 0
    waiter.join(30)
    assert results == ["the site"]


def test_a_worker_that_died_mid_work_leaves_its_waiters_an_error_not_a_hang(tmp_path: Path) -> None:
    with holder(tmp_path) as process:
        process.kill()
        process.wait(30)
    with pytest.raises(RuntimeError, match="stopped before it was done"):
        Once(tmp_path, "work").wait()


def test_sections_from_every_worker_end_the_output_under_their_title(tmp_path: Path) -> None:
    """Run in two workers, each test's lines reach the controller's summary, joined by title."""
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent("""
            from tests.parallel import ReportSections, terminal_report

            def pytest_configure(config):
                config.pluginmanager.register(ReportSections())
        """)
    )
    for name in ("a", "b"):
        (tmp_path / f"test_{name}.py").write_text(
            textwrap.dedent(f"""
                import os

                def test_{name}(terminal_report):
                    terminal_report("the section", [f"from {name} in {{os.environ['PYTEST_XDIST_WORKER']}}"])
            """)
        )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "xdist", "-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        # xdist alone: the other plugins installed here (hypothesis, ...) cost seconds in each process.
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 workers [2 items]" in run.stdout, run.stdout
    section = run.stdout.split(" the section ", 1)[1].splitlines()[1:3]
    assert sorted(line.split(" in gw")[0] for line in section) == ["  | from a", "  | from b"], run.stdout
