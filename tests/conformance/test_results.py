"""The rules that judge a conformance run against the expected-failures file (results.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mcpref.examples.conformance_client import DONE

from . import slots
from .cli import loaded_machine
from .results import (
    CLIENT_DONE,
    REQUIREMENTS,
    SIDES,
    dropped_connections,
    expected_failures,
    judge,
    load_baseline,
    load_checks,
)
from .slots import take_slot

RUN = {
    "tools-list": {"tools-list": "SUCCESS", "tools-name-format": "SUCCESS"},
    "caching": {"sep-2549-ttl-non-negative": "FAILURE", "wire-schema-valid": "SUCCESS"},
    "server-stateless": {"ack": "SKIPPED", "tools-list-changed": "WARNING", "discover": "SUCCESS"},
}


def test_a_run_matching_its_baseline_is_ok() -> None:
    verdict = judge(RUN, ["caching:sep-2549-ttl-non-negative", "server-stateless:tools-list-changed"])
    assert verdict.ok
    assert verdict.expected == ["caching:sep-2549-ttl-non-negative", "server-stateless:tools-list-changed"]


def test_an_unlisted_failure_or_warning_is_unexpected() -> None:
    verdict = judge(RUN, [])
    assert verdict.unexpected == [
        "caching:sep-2549-ttl-non-negative (FAILURE)",
        "server-stateless:tools-list-changed (WARNING)",
    ]
    assert not verdict.ok


def test_a_check_entry_allows_only_that_check() -> None:
    verdict = judge(RUN, ["caching:wire-schema-valid", "server-stateless:tools-list-changed"])
    assert verdict.unexpected == ["caching:sep-2549-ttl-non-negative (FAILURE)"]


def test_entries_that_pass_now_are_stale() -> None:
    baseline = ["tools-list:tools-list", "caching:sep-2549-ttl-non-negative", "caching:wire-schema-valid"]
    verdict = judge(RUN, [*baseline, "server-stateless:tools-list-changed"])
    assert verdict.stale == ["tools-list:tools-list", "caching:wire-schema-valid"]
    assert not verdict.ok


def test_a_skipped_or_absent_check_entry_is_kept_as_the_cli_keeps_it() -> None:
    kept = ["server-stateless:ack", "server-stateless:not-emitted"]
    baseline = ["caching:sep-2549-ttl-non-negative", "server-stateless:tools-list-changed", *kept]
    verdict = judge(RUN, baseline)
    assert verdict.ok


def test_an_entry_for_a_scenario_that_did_not_run_is_unknown() -> None:
    baseline = ["caching:sep-2549-ttl-non-negative", "server-stateless:tools-list-changed", "tools-lsit:tools-list"]
    verdict = judge(RUN, baseline)
    assert verdict.unknown == ["tools-lsit:tools-list"]
    assert not verdict.ok


def test_load_checks_keeps_the_most_severe_status_of_a_repeated_check(tmp_path: Path) -> None:
    folder = tmp_path / "server-server-stateless-2026-11-29T14-18-50-057Z"
    folder.mkdir()
    checks = [
        {"id": "meta-400", "status": "SUCCESS"},
        {"id": "meta-400", "status": "FAILURE"},
        {"id": "meta-400", "status": "SUCCESS"},
        {"id": "ack", "status": "SKIPPED"},
    ]
    (folder / "checks.json").write_text(json.dumps(checks))
    assert load_checks(tmp_path) == {"server-stateless": {"meta-400": "FAILURE", "ack": "SKIPPED"}}


def test_load_checks_reads_client_folders_and_whether_the_client_ran_to_its_end(tmp_path: Path) -> None:
    stamp = "2026-11-29T15-19-58-683Z"
    for folder, stdout in [
        (f"tools_call-{stamp}", f"listed\n{DONE}\n"),
        (f"auth/metadata-default-{stamp}", ""),  # the client exited early
        (f"http-standard-headers-{stamp}", f"{DONE}\nTraceback ...\n"),  # DONE must be the last line
    ]:
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "checks.json").write_text(json.dumps([{"id": "a-check", "status": "SUCCESS"}]))
        (tmp_path / folder / "stdout.txt").write_text(stdout)
    assert load_checks(tmp_path, "client") == {
        "tools_call": {"a-check": "SUCCESS", CLIENT_DONE: "SUCCESS"},
        "auth/metadata-default": {"a-check": "SUCCESS", CLIENT_DONE: "FAILURE"},
        "http-standard-headers": {"a-check": "SUCCESS", CLIENT_DONE: "FAILURE"},
    }


def test_load_baseline_reads_one_side(tmp_path: Path) -> None:
    path = tmp_path / "baseline.yaml"
    path.write_text(
        "server:\n  - caching:ttl\nclient:\n  - auth/dpop:dpop-proof\n  - sse-retry:client-ran-to-completion\n"
    )
    assert load_baseline(path, "server") == ["caching:ttl"]
    assert load_baseline(path, "client") == ["auth/dpop:dpop-proof", "sse-retry:client-ran-to-completion"]


@pytest.mark.parametrize(
    "text",
    [
        "server:\n  - caching\n",  # a whole scenario: any new failure inside it would pass unseen
        "server:\n  - caching:ttl\n  - caching:ttl\n",
        "server: caching:ttl\n",
    ],
)
def test_load_baseline_refuses_ambiguous_files(tmp_path: Path, text: str) -> None:
    path = tmp_path / "baseline.yaml"
    path.write_text(text)
    with pytest.raises(ValueError):
        load_baseline(path)


@pytest.mark.parametrize("requirements", REQUIREMENTS)
def test_the_real_baseline_files_load(requirements: str) -> None:
    # They may become empty one day (`server: []`), but never malformed.
    path = expected_failures(requirements)
    entries = [entry for side in SIDES for entry in load_baseline(path, side)]
    assert all(re.fullmatch(r"[a-z0-9_/-]+:[a-z0-9-]+", entry) for entry in entries), entries
    # Every entry says why it may fail, in a comment on its own line.
    listed = [line for line in path.read_text().splitlines() if line.lstrip().startswith("- ")]
    assert len(listed) == len(entries) and all(" # " in line for line in listed), listed


def test_a_new_failure_inside_a_listed_scenario_is_unexpected() -> None:
    run = {**RUN, "caching": {**RUN["caching"], "sep-2549-scope": "FAILURE"}}
    verdict = judge(run, ["caching:sep-2549-ttl-non-negative", "server-stateless:tools-list-changed"])
    assert verdict.unexpected == ["caching:sep-2549-scope (FAILURE)"]
    # A whole-scenario entry, as the CLI would take it, allows nothing here: it cannot hide it.
    verdict = judge(run, ["caching", "server-stateless:tools-list-changed"])
    assert "caching:sep-2549-scope (FAILURE)" in verdict.unexpected and not verdict.ok


def test_a_scenario_that_checked_nothing_fails() -> None:
    run = {**RUN, "tasks-status": {"status-notification": "SKIPPED", "note": "INFO"}, "empty": {}}
    verdict = judge(run, ["caching:sep-2549-ttl-non-negative", "server-stateless:tools-list-changed"])
    assert verdict.unexpected == [
        "tasks-status:status-notification (SKIPPED, and nothing in the scenario was checked)",
        "tasks-status:note (INFO, and nothing in the scenario was checked)",
        "empty:no-checks-emitted (the scenario emitted no check)",
    ]
    # Listing what it skipped allows it, with the reason next to the entry, like any failure.
    allowed = ["tasks-status:status-notification", "tasks-status:note", "empty:no-checks-emitted"]
    baseline = ["caching:sep-2549-ttl-non-negative", "server-stateless:tools-list-changed", *allowed]
    assert judge(run, baseline).ok
    # On the client side the added ran-to-completion check does not count as checking anything.
    client = {"sse-retry": {"reconnect": "SKIPPED", CLIENT_DONE: "SUCCESS"}}
    assert judge(client, []).unexpected == ["sse-retry:reconnect (SKIPPED, and nothing in the scenario was checked)"]


def test_a_scenario_that_lost_its_connection_is_named_with_the_file_that_says_so(tmp_path: Path) -> None:
    """A failure on a loaded machine says so: the CLI's mock server dropped the connection."""
    for scenario, stderr in [
        ("tools_call", "Traceback (most recent call last):\nhttpx.ReadError: ReadError('')\n"),
        ("request-metadata", "AssertionError: the server sent no version header\n"),
        ("initialize", "httpx.ConnectError: [Errno 111] Connection refused\n"),
    ]:
        folder = tmp_path / f"{scenario}-2026-11-29T14-18-50-057Z"
        folder.mkdir()
        (folder / "checks.json").write_text(json.dumps([{"id": "a-check", "status": "FAILURE"}]))
        (folder / "stderr.txt").write_text(stderr)
    found = dropped_connections(tmp_path, "client", {"tools_call", "request-metadata"})
    stderr = tmp_path / "tools_call-2026-11-29T14-18-50-057Z" / "stderr.txt"
    assert found == [f"tools_call: {stderr} holds \"ReadError: ReadError('')\""]
    message = loaded_machine(tmp_path, "client", {"tools_call"})
    assert "A symptom of a loaded machine" in message and f"on {os.cpu_count()} cores" in message
    assert found[0] in message
    assert loaded_machine(tmp_path, "client", {"request-metadata"}) == ""


def test_a_client_takes_a_free_slot_keeps_it_while_it_runs_and_gives_it_back(tmp_path: Path) -> None:
    held = take_slot(str(tmp_path), 2)
    probe = (
        "import fcntl, os, sys\n"
        "for index in range(2):\n"
        "    fd = os.open(os.path.join(sys.argv[1], f'slot-{index}'), os.O_RDWR)\n"
        "    try:\n"
        "        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "        print(index, 'free')\n"
        "    except BlockingIOError:\n"
        "        print(index, 'busy')\n"
    )
    wrapper = str(Path(slots.__file__))
    command = [sys.executable, "-S", wrapper, str(tmp_path), "2", sys.executable, "-c", probe, str(tmp_path)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60)
    # Slot 0 is the test's; the client took slot 1 and still holds it while its command runs.
    assert ran.stdout.split("\n")[:2] == ["0 busy", "1 busy"], ran.stdout + ran.stderr
    # It gave slot 1 back when it exited; with both taken, a waiting client gets the one freed.
    again = take_slot(str(tmp_path), 2)
    waiting: list[int] = []
    thread = threading.Thread(target=lambda: waiting.append(take_slot(str(tmp_path), 2)))
    thread.start()
    os.close(held)
    thread.join(timeout=30)
    assert waiting, "no slot after one was freed"
    os.close(again)
    os.close(waiting[0])
