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

from .cli import run_and_judge
from .results import REQUIREMENTS

#: The command the CLI runs, with the mock server's URL appended, from the repository root;
#: `run` starts this interpreter for the scenarios the client takes part in.
CLIENT = f"PYTHON={shlex.quote(sys.executable)} sh mcpref/examples/conformance_client/run"


@pytest.mark.parametrize("requirements", REQUIREMENTS)
def test_conformance_client_matches_the_expected_failures(  # type: ignore[no-untyped-def]
    requirements: str, tmp_path: Path, terminal_report
) -> None:
    run_and_judge("client", ["--command", CLIENT], requirements, tmp_path, terminal_report)
