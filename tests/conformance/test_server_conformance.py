"""The official MCP conformance suite against the everything server, under a real uvicorn.

`conformance server --requirements R` runs every server scenario of the frozen requirement
set R (scored and not scored) against `mcpref.examples.everything_server:app` served on a free
loopback port, once for each revision the server speaks:

- `2026-07-28`: the stateless wire, per-request `_meta`;
- `2025-11-25`: a legacy client (`initialize`, sessions), which the server serves statelessly
  (`mcpref.legacy`): what needs a session is listed, with the reason, in its file.

Each run must match the `server:` entries of `expected-failures-R.yaml` exactly: no failure
that the file does not list, and no entry that has started to pass (see `results.py` for the
rules, and README.md for why they are checked here too).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpref.examples.everything_server import app
from tests.conftest import running

from .cli import run_and_judge
from .results import REQUIREMENTS


@pytest.mark.parametrize("requirements", REQUIREMENTS)
def test_everything_server_matches_the_expected_failures(  # type: ignore[no-untyped-def]
    requirements: str, tmp_path: Path, terminal_report
) -> None:
    with running(app) as base_url:
        run_and_judge("server", ["--url", f"{base_url}/mcp"], requirements, tmp_path, terminal_report)
