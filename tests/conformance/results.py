"""Reading a `conformance server|client -o DIR` run and judging it against the expected-failures file.

The CLI's own `--expected-failures` mode judges only the *scored* scenarios of a requirement
set: it neither fails on a `not_scored` scenario (tasks-*, json-schema-2020-12, the two
header-validation ones, the OAuth extensions) nor calls a baselined one stale when it passes.
So the same rules are applied here, to every scenario that ran:

- a check has *failed* when its status is FAILURE or WARNING (as in the CLI's baseline mode);
  SUCCESS, SKIPPED and INFO are fine, except in a scenario where nothing was checked: when no
  check of a scenario passed or failed (all SKIPPED or INFO, or none emitted), every one of its
  checks counts as failed, since a scenario that only skips has proved nothing;
- every entry names the check it allows, `scenario:check-id`. The CLI also accepts a bare
  `scenario`, allowing any check of it to fail; that would let a new failure inside a listed
  scenario pass unseen, so such entries are refused here: list the failing checks one by one;
- a failed check that no entry allows is *unexpected*;
- an entry is *stale* when what it allows has stopped failing: the scenario has no failed
  check, or the named check has passed (SUCCESS); an entry whose check was skipped or not
  emitted is kept, as the CLI keeps it;
- an entry naming a scenario that did not run is *unknown* (a typo, or a scenario renamed).

One file per requirement set holds both sides, as the CLI's format does: `server:` for the
everything server, `client:` for the conformance client (mcpref/examples/conformance_client).

On the client side one more check is added to every scenario, `client-ran-to-completion`: the
CLI ignores the client's exit status when it runs a requirement set, so a client that crashed
after the checks it was judged on would pass. The conformance client prints `DONE` as its last
line once a scenario has run to its end; the check reads it from the scenario's `stdout.txt`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mcpref.examples.conformance_client import DONE

#: The requirement sets the suite ships, each run against the everything server and the client.
REQUIREMENTS = ("2026-07-28", "2025-11-25")
#: The two legs of the suite: `conformance server` and `conformance client`.
SIDES = ("server", "client")
#: The check `load_checks` adds to each client scenario (see the module docstring).
CLIENT_DONE = "client-ran-to-completion"


def expected_failures(requirements: str) -> Path:
    """The expected-failures file for one requirement set, next to this module."""
    return Path(__file__).with_name(f"expected-failures-{requirements}.yaml")


FAILED = frozenset({"FAILURE", "WARNING"})
#: Most severe first, for a check id that a scenario emits more than once.
SEVERITY = ("FAILURE", "WARNING", "SUCCESS", "INFO", "SKIPPED")
#: Result folders: `server-<scenario>-<timestamp>` for the server side; `<scenario>-<timestamp>`
#: for the client side, where `auth/<name>` scenarios sit in an `auth` folder. The timestamp is
#: ISO 8601 with ':' and '.' replaced by '-'.
TIMESTAMP = r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z"
RESULT_DIR = {
    "server": re.compile(rf"server-(?P<scenario>.+){TIMESTAMP}"),
    "client": re.compile(rf"(?P<scenario>.+){TIMESTAMP}"),
}


def load_checks(output_dir: Path, side: str = "server") -> dict[str, dict[str, str]]:
    """Status by check id, by scenario, from the `checks.json` files of one run."""
    scenarios: dict[str, dict[str, str]] = {}
    for path in sorted(output_dir.rglob("checks.json")):
        folder = path.parent.relative_to(output_dir).as_posix()
        found = RESULT_DIR[side].fullmatch(folder)
        if found is None:
            raise ValueError(f"unexpected result folder {folder!r}")
        statuses: dict[str, str] = {}
        for check in json.loads(path.read_text()):
            earlier = statuses.get(check["id"])
            if earlier is None or SEVERITY.index(check["status"]) < SEVERITY.index(earlier):
                statuses[check["id"]] = check["status"]
        if side == "client":
            stdout = path.with_name("stdout.txt")
            lines = stdout.read_text().splitlines() if stdout.exists() else []
            statuses[CLIENT_DONE] = "SUCCESS" if lines[-1:] == [DONE] else "FAILURE"
        scenarios[found["scenario"]] = statuses
    return scenarios


#: A broken connection to the CLI's mock server, as the client logs it (httpx's exceptions) or a
#: check reports it (Node's): what a mock server starved of CPU does, not a rule the client broke.
DROPPED = re.compile(
    r"\b(?:ReadError|WriteError|ConnectError|RemoteProtocolError|ReadTimeout|WriteTimeout|ConnectTimeout"
    r"|PoolTimeout|ECONNRESET|ECONNREFUSED|socket hang up)\b[^\n]{0,160}"
)


def dropped_connections(output_dir: Path, side: str, scenarios: set[str]) -> list[str]:
    """For each of `scenarios` whose stderr (or checks) shows a dropped connection: the file and
    the line, so that a failure on a loaded machine says so instead of only naming checks."""
    found = []
    for path in sorted(output_dir.rglob("checks.json")):
        named = RESULT_DIR[side].fullmatch(path.parent.relative_to(output_dir).as_posix())
        if named is None or named["scenario"] not in scenarios:
            continue
        for file in (path.with_name("stderr.txt"), path):
            text = file.read_text(errors="replace") if file.exists() else ""
            if hit := DROPPED.search(text):
                found.append(f"{named['scenario']}: {file} holds {hit[0].strip()!r}")
                break
    return found


def load_baseline(path: Path, side: str = "server") -> list[str]:
    """The `server:` or `client:` entries of an expected-failures file, in the CLI's format."""
    document: Any = yaml.safe_load(path.read_text()) or {}
    entries = document.get(side) or []
    if not isinstance(entries, list) or not all(isinstance(entry, str) for entry in entries):
        raise ValueError(f"{path}: `{side}` must be a list of scenario or scenario:check-id strings")
    if len(set(entries)) != len(entries):
        raise ValueError(f"{path}: an entry is listed twice")
    whole = sorted(entry for entry in entries if ":" not in entry)
    if whole:
        raise ValueError(
            f"{path}: an entry names the check it allows (scenario:check-id); a whole scenario would let a new "
            f"failure inside it pass unseen: {whole}"
        )
    return entries


@dataclass
class Verdict:
    unexpected: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.unexpected or self.stale or self.unknown)


#: The statuses that say a check was really made, one way or the other.
DECIDED = FAILED | {"SUCCESS"}
#: How `failed_checks` names a scenario that emitted no check at all.
NO_CHECKS = "no-checks-emitted"


def failed_checks(statuses: dict[str, str]) -> dict[str, str]:
    """The checks of one scenario that count as failed, with why (see the module docstring)."""
    own = {check: status for check, status in statuses.items() if check != CLIENT_DONE}
    failed = {check: status for check, status in statuses.items() if status in FAILED}
    if not any(status in DECIDED for status in own.values()):
        failed.update({check: f"{status}, and nothing in the scenario was checked" for check, status in own.items()})
        if not own:
            failed[NO_CHECKS] = "the scenario emitted no check"
    return failed


def judge(scenarios: dict[str, dict[str, str]], baseline: list[str]) -> Verdict:
    verdict = Verdict()
    allowed = set(baseline)
    for scenario, statuses in scenarios.items():
        for check, why in failed_checks(statuses).items():
            if f"{scenario}:{check}" in allowed:
                verdict.expected.append(f"{scenario}:{check}")
            else:
                verdict.unexpected.append(f"{scenario}:{check} ({why})")
    for entry in baseline:
        scenario, _, check = entry.partition(":")
        statuses = scenarios.get(scenario)
        if statuses is None:
            verdict.unknown.append(entry)
        elif statuses.get(check) == "SUCCESS":
            verdict.stale.append(entry)
    return verdict


def counts(statuses: dict[str, str]) -> dict[str, int]:
    tally = dict.fromkeys(SEVERITY, 0)
    for status in statuses.values():
        tally[status] += 1
    return tally
