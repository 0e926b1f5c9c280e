"""The GitHub workflows (.github/workflows/), checked with actionlint, and each doing its job (issue
22): the suite through .ci/run on every push and pull request, the strict site build deployed to
GitHub Pages, a release published by trusted publishing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"


def workflow(name: str) -> dict:
    # BaseLoader: `on:` stays the key "on" (YAML 1.1 would read it as True).
    return yaml.load((WORKFLOWS / name).read_text(encoding="utf-8"), Loader=yaml.BaseLoader)


def steps(job: dict) -> str:
    return "\n".join(f"{step.get('uses', '')} {step.get('run', '')}" for step in job["steps"])


def test_every_workflow_passes_actionlint() -> None:
    actionlint = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
    assert actionlint, "actionlint is in the dev extra (pyproject.toml)"
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert [f.name for f in files] == ["release.yml", "site.yml", "tests.yml"]
    checked = subprocess.run([actionlint, "-color=false", *map(str, files)], cwd=ROOT, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_actionlint_finds_a_broken_workflow(tmp_path: Path) -> None:
    """The check can fail: an unknown runner label and an undefined step output."""
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latset\n    steps:\n      - run: echo ${{ steps.x.outputs.y }}\n"
    )
    actionlint = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
    assert actionlint
    checked = subprocess.run([actionlint, "-color=false", str(broken)], capture_output=True, text=True)
    assert checked.returncode == 1 and "ubuntu-latset" in checked.stdout, checked.stdout


def test_the_suite_runs_on_every_push_and_pull_request_through_ci_run() -> None:
    tests = workflow("tests.yml")
    assert set(tests["on"]) == {"push", "pull_request"}
    (job,) = tests["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest" and job["container"]["image"].startswith("debian:")
    assert "bash .ci/run" in steps(job) and job["env"]["CI"] == "true"


def test_the_site_is_built_strictly_and_deployed_to_github_pages() -> None:
    site = workflow("site.yml")
    assert site["on"]["push"]["branches"] == ["main"]
    assert "mkdocs build --strict" in steps(site["jobs"]["build"])
    assert "actions/upload-pages-artifact" in steps(site["jobs"]["build"])
    deploy = site["jobs"]["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert "actions/deploy-pages" in steps(deploy)


def test_a_release_publishes_the_sdist_and_wheel_by_trusted_publishing() -> None:
    release = workflow("release.yml")
    assert release["on"]["push"]["tags"] == ["v*"]
    assert "python3 -m build" in steps(release["jobs"]["build"])
    publish = release["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"} and publish["environment"]["name"] == "pypi"
    assert "pypa/gh-action-pypi-publish" in steps(publish)
    assert "password" not in (WORKFLOWS / "release.yml").read_text()  # no stored token
