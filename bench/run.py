"""The benchmark: start each server as a real process, load it from another, print what was measured.

Servers are pinned to CPU 0 and the load generator to CPU 1 (taskset), one uvicorn worker each,
all with uvloop and httptools. Rounds interleave the servers, rotating their order, and every
ratio is computed within a round (so a slower moment of the machine hits both sides of it)
before the median is taken. Nothing here passes or fails: it prints figures and, beside each
performance target (mcpref's cost against the bare route and the SDK), whether this run met it.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import inproc, instructions, listen, load, tasks
from .messages import DISCOVER, TOOLS_CALL, TOOLS_LIST, Call
from .procs import ServerProcess, Spec, cold_start, import_seconds

SERVER_CPU, LOAD_CPU = 0, 1
ROOT = Path(__file__).resolve().parent.parent

BARE = Spec("bare", "Starlette route (bare)", "bench.servers.bare:app")
OURS = Spec("ours", "mcpref", "bench.servers.ours:app")
OURS_SSE = Spec("ours-sse", "mcpref, SSE response", "bench.servers.ours:sse_app")
SDK = Spec("sdk", "mcp 2.3.0 (official SDK)", "bench.servers.sdk:app")
OURS_OWN_RUNNER = Spec("ours", "mcpref", "bench.servers.ours:app", own_main=True)

#: (server, request) pairs measured each round, at every connection count.
SCENARIOS: list[tuple[Spec, Call]] = [
    (BARE, TOOLS_CALL),
    (OURS, TOOLS_CALL),
    (OURS, DISCOVER),
    (OURS, TOOLS_LIST),
    (OURS_SSE, TOOLS_CALL),
    (SDK, TOOLS_CALL),
]
CONNECTIONS = (1, 32)
#: Connections for the tasks cells (split between the instances when there are two).
TASKS_CONNECTIONS = 16


@dataclass
class Mode:
    rounds: int
    seconds: int
    warmup: int
    starts: int
    listeners: int
    hold: float
    counted: int  # requests counted under callgrind, per server and method


QUICK = Mode(rounds=3, seconds=2, warmup=1, starts=3, listeners=1000, hold=2, counted=300)
FULL = Mode(rounds=7, seconds=10, warmup=2, starts=9, listeners=1000, hold=10, counted=2000)


@dataclass
class Results:
    #: (server key, method, connections) → one load run per round
    runs: dict[tuple[str, str, int], list[load.Run]] = field(default_factory=dict)
    #: the same keys → the server's CPU µs per answered request, per round
    cpu_us: dict[tuple[str, str, int], list[float]] = field(default_factory=dict)
    cold: dict[str, list[float]] = field(default_factory=dict)
    imports: dict[str, list[float]] = field(default_factory=dict)
    rss: dict[str, tuple[float, float]] = field(default_factory=dict)
    inproc_us: dict[tuple[str, str], float] = field(default_factory=dict)
    #: (server key, method) → user-space instructions the server runs per request (callgrind)
    instructions: dict[tuple[str, str], float] = field(default_factory=dict)
    listen: listen.ListenReport | None = None
    suite: dict[str, tuple[float, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def rates(self, key: str, method: str, c: int) -> list[float] | None:
        runs = self.runs.get((key, method, c))
        if not runs or not all(run.ok for run in runs):
            return None
        return [run.rate for run in runs]

    def ratios(self, top: tuple[str, str], bottom: tuple[str, str], c: int) -> list[float] | None:
        """The per-round ratios of two rows' throughput."""
        above, below = self.rates(*top, c), self.rates(*bottom, c)
        if above is None or below is None:
            return None
        return [a / b for a, b in zip(above, below, strict=True)]

    def ratio(self, top: tuple[str, str], bottom: tuple[str, str], c: int) -> float | None:
        return _median(self.ratios(top, bottom, c))


def sdk_available() -> str | None:
    """None when the official SDK can be benchmarked, else the reason it cannot."""
    try:
        version = importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        return "the official SDK is not installed (pip install mcp==2.3.0 failed or was not run)"
    if version != "2.3.0":
        return f"mcp {version} is installed, not the pinned 2.3.0"
    return None


def measure_throughput(results: Results, specs: list[Spec], mode: Mode) -> None:
    scenarios = [(spec, call) for spec, call in SCENARIOS if spec in specs]
    servers: dict[str, ServerProcess] = {}
    try:
        for spec in specs:
            servers[spec.key] = spec.start(SERVER_CPU)
        for server in servers.values():
            server.wait_ready()
        rss_idle = {key: server.rss_mib() for key, server in servers.items()}
        for round_index in range(mode.rounds):
            shift = round_index % len(scenarios)
            for spec, call in scenarios[shift:] + scenarios[:shift]:
                url = servers[spec.key].url
                for c in CONNECTIONS:
                    if mode.warmup:
                        load.run(url, call, c, mode.warmup, LOAD_CPU)
                    cpu_before = servers[spec.key].cpu_seconds()
                    run = load.run(url, call, c, mode.seconds, LOAD_CPU)
                    cpu = servers[spec.key].cpu_seconds() - cpu_before
                    results.runs.setdefault((spec.key, call.name, c), []).append(run)
                    results.cpu_us.setdefault((spec.key, call.name, c), []).append(cpu / max(run.good, 1) * 1e6)
            _progress(f"round {round_index + 1}/{mode.rounds} done")
        results.rss.update({key: (rss_idle[key], server.rss_mib()) for key, server in servers.items()})
    finally:
        for server in servers.values():
            server.stop()


def measure_starts(results: Results, specs: list[Spec], mode: Mode) -> None:
    modules = {spec.key: spec.app.partition(":")[0] for spec in specs}
    for _ in range(mode.starts):
        for spec in specs:
            results.cold.setdefault(spec.key, []).append(cold_start(spec, SERVER_CPU))
            results.imports.setdefault(spec.key, []).append(import_seconds(modules[spec.key], SERVER_CPU))


def measure_inproc(results: Results) -> None:
    results.inproc_us[("bare", "tools/call")] = inproc.cost_us(BARE.app, TOOLS_CALL)
    for call in (TOOLS_CALL, DISCOVER, TOOLS_LIST):
        results.inproc_us[("ours", call.name)] = inproc.cost_us(OURS.app, call)
    results.inproc_us[("ours-sse", "tools/call")] = inproc.cost_us(OURS_SSE.app, TOOLS_CALL)


def measure_instructions(results: Results, specs: list[Spec], mode: Mode, with_sdk: bool) -> None:
    plan = {BARE: [TOOLS_CALL], OURS: [TOOLS_CALL, DISCOVER, TOOLS_LIST], OURS_SSE: [TOOLS_CALL]}
    if with_sdk and SDK in specs:
        plan[SDK] = [TOOLS_CALL]  # its import takes minutes under valgrind: --full only
    for spec, calls in plan.items():
        for method, count in instructions.per_request(spec, calls, mode.counted, SERVER_CPU).items():
            results.instructions[(spec.key, method)] = count


def measure_suite(results: Results) -> None:
    """Wall time of the whole test suite and of a strict docs build (into a scratch folder)."""
    with tempfile.TemporaryDirectory() as site:
        commands = {
            "./scripts/test": ["./scripts/test", "-q", "-p", "no:cacheprovider"],
            "mkdocs build --strict": [
                "bash",
                "-c",
                f'source scripts/_setup && source scripts/_site_setup && mkdocs build --strict -q -d "{site}"',
            ],
        }
        for name, command in commands.items():
            start = time.perf_counter()
            done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            results.suite[name] = (time.perf_counter() - start, done.returncode)


# -- printing ------------------------------------------------------------------------------------


def _progress(text: str) -> None:
    print(f"  … {text}", file=sys.stderr, flush=True)


def _fmt(value: float | None, spec: str = ".2f", missing: str = "—") -> str:
    return missing if value is None else format(value, spec)


def _median(values: list[float] | None) -> float | None:
    return statistics.median(values) if values else None


def print_header(mode_name: str, mode: Mode, sdk_note: str | None) -> None:
    versions = []
    for package in ("uvicorn", "starlette", "uvloop", "httptools", "jsonschema", "mcp"):
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{package} (absent)")
    generator = load.generator()
    if generator == "wrk":
        wrk = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split("\n")[0]
        generator = f"{wrk.split(' Copyright')[0]}, 1 thread, Lua POST script checking every response"
    else:
        generator = "bench.pyload (wrk not installed): a Python asyncio client checking every response"
    cells = f"{mode.rounds} rounds × {mode.seconds} s per cell (+{mode.warmup} s warm-up)"
    print(f"mcpref benchmark — {mode_name} mode: {cells}")
    print(
        f"machine: {os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}, "
        f"load average at start {os.getloadavg()[0]:.2f}"
    )
    print("servers: one uvicorn worker each on CPU 0 (taskset), --loop uvloop --http httptools --no-access-log")
    print(f"load: CPU 1, {generator}")
    print("versions: " + ", ".join(versions))
    if sdk_note:
        print(f"official SDK row skipped: {sdk_note}")
    print()


def print_tables(results: Results, specs: list[Spec]) -> None:
    print("Throughput: requests/s and ×bare (the median of the per-round ratios to the bare route), the")
    print("server's own CPU time per request (from /proc: what it would take on an idle CPU), p50 latency at c=1")
    head = f"{'server':<28}{'request':<17}"
    for c in CONNECTIONS:
        head += f"{'c=' + str(c) + ' req/s':>13}{'×bare':>7}{'CPU/req':>10}"
    print(head + f"{'p50 c=1':>10}")
    labels = {spec.key: spec.label for spec in specs}
    for spec, call in SCENARIOS:
        if spec not in specs:
            continue
        line = f"{labels[spec.key]:<28}{call.name:<17}"
        for c in CONNECTIONS:
            runs = results.runs.get((spec.key, call.name, c), [])
            rates = results.rates(spec.key, call.name, c)
            if rates is None:
                bad = sum(run.bad + run.errors for run in runs)
                line += f"{'errors: ' + str(bad):>29}"
                continue
            ratio = results.ratio((spec.key, call.name), ("bare", "tools/call"), c)
            cpu = _median(results.cpu_us[(spec.key, call.name, c)])
            line += f"{_median(rates):>13,.0f}{_fmt(ratio):>7}{_fmt(cpu, '.0f') + ' µs':>10}"
        p50 = _median([run.p50_us for run in results.runs.get((spec.key, call.name, 1), [])])
        print(line + f"{_latency(p50) if p50 else '—':>10}")
    print("Every response was checked (status 200 and the echoed text); a cell with errors is not scored.")
    print()

    head = f"{'Start and memory':<28}{'cold start':>12}{'×bare':>7}{'import':>10}{'RSS idle':>10}{'RSS loaded':>12}"
    print(head + f"{'×bare':>7}")
    for spec in specs:
        if spec.key not in results.cold:
            continue
        # Every started server has its cold starts, the bare route first among them.
        cold = statistics.median(results.cold[spec.key])
        cold_ratio = cold / statistics.median(results.cold["bare"])
        imported = _median(results.imports[spec.key])
        idle, loaded = results.rss.get(spec.key, (None, None))
        bare_loaded = results.rss.get("bare", (None, None))[1]
        rss_ratio = loaded / bare_loaded if loaded and bare_loaded else None
        print(
            f"{spec.label:<28}{_fmt(cold and cold * 1000, '.0f') + ' ms':>12}{_fmt(cold_ratio):>7}"
            f"{_fmt(imported and imported * 1000, '.0f') + ' ms':>10}{_fmt(idle, '.1f') + ' MiB':>10}"
            f"{_fmt(loaded, '.1f') + ' MiB':>12}{_fmt(rss_ratio):>7}"
        )
    print("cold start: spawn to first correct tools/call answer; import: `import <server module>` less an empty")
    print("interpreter; RSS idle: after the first answer; loaded: after all rounds. Medians of the starts.")
    print()

    if results.inproc_us:
        print("In-process cost per request (CPU µs inside the ASGI app: no uvicorn, no sockets)")
        bare = results.inproc_us[("bare", "tools/call")]  # measured first, whenever any is
        for (key, method), cost in results.inproc_us.items():
            print(f"  {labels.get(key, key):<28}{method:<17}{cost:>8.1f} µs{cost / bare:>8.2f} ×bare")
        print()

    if results.instructions:
        print("Server instructions per request (callgrind, user space, requests one after another; the same count")
        print("on a busy or a quiet machine). ×bare = bare route's count / this count, a throughput-like ratio")
        bare = results.instructions[("bare", "tools/call")]
        for (key, method), count in results.instructions.items():
            print(f"  {labels.get(key, key):<28}{method:<17}{count / 1000:>8.0f} k{bare / count:>8.2f} ×bare")
        print()

    report = results.listen
    if report is not None:
        print(f"Idle subscriptions/listen streams on one worker ({report.count} requested)")
        print(
            f"  acknowledged: {report.acknowledged}; RSS {report.rss_before_mib:.1f} MiB before, "
            f"{report.rss_held_mib:.1f} MiB holding them ({report.kib_per_stream:.1f} KiB each), "
            f"{report.rss_after_hold_mib:.1f} MiB after holding them idle"
        )
        print(
            f"  tools/call at c=1 while they are open: {report.rate_held:,.0f} req/s "
            f"(before: {report.rate_before:,.0f})"
        )
        print(f"  one stream more: HTTP {report.refused_status} (the hub is bounded at max_subscriptions)")
        print(
            f"  on shutdown (mcpref.run): {report.ended_gracefully} of {report.acknowledged} streams got their "
            f"final result, in {report.end_seconds * 1000:.0f} ms"
        )
        print()

    if results.suite:
        print("The suite itself (wall time)")
        for name, (seconds, code) in results.suite.items():
            print(f"  {name:<28}{seconds:>7.1f} s  {'exit 0' if code == 0 else f'EXIT {code}'}")
        print()


def print_targets(results: Results) -> None:
    rows: list[tuple[str, str, str, str, str, bool | None]] = []

    def add(
        name: str,
        value: float | None,
        goal: str,
        met: bool | None,
        spec: str = ".2f",
        spread: str = "",
        counted: str = "",
    ) -> None:
        rows.append((name, _fmt(value, spec), spread, counted, goal, None if value is None else met))

    def add_ratio(name: str, top: tuple[str, str], bottom: tuple[str, str], c: int, goal: str, floor: float) -> None:
        ratios = results.ratios(top, bottom, c)
        ratio = _median(ratios)
        spread = f"{min(ratios):.2f}–{max(ratios):.2f}" if ratios else ""
        met = ratio is not None and (ratio > floor if goal.startswith(">") else ratio >= floor)
        # The same ratio from instruction counts: fewer instructions is more throughput.
        top_count, bottom_count = results.instructions.get(top), results.instructions.get(bottom)
        counted = f"{bottom_count / top_count:.2f}" if top_count and bottom_count else ""
        add(name, ratio, goal, met, spread=spread, counted=counted)

    for c in CONNECTIONS:
        add_ratio(f"tools/call ×bare, c={c}", ("ours", "tools/call"), ("bare", "tools/call"), c, "≥ 0.95", 0.95)
    for c in CONNECTIONS:
        add_ratio(f"tools/call ×official SDK, c={c}", ("ours", "tools/call"), ("sdk", "tools/call"), c, "> 3", 3)
    cold = results.cold
    if "ours" in cold:
        ratio = statistics.median(cold["ours"]) / statistics.median(cold["bare"])
        add("cold start ×bare", ratio, "≤ 1.30", ratio <= 1.3)
    if "ours" in results.rss:
        ratio = results.rss["ours"][1] / results.rss["bare"][1]
        add("RSS (loaded) ×bare", ratio, "≤ 1.30", ratio <= 1.3)
    for method in ("server/discover", "tools/list"):
        for c in CONNECTIONS:
            add_ratio(f"{method} ×tools/call, c={c}", ("ours", method), ("ours", "tools/call"), c, "≥ 1.00", 1.0)
    for c in CONNECTIONS:
        add_ratio(f"SSE ×JSON response, c={c}", ("ours-sse", "tools/call"), ("ours", "tools/call"), c, "≥ 0.80", 0.8)
    report = results.listen
    if report is not None:
        held = report.acknowledged == report.count and report.refused_status == 503
        add("idle listen streams: KiB each", report.kib_per_stream, f"{report.count} held, bounded", held, ".1f")

    print("Performance targets, this run: the measured median (range over rounds), the same ratio from")
    print("instruction counts where there is one, the goal, and whether the measured median meets it")
    for name, value, spread, counted, goal, met in rows:
        verdict = "not measured" if met is None else ("met" if met else "MISSED")
        print(f"  {name:<36}{value:>7} {spread:<11}{counted:>6}   goal {goal:<20}{verdict}")
    print()


def _latency(microseconds: float) -> str:
    return f"{microseconds / 1000:.1f}ms" if microseconds >= 1000 else f"{microseconds:.0f}µs"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench", description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="more rounds, longer cells and more starts")
    parser.add_argument("--skip-suite", action="store_true", help="skip timing ./scripts/test and mkdocs build")
    parser.add_argument("--rounds", type=int, help="override the number of rounds")
    parser.add_argument("--seconds", type=int, help="override the seconds per cell")
    args = parser.parse_args(argv)
    mode = FULL if args.full else QUICK
    mode.rounds = args.rounds or mode.rounds
    mode.seconds = args.seconds or mode.seconds
    if shutil.which("taskset") is None:
        sys.exit("taskset (util-linux) is needed to pin the processes to CPUs")
    os.sched_setaffinity(0, {LOAD_CPU})

    sdk_note = sdk_available()
    specs = [BARE, OURS, OURS_SSE] + ([] if sdk_note else [SDK])
    started = time.perf_counter()
    print_header("full" if args.full else "quick", mode, sdk_note)
    results = Results()

    _progress("cold starts and imports")
    measure_starts(results, [spec for spec in specs if spec is not OURS_SSE], mode)
    _progress("in-process cost per request")
    measure_inproc(results)
    _progress("throughput rounds")
    measure_throughput(results, specs, mode)
    if instructions.available():
        _progress("instructions per request under callgrind")
        measure_instructions(results, specs, mode, with_sdk=args.full)
    else:
        results.notes.append("valgrind not installed: no instruction counts")
    _progress(f"{mode.listeners} idle listen streams")
    results.listen = listen.measure(OURS_OWN_RUNNER, mode.listeners, mode.hold, SERVER_CPU, LOAD_CPU)
    _progress("tasks: creation and polling on SQLite and PostgreSQL")
    tasks_report = tasks.measure(mode.seconds, TASKS_CONNECTIONS, SERVER_CPU, LOAD_CPU)
    if not args.skip_suite:
        _progress("timing ./scripts/test and mkdocs build --strict")
        measure_suite(results)

    print_tables(results, specs)
    tasks.print_report(tasks_report, TASKS_CONNECTIONS)
    print()
    print_targets(results)
    for note in results.notes:
        print(f"note: {note}")
    print(f"bench wall time {time.perf_counter() - started:.0f} s; load average at end {os.getloadavg()[0]:.2f}")
