"""What OpenTelemetry costs the server per request (issue 27): `python -m bench.telemetry`.

The benchmark's `tools/call` through the minimal server's ASGI app, in-process (`bench.inproc`:
CPU time per request, best of 5 batches), each variant in a fresh interpreter so one variant's
imports and providers cannot reach another's:

- `off`: OpenTelemetry installed but not used by the application, so mcpref never imports it
  (the baseline every ratio is taken against, in the same round);
- `no extra`: `opentelemetry` cannot be imported at all, as after `pip install mcpref`;
- `api, no SDK`: the application imported the API and installed no SDK (every span a no-op);
- `sdk`: the SDK installed as a service would: a `BatchSpanProcessor` (to an exporter that drops
  what it is handed, so no I/O is measured) and a `MeterProvider` aggregating both histograms;
- `sdk, traceparent`: the same, the request carrying a `traceparent` to extract;
- `before` (with `--before COMMIT`): `off` in a checkout of that commit, mcpref without telemetry.

Rounds rotate the order; each ratio is computed within a round and the median is printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Run in the fresh interpreter: set the variant up, then measure (`bench.inproc.cost_us`).
PROBE = """
import json, sys
variant = sys.argv[1]

class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError(name)

if variant == "no extra":
    sys.meta_path.insert(0, Blocked())
elif variant == "api, no SDK":
    import opentelemetry.trace
elif variant.startswith("sdk"):
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropped(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))

import mcpref
from bench import inproc
from bench.messages import TOOLS_CALL

call = TOOLS_CALL
if variant == "sdk, traceparent":
    body = json.loads(call.body)
    body["params"]["_meta"]["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    import dataclasses
    call = dataclasses.replace(TOOLS_CALL, body=json.dumps(body).encode())
print(json.dumps({"us": inproc.cost_us("bench.servers.ours:app", call), "mcpref": mcpref.__file__,
                  "otel": sorted(m for m in sys.modules if m.startswith("opentelemetry"))[:1]}))
"""

VARIANTS = ("off", "no extra", "api, no SDK", "sdk", "sdk, traceparent")


def measure(variant: str, cwd: Path) -> float:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "off" if variant == "before" else variant],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{variant}: {done.stderr[-2000:]}")
    result = json.loads(done.stdout)
    if not result["mcpref"].startswith(str(cwd)):
        raise RuntimeError(f"{variant} measured the mcpref at {result['mcpref']}, not the one in {cwd}")
    return float(result["us"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", help="a commit without telemetry, measured as `before`")
    args = parser.parse_args()
    variants = list(VARIANTS)
    with tempfile.TemporaryDirectory() as scratch:
        places = dict.fromkeys(variants, ROOT)
        if args.before:
            checkout = Path(scratch) / "before"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(checkout), args.before],
                check=True,
                capture_output=True,
            )
            places["before"] = checkout
            variants.append("before")
        try:
            costs: dict[str, list[float]] = {variant: [] for variant in variants}
            ratios: dict[str, list[float]] = {variant: [] for variant in variants}
            for round_number in range(args.rounds):
                order = variants[round_number % len(variants) :] + variants[: round_number % len(variants)]
                seen = {variant: measure(variant, places[variant]) for variant in order}
                for variant, cost in seen.items():
                    costs[variant].append(cost)
                    ratios[variant].append(cost / seen["off"])
                print(f"round {round_number + 1}: " + ", ".join(f"{v} {c:.1f}" for v, c in seen.items()), flush=True)
        finally:
            if args.before:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(checkout)], check=False)
    print(f"\nserver CPU per tools/call, in-process, median of {args.rounds} rounds (ratio to `off` within a round)")
    print(f"{'variant':20} {'µs/request':>11} {'×off':>6} {'range':>13}")
    for variant in variants:
        low, high = min(ratios[variant]), max(ratios[variant])
        print(
            f"{variant:20} {statistics.median(costs[variant]):11.1f} {statistics.median(ratios[variant]):6.2f}"
            f" {low:6.2f}-{high:.2f}"
        )


if __name__ == "__main__":
    main()
