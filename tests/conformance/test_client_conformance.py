"""The official MCP conformance suite against our client, through mcpref/examples/conformance_client.

`conformance client --requirements R` starts a mock server for each client scenario of the
frozen requirement set R (scored and not scored) and runs the conformance client against it
(mcpref/examples/conformance_client/run), a real Python process driving `mcpref.client.Client` over
loopback HTTP:

- `2026-07-28`: the stateless wire; the client probes with `server/discover` and stays modern;
- `2025-11-25`: legacy mock servers; the client probes, falls back to `initialize`, and runs
  what a legacy client can.

Each run must match the `client:` entries of `expected-failures-R.yaml` exactly, with one
check more than the suite's own: the client ran each scenario to its end (`results.py`).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from .cli import client_slots, run_and_judge
from .results import REQUIREMENTS

#: The CLI's time for one client scenario, from its start: a client waits for a slot first.
TIMEOUT_MS = 120_000


def client_command(slots: Path, count: int) -> str:
    """The command the CLI runs, with the mock server's URL appended, from the repository root:
    `run` (which starts this interpreter for the scenarios the client takes part in), once one of
    `count` slots is free (slots.py)."""
    slots.mkdir(exist_ok=True)
    python, wrapper = shlex.quote(sys.executable), shlex.quote(str(Path(__file__).with_name("slots.py")))
    run = "sh mcpref/examples/conformance_client/run"
    return f"PYTHON={python} {python} -S {wrapper} {shlex.quote(str(slots))} {count} {run}"


@pytest.mark.parametrize("requirements", REQUIREMENTS)
def test_conformance_client_matches_the_expected_failures(  # type: ignore[no-untyped-def]
    requirements: str, tmp_path: Path, terminal_report
) -> None:
    command = client_command(tmp_path / "slots", client_slots())
    target = ["--command", command, "--timeout", str(TIMEOUT_MS)]
    run_and_judge("client", target, requirements, tmp_path, terminal_report)
