"""`scripts/mutate`'s choice of test files (`LIST=1` prints it without running mutmut)."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def chosen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "scripts" / "mutate"), *args],
        cwd=ROOT,
        env={**os.environ, "LIST": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("module", "mirrored"),
    [
        ("mcpref/headers.py", "tests/test_headers.py"),
        ("mcpref/_codec.py", "tests/test_codec.py"),
        ("mcpref/transports/sse.py", "tests/transports/test_sse.py"),
        ("mcpref/client/_client.py", "tests/client/test_client.py"),
    ],
)
def test_a_module_is_run_against_its_mirrored_test_file(module: str, mirrored: str) -> None:
    run = chosen(module)
    assert (run.returncode, run.stdout.splitlines()) == (0, [mirrored]), run.stderr


def test_a_test_file_of_another_package_is_never_chosen() -> None:
    # tests/test_auth.py tests the server's mcpref/auth.py; mcpref/client/_auth.py has no mirror.
    run = chosen("mcpref/client/_auth.py")
    assert run.returncode == 2
    assert "no tests/client/test_auth.py; name the test files" in run.stderr
    named = chosen("mcpref/client/_auth.py", "tests/client/test_auth_flow.py")
    assert named.stdout.splitlines() == ["tests/client/test_auth_flow.py"]


def test_named_files_follow_the_mirror_once_each_and_must_exist() -> None:
    run = chosen("mcpref/meta.py", "tests/test_meta_keys.py", "tests/test_meta.py")
    assert run.stdout.splitlines() == ["tests/test_meta.py", "tests/test_meta_keys.py"]
    missing = chosen("mcpref/meta.py", "tests/test_no_such_file.py")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "scripts/mutate: no such test file: tests/test_no_such_file.py"
