"""The load generator: wrk with a POST Lua script when it is installed, else `bench.pyload`.

Either one runs in its own process, pinned to its own CPU, keeps `connections` keep-alive
connections busy for `seconds`, and checks every response: status 200 and the expected text
in the body. A run with any bad response or socket error is returned with `ok=False` and the
table does not score it.
"""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .messages import Call
from .pyload import CALLS as PYLOAD_CALLS

LUA = """\
wrk.method = "POST"
wrk.body = [==[{body}]==]
{headers}
local expect = [==[{expect}]==]
local threads = {{}}
function setup(thread) table.insert(threads, thread) end
function init(args) good = 0; bad = 0 end
function response(status, headers, body)
  if status == 200 and string.find(body, expect, 1, true) then good = good + 1 else bad = bad + 1 end
end
function done(summary, latency, requests)
  local g, b = 0, 0
  for _, t in ipairs(threads) do g = g + t:get("good"); b = b + t:get("bad") end
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d\\n", summary.duration, g, b,
    e.connect + e.read + e.write + e.status + e.timeout, latency:percentile(50), latency:percentile(99)))
end
"""


@dataclass(frozen=True)
class Run:
    good: int
    bad: int
    errors: int
    seconds: float
    p50_us: float
    p99_us: float

    @property
    def ok(self) -> bool:
        return self.bad == 0 and self.errors == 0 and self.good > 0

    @property
    def rate(self) -> float:
        return self.good / self.seconds


def generator() -> str:
    return "wrk" if shutil.which("wrk") else "python"


def run(url: str, call: Call, connections: int, seconds: int, cpu: int) -> Run:
    if generator() == "wrk":
        command = _wrk_command(url, call, connections, seconds)
    else:
        command = [sys.executable, "-m", "bench.pyload", url, call.name, str(connections), str(seconds)]
        if call.name not in PYLOAD_CALLS:  # a request made at run time (a task id): pass it whole
            spec = _workdir / f"call-{abs(hash(call.body))}.json"
            spec.write_text(json.dumps({"body": call.body.decode(), "headers": call.headers, "expect": call.expect}))
            command.append(str(spec))
    done = subprocess.run(["taskset", "-c", str(cpu), *command], capture_output=True, text=True, timeout=seconds + 60)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"load generator failed ({done.returncode}): {done.stdout[-500:]}{done.stderr[-500:]}")
    duration_us, good, bad, errors, p50, p99 = (int(float(part)) for part in lines[-1].split()[1:])
    return Run(good, bad, errors, duration_us / 1e6, p50, p99)


_scripts: dict[str, Path] = {}
_workdir = Path(tempfile.mkdtemp(prefix="mcpref-bench-"))
atexit.register(shutil.rmtree, _workdir, True)


def _wrk_command(url: str, call: Call, connections: int, seconds: float) -> list[str]:
    key = f"{call.name}-{abs(hash(call.body))}"
    if key not in _scripts:
        headers = "\n".join(f'wrk.headers["{name}"] = "{value}"' for name, value in call.headers.items())
        script = LUA.format(body=call.body.decode(), headers=headers, expect=call.expect)
        path = _workdir / f"{key.replace('/', '-')}.lua"
        path.write_text(script)
        _scripts[key] = path
    # One wrk thread: the load generator has one CPU of its own, as the server has.
    return ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "-s", str(_scripts[key]), url]
