"""`scripts/load` with tiny numbers, so the load run cannot rot between the times someone runs it."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import ROOT


def test_scripts_load_runs_clean_with_tiny_numbers() -> None:
    finished = subprocess.run(
        [
            str(ROOT / "scripts" / "load"),
            "--requests",
            "40",
            "--concurrency",
            "4",
            "--listeners",
            "5",
            "--seconds",
            "20",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "requests: 41" in finished.stdout  # 40 echo calls and the touch that notifies listeners
    assert "errors: 0" in finished.stdout
    assert "listen streams: 5 (acknowledged 5, notified 5)" in finished.stdout
    peak = re.search(r"server peak RSS: ([\d.]+) MiB", finished.stdout)
    assert peak and float(peak.group(1)) > 0, finished.stdout
