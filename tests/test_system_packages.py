"""What the suite needs from the system (scripts/system-packages): `./scripts/test` installs it as
root with apt-get (scripts/_system_setup), and otherwise ends by naming each part that skipped
with the one command that brings it (tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT, SystemPart, skipped_parts, system_parts

LISTED = """# a comment
tests/browser   no-such-browser-here                 chromium fonts-liberation
tests/tasks     /no/such/dir/*/initdb,no-such-initdb postgresql
tests/fine      sh                                   dash
"""


def setup_run(tmp_path: Path, *arguments: str, uid: int = 0) -> str:
    """`source scripts/_system_setup ARGUMENTS` in a copy of the repo's layout with LISTED as its
    list, with stand-ins for `id` (the uid) and `apt-get` (which logs its arguments): the log."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    for folder in ("tests/browser", "tests/tasks", "tests/fine", "tests/other"):
        (root / folder).mkdir(parents=True)
    (root / "tests/tasks/test_x.py").write_text("")
    shutil.copy(ROOT / "scripts" / "_system_setup", root / "scripts")
    (root / "scripts" / "system-packages").write_text(LISTED, encoding="utf-8")
    bin_dir, log = tmp_path / "bin", tmp_path / "apt.log"
    bin_dir.mkdir()
    for name, body in {"id": f"echo {uid}", "apt-get": f'echo "$*" >> {log}'}.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    script = f'set -euo pipefail; ROOT="{root}"; cd "$ROOT"; source scripts/_system_setup "$@"'
    subprocess.run(["bash", "-c", script, "setup", *arguments], env=env, check=True, capture_output=True)
    return log.read_text() if log.exists() else ""


def test_as_root_the_missing_packages_of_the_selected_parts_are_installed(tmp_path: Path) -> None:
    everything = "update -qq\ninstall -y -qq --no-install-recommends chromium fonts-liberation postgresql\n"
    assert setup_run(tmp_path / "all") == everything
    assert setup_run(tmp_path / "tests", "tests", "-x") == everything
    assert setup_run(tmp_path / "one", "tests/tasks/test_x.py::a").endswith("no-install-recommends postgresql\n")
    assert setup_run(tmp_path / "browser", "tests/browser", "-q").endswith("chromium fonts-liberation\n")
    assert setup_run(tmp_path / "other", "tests/other") == ""
    assert setup_run(tmp_path / "installed", "tests/fine") == ""


def test_without_root_nothing_is_installed(tmp_path: Path) -> None:
    assert setup_run(tmp_path, uid=1000) == ""


def test_a_part_that_skipped_is_named_with_the_command_that_brings_it() -> None:
    missing = SystemPart("tests/browser", ("no-such-browser-here",), ("chromium", "fonts-liberation"))
    installed = SystemPart("tests/fine", ("sh",), ("dash",))
    skipped = ["tests/browser/test_site.py::test_a", "tests/browser/test_site.py::test_b", "tests/fine/test_c.py::t"]
    assert skipped_parts(skipped, [missing, installed]) == [
        "tests/browser: 2 skipped, no-such-browser-here not found; to run them: "
        "sudo apt-get install -y --no-install-recommends chromium fonts-liberation"
    ]
    assert skipped_parts(["tests/other/test_d.py::t"], [missing]) == []


def test_the_list_names_real_test_folders() -> None:
    parts = system_parts()
    assert {part.tests for part in parts} >= {"tests/browser", "tests/tasks"}
    assert all((ROOT / part.tests).is_dir() and part.packages for part in parts)
