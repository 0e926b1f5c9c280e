"""The commands a contributor to the pages runs: they work on a machine with no Node, and say
clearly what they take."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Where scripts/_setup records the hash of the pyproject.toml it installed.
STAMP = ".pyproject.sha256"


def test_a_docs_only_run_needs_no_node(tmp_path: Path) -> None:
    """scripts/test on a machine where Node 22 cannot be installed (here: a uname that says macOS
    on arm64, and an npm that fails) still runs what it was asked to, when no conformance test is
    selected. Node is installed by the conformance tests themselves, only when they run."""
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copytree(ROOT / "scripts", clone / "scripts")
    shutil.copy(ROOT / "pyproject.toml", clone / "pyproject.toml")
    # The same environment, so _setup sees it up to date, except that ruff and mypy pass at once:
    # the suite runs both on the real tree already, and here they only cost time (mypy, from a cold
    # cache: 3 to 9 s) without telling anything about Node.
    venv = clone / ".venv"
    (venv / "bin").mkdir(parents=True)
    for entry in (ROOT / ".venv").iterdir():
        if entry.name not in ("bin", STAMP):
            (venv / entry.name).symlink_to(entry)
    # Its own stamp, of the copied pyproject: were the real one stale (main merged, no _setup run
    # since), _setup would `pip install -e` the temporary clone into the real environment.
    (venv / STAMP).write_text(hashlib.sha256((clone / "pyproject.toml").read_bytes()).hexdigest() + "\n")
    for program in (ROOT / ".venv" / "bin").iterdir():
        (venv / "bin" / program.name).symlink_to(program)
    for checker in ("ruff", "mypy"):
        (venv / "bin" / checker).unlink()
        (venv / "bin" / checker).write_text("#!/bin/sh\nexit 0\n")
        (venv / "bin" / checker).chmod(0o755)
    fake = tmp_path / "bin"
    fake.mkdir()
    for name, script in [
        ("uname", 'case "$1" in -s) echo Darwin ;; -m) echo arm64 ;; *) echo Darwin ;; esac'),
        ("npm", "echo 'npm: no network here' >&2; exit 1"),
        ("node", "echo 'node: not installed' >&2; exit 127"),
        ("id", "echo 1000"),  # not root: scripts/_system_setup installs nothing from inside a test
    ]:
        (fake / name).write_text(f"#!/bin/sh\n{script}\n")
        (fake / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(
        ["bash", str(clone / "scripts" / "test"), "--version"], cwd=clone, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert "pytest" in run.stdout + run.stderr
    assert not (clone / ".tools").exists()


def test_docs_script_usage_on_a_bad_argument() -> None:
    run = subprocess.run(["bash", str(ROOT / "scripts" / "docs"), "--bogus"], capture_output=True, text=True)
    assert run.returncode == 2
    assert "unknown argument '--bogus'" in run.stderr
    assert "./scripts/docs test [args]" in run.stderr and "--update-frames" in run.stderr
    assert "./scripts/docs build [args]" in run.stderr
    assert "set -euo" not in run.stderr and "#" not in run.stderr
    helped = subprocess.run(["bash", str(ROOT / "scripts" / "docs"), "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and helped.stdout == run.stderr.split("\n", 1)[1]


def test_docs_build_is_the_strict_build_of_the_suite(tmp_path: Path) -> None:
    """`./scripts/docs build` did not exist, though contributors were told to run it. Here it builds
    a one-page site with a broken link: strict, as the suite's build is, so the build fails on it."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [the missing page](missing.md).\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: build test\ntheme: mkdocs\n")
    site = tmp_path / "site"
    command = ["bash", str(ROOT / "scripts" / "docs"), "build", "--config-file", str(config), "--site-dir", str(site)]
    broken = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert broken.returncode == 1 and "missing.md" in broken.stderr, broken.stderr
    (tmp_path / "docs" / "missing.md").write_text("# Found\n")
    built = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    assert "Found" in (site / "missing" / "index.html").read_text()


def test_the_files_contributors_look_for_exist_and_agree() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "docs/contributing.md" in (ROOT / "CONTRIBUTING.md").read_text()
    assert (ROOT / "CHANGELOG.md").read_text().startswith("# Changelog")
    assert (ROOT / ".github" / "pull_request_template.md").exists()
    assert list((ROOT / ".github" / "ISSUE_TEMPLATE").glob("*.md"))
    # The project refers only to files it contains: nothing outside the clone.
    for page in [ROOT / "CONTRIBUTING.md", ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        assert "../shared/" not in page.read_text(encoding="utf-8"), page


def test_record_says_how_to_use_it() -> None:
    run = subprocess.run(["bash", str(ROOT / "scripts" / "record"), "--help"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "--upstream" in run.stdout and "--out" in run.stdout and "127.0.0.1:8002/mcp" in run.stdout


def test_the_readme_commands_run_in_the_environment_it_names() -> None:
    """The README's table of other ways to run the examples lists bare `uvicorn ...` and
    `python -m ...` commands: they exist only in `.venv`, which a newcomer never activated
    unless the README says so (copied as written, `uvicorn` was "command not found")."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [
        line.split("`")[1] for line in readme.splitlines() if line.startswith("| `") and not line.startswith("| `./")
    ]
    programs = {command.split()[0] for command in commands if command.split()[0] in {"uvicorn", "python"}}
    assert programs == {"uvicorn", "python"}, commands
    assert "source .venv/bin/activate" in readme
    for program in programs:
        assert (ROOT / ".venv" / "bin" / program).exists(), program


def test_the_readme_and_the_contributors_page_give_the_same_suite_time() -> None:
    """One measured claim of how long `./scripts/test` takes, said the same way in both places
    (they once said four and a half minutes with one in the browser, and five and a half with two)."""
    claim = re.compile(r"takes\s+about\s+([a-z\s-]+?)\s+minutes\s+on\s+2\s+cores")
    readme = claim.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    page = claim.findall((ROOT / "docs" / "contributing.md").read_text(encoding="utf-8"))
    assert len(readme) == len(page) == 1, (readme, page)
    assert " ".join(readme[0].split()) == " ".join(page[0].split())
