"""Tasks throughput: creating tasks and polling one, beside a plain tools/call, per task store.

Each cell runs `bench.servers.tasks` (the minimal server plus the tasks extension) on one store:
SQLite in a file, PostgreSQL with one instance, and PostgreSQL with two instances sharing the
database (the load split evenly between them, rates summed). Three requests are measured on the
same servers: `tools/call echo` (no task: the baseline), `tools/call instant_task` from a client
that declared tasks (a durable insert before every answer), and `tasks/get` of one task (a read).
The PostgreSQL cells need PostgreSQL's binaries (a throwaway cluster, as the tests start); without
them they are left out, with a note.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from . import load
from .http1 import post
from .messages import META, TOOLS_CALL, Call, request
from .procs import ServerProcess, Spec

TASKS_SERVER = Spec("tasks", "mcpref + tasks", "bench.servers.tasks:app")
TASKS = "io.modelcontextprotocol/tasks"
DECLARING = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}


def _declaring(call: Call) -> Call:
    """The same request from a client that declared the tasks extension."""
    message = json.loads(call.body)
    message["params"]["_meta"] = DECLARING
    return Call(call.name, json.dumps(message, separators=(",", ":")).encode(), call.headers, call.expect)


CREATE = _declaring(
    request(
        "task create", "tools/call", {"name": "instant_task", "arguments": {}}, '"resultType":"task"', "instant_task"
    )
)


def pollrequest(task_id: str) -> Call:
    return _declaring(request("tasks/get", "tasks/get", {"taskId": task_id}, '"status":"completed"', task_id))


@dataclass
class TasksReport:
    #: (store label, request name) → requests per second, summed over the instances
    rates: dict[tuple[str, str], float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@contextmanager
def _instances(store: str, count: int, cpus: list[int]) -> Iterator[list[ServerProcess]]:
    with ExitStack() as stack:
        env = {"BENCH_TASKS_DB": store}
        servers = [stack.enter_context(TASKS_SERVER.start(cpus[n % len(cpus)], env=env)) for n in range(count)]
        for server in servers:
            server.wait_ready()
        yield servers


def _rate(
    servers: list[ServerProcess], call: Call, connections: int, seconds: int, cpu: int, notes: list[str]
) -> float:
    """Load every instance at once, `connections` split between them; the summed rate of good answers."""
    rates: list[float] = []

    def one(server: ServerProcess) -> None:
        run = load.run(server.url, call, max(connections // len(servers), 1), seconds, cpu)
        if not run.ok:
            notes.append(f"{call.name} on port {server.port}: {run.bad} wrong answers, {run.errors} socket errors")
        rates.append(run.rate)

    threads = [threading.Thread(target=one, args=(server,)) for server in servers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(rates)


def measure(seconds: int, connections: int, server_cpu: int, load_cpu: int) -> TasksReport:
    report = TasksReport()
    cells: list[tuple[str, str, int]] = []
    with tempfile.TemporaryDirectory(prefix="mcpref-bench-tasks-") as tmp, ExitStack() as stack:
        cells.append(("SQLite, 1 instance", str(Path(tmp) / "tasks.sqlite3"), 1))
        try:
            from tests.tasks.pg import NoPostgres, cluster

            dsn = stack.enter_context(cluster())
            cells += [("PostgreSQL, 1 instance", dsn, 1), ("PostgreSQL, 2 instances", dsn, 2)]
        except (ImportError, NoPostgres, RuntimeError) as exc:
            report.notes.append(f"no PostgreSQL cells: {exc}")
        for label, store, count in cells:
            with _instances(store, count, [server_cpu]) as servers:
                status, body = post(servers[0].port, CREATE)
                task_id = json.loads(body)["result"]["taskId"]
                for call in (TOOLS_CALL, CREATE, pollrequest(task_id)):
                    report.rates[(label, call.name)] = _rate(
                        servers, call, connections, seconds, load_cpu, report.notes
                    )
    return report


def print_report(report: TasksReport, connections: int) -> None:
    labels = list(dict.fromkeys(label for label, _ in report.rates))
    print(f"Tasks, {connections} connections: requests per second (ratio to plain tools/call on the same servers)")
    print(f"| {'store':<26}| {'tools/call':>11} | {'task create':>19} | {'tasks/get':>19} |")
    print(f"|{'-' * 27}|{'-' * 13}|{'-' * 21}|{'-' * 21}|")
    for label in labels:
        plain = report.rates[(label, "tools/call")]
        create, poll = report.rates[(label, "task create")], report.rates[(label, "tasks/get")]
        print(
            f"| {label:<26}| {plain:>11.0f} | {create:>10.0f} ({create / plain:>5.2f}) |"
            f" {poll:>10.0f} ({poll / plain:>5.2f}) |"
        )
    for note in report.notes:
        print(f"note: {note}")
