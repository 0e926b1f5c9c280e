"""Shared fixtures: a real uvicorn on loopback (`running`, `serve`), the request body and headers a
correct client sends (`mcp_body`, `mcp_headers`), the check of an error answer (`error_answer`), an
MCP client that checks every answer against the official schema before a test sees it, and the
site built once for the run."""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from bench.messages import standard_headers
from bench.procs import free_port
from mcpref import catchall
from mcpref.limits import ServerLimits, uvicorn_config
from mcpref.validation import check_message
from tests.parallel import Once, ReportSections, exclusive, terminal_report  # noqa: F401 - a fixture
from tests.tasks import pg

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}
ACCEPT = "application/json, text/event-stream"
ROOT = Path(__file__).resolve().parents[1]


def prepare_site() -> subprocess.CompletedProcess[str]:
    """Put the pinned mermaid where the site serves it (scripts/_site_setup; a no-op once done).
    One process at a time: on a fresh clone it fetches, and two parallel workers would both."""
    with exclusive(ROOT / "docs" / "assets" / "vendor" / ".fetch.lock"):
        return subprocess.run(["bash", str(ROOT / "scripts" / "_site_setup")], cwd=ROOT, capture_output=True, text=True)


def mkdocs_build(site: Path, config: Path = ROOT / "mkdocs.yml") -> list[str]:
    """`mkdocs build --strict`, as the suite runs it. Never `--quiet`: it silences the warnings
    that strict mode counts, and a broken link or anchor would then build without complaint."""
    return [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)]


#: Material's end-of-life banner off, for every build.
SITE_BUILD_ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build_site(site: Path, config: Path = ROOT / "mkdocs.yml") -> subprocess.CompletedProcess[str]:
    """Build the site now, with the pinned mermaid in place first."""
    prepared = prepare_site()
    if prepared.returncode != 0:
        return prepared
    return subprocess.run(mkdocs_build(site, config), cwd=ROOT, capture_output=True, text=True, env=SITE_BUILD_ENV)


#: The folder every process of one run shares (pytest-xdist's workers and their controller), made
#: by the process that starts the run and removed when it ends.
RUN_FOLDER = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    worker = getattr(config, "workerinput", None)
    if worker is None:
        config.stash[RUN_FOLDER] = Path(tempfile.mkdtemp(prefix="mcpref-run-"))
    else:
        config.stash[RUN_FOLDER] = Path(worker["mcpref_run_folder"])
    config.pluginmanager.register(ReportSections(), "mcpref-report-sections")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist, in the controller: hand each worker the run's shared folder."""
    node.workerinput["mcpref_run_folder"] = str(node.config.stash[RUN_FOLDER])


class SiteBuild:
    """The site's build, started in the background as soon as the run is collected: a build costs
    15-40 s of one core, which the tests that run meanwhile leave idle on a two-core machine (they
    mostly wait on servers and sockets). Not niced: under `nice` it got so little that it finished
    only after every other test, and the browser survey waited for it. The tests that read the
    site run last; the survey starts as soon as the build is done (tests/browser/conftest.py).

    One build for the run: with pytest-xdist, the first worker to collect a reader builds into the
    run's folder (`Once`) and the others wait for it."""

    def __init__(self, folder: Path) -> None:
        self.site = folder / "site"
        self.log = folder / "build.log"
        self.once = Once(folder, "site-build")
        self.builder = self.once.claim()
        self.process: subprocess.Popen[bytes] | None = None
        self.returncode: int | None = None
        self._finished: threading.Thread | None = None
        if not self.builder:
            return
        # Before the build, and not beside it: another build (tests/docs) may fetch mermaid too.
        prepared = prepare_site()
        self.log.write_text(prepared.stderr, encoding="utf-8")
        if prepared.returncode != 0:
            self.returncode = prepared.returncode
            self.once.done((self.returncode, prepared.stderr))
            return
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                mkdocs_build(self.site),
                cwd=ROOT,
                env=SITE_BUILD_ENV,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        # The other workers are told when the build ends, whether or not this one waits for it.
        self._finished = threading.Thread(target=self._finish, name="site build", daemon=True)
        self._finished.start()

    def _finish(self) -> None:
        assert self.process is not None
        try:
            self.returncode = self.process.wait(timeout=600)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.returncode = self.process.wait()
            with self.log.open("a", encoding="utf-8") as log:
                log.write("\nthe site build did not finish within 600 s\n")
        self.once.done((self.returncode, self.log.read_text(encoding="utf-8", errors="replace")))

    def wait(self) -> tuple[int, str]:
        """The build's exit status and what it wrote to stderr (mkdocs logs there)."""
        if not self.builder:
            returncode, stderr = self.once.wait()
            return returncode, stderr
        if self._finished is not None:
            self._finished.join()
        assert self.returncode is not None
        return self.returncode, self.log.read_text(encoding="utf-8", errors="replace")

    def discard(self, others: bool) -> None:
        """At the end of this process's run: a build other workers may still be reading is let
        finish; otherwise (one process, or an interrupted run) it is stopped."""
        if self.process is not None and self.process.poll() is None and not others:
            self.process.kill()
        if self._finished is not None:
            self._finished.join()


SITE_BUILD = pytest.StashKey[SiteBuild]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Start the site's build if a selected test reads it, and move the files of those tests to
    the end (whole files: pytest-xdist hands out a file at a time, `--dist loadfile`)."""
    readers = {item.path for item in items if "built_site" in getattr(item, "fixturenames", ())}
    if readers and not config.option.collectonly and SITE_BUILD not in config.stash:
        config.stash[SITE_BUILD] = SiteBuild(config.stash[RUN_FOLDER])
        items[:] = [item for item in items if item.path not in readers] + [i for i in items if i.path in readers]


@dataclass(frozen=True)
class SystemPart:
    """A part of the suite that needs a program from the system (scripts/system-packages)."""

    tests: str
    needs: tuple[str, ...]  # commands, or file globs: any one will do
    packages: tuple[str, ...]

    def installed(self) -> bool:
        return any(glob.glob(need) if "/" in need else shutil.which(need) for need in self.needs)

    @property
    def command(self) -> str:
        """The one command that brings what it needs."""
        return f"sudo apt-get install -y --no-install-recommends {' '.join(self.packages)}"


def system_parts(path: Path = ROOT / "scripts" / "system-packages") -> list[SystemPart]:
    parts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            tests, needs, *packages = line.split()
            parts.append(SystemPart(tests, tuple(needs.split(",")), tuple(packages)))
    return parts


def skipped_parts(skipped_ids: list[str], parts: list[SystemPart]) -> list[str]:
    """One line for each part whose tests skipped because what it needs is not installed."""
    lines = []
    for part in parts:
        count = sum(1 for nodeid in skipped_ids if nodeid.startswith(part.tests + "/"))
        if count and not part.installed():
            needs = " or ".join(part.needs)
            lines.append(f"{part.tests}: {count} skipped, {needs} not found; to run them: {part.command}")
    return lines


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """End a run whose system-dependent parts skipped by naming each, with the command that brings
    it (`./scripts/test` as root installs them itself)."""
    skipped = [report.nodeid for report in terminalreporter.stats.get("skipped", [])]
    listed = ROOT / "scripts" / "system-packages"
    if not skipped or not listed.exists():  # a copy of tests/ alone (scripts/mutate) has no list
        return
    lines = skipped_parts(skipped, system_parts(listed))
    if lines:
        terminalreporter.write_sep("=", "parts of the suite that did not run on this machine")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_unconfigure(config: pytest.Config) -> None:
    worker = hasattr(config, "workerinput")
    if SITE_BUILD in config.stash:
        config.stash[SITE_BUILD].discard(others=worker)
    if not worker:  # the controller, once every worker has stopped, or the only process
        shutil.rmtree(config.stash[RUN_FOLDER], ignore_errors=True)


@pytest.fixture(scope="session")
def built_site(request: pytest.FixtureRequest) -> Path:
    """The site, built once for the whole run: tests/docs checks the files, tests/browser serves
    them to Chromium. Tests only read it."""
    stash = request.config.stash
    if SITE_BUILD not in stash:  # asked for by a test the collection hook did not see
        stash[SITE_BUILD] = SiteBuild(stash[RUN_FOLDER])
    returncode, stderr = stash[SITE_BUILD].wait()
    assert returncode == 0, stderr
    assert "WARNING" not in stderr, stderr
    return stash[SITE_BUILD].site


class SteppedClock:
    """A stand-in for `time` (its `monotonic`) or for a clock function (call it), which a test
    steps by setting `now`: lifetimes and per-second budgets without waiting."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def fresh_log_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with the whole per-second log budget (`catchall.log_bug`): a test that
    expects a handler's traceback in the log must not find it spent by the test before."""
    monkeypatch.setattr(catchall, "_budget", catchall.LogBudget(catchall.LINES_PER_SECOND))


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """The `anyio`-marked tests run on asyncio, the loop mcpref's users run (one place to say so;
    session-wide, so fixtures of any scope can use it)."""
    return "asyncio"


@contextmanager
def demo_process(mcpref: Path, cwd: Path, env: dict[str, str]) -> Iterator[str]:
    """`mcpref demo` (the console script at `mcpref`) as a real process on a free port, started in
    `cwd`; yield its base URL once it answers. Its output is in `cwd/demo.log`."""
    port = free_port()
    log = cwd / "demo.log"
    with log.open("w") as out, subprocess.Popen(
        [str(mcpref), "demo", "--port", str(port)], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT
    ) as proc:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                httpx.get(base + "/", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, f"mcpref demo did not answer within 30 s: {log.read_text()}"
                time.sleep(0.05)
        try:
            yield base
        finally:
            proc.terminate()
            proc.wait(10)


class _Asgi3:
    """`app`, called only as ASGI 3 (`running` says why)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


@contextmanager
def running(
    app: Any,
    *,
    lifespan: str = "off",
    limits: ServerLimits | None = None,
    http: Any = "auto",
    tls: tuple[str, str] | None = None,
) -> Iterator[str]:
    """Serve `app` with a real uvicorn on a free loopback port; yield its base URL.

    `lifespan="on"` for apps that start work at startup (other implementations' servers);
    `limits` to serve it as `mcpref.run` does, with those bounds (see `mcpref.limits`);
    `http` to pick uvicorn's HTTP protocol class when there are no `limits`; `tls` (a certificate
    file and its key file) to serve HTTPS."""
    # IPPROTO_TCP explicitly: asyncio turns Nagle off only on sockets whose proto says TCP, and
    # with Nagle on, every response waits ~40 ms for a delayed ACK between its two writes.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # interface="asgi3", and the app behind a pass-through: uvicorn guesses ASGI 2 vs 3 and "app
    # factory" by calling the app with no arguments, and under the mutation run (scripts/mutate) every
    # method is a `*args, **kwargs` trampoline that such a call does not refuse.
    options: dict[str, Any] = {"log_level": "warning", "lifespan": lifespan, "access_log": False, "interface": "asgi3"}
    options |= {"ssl_certfile": tls[0], "ssl_keyfile": tls[1]} if tls else {}
    app = _Asgi3(app)
    config = uvicorn.Config(app, http=http, **options) if limits is None else uvicorn_config(app, limits, **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body, one per event; comment lines are skipped."""
    messages = []
    for block in text.split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if data:
            messages.append(json.loads("\n".join(data)))
    return messages


def checked(response: httpx.Response, method: str | None) -> list[dict[str, Any]]:
    """Every JSON-RPC message in `response`, each checked against the schema."""
    content_type = response.headers.get("content-type", "")
    if content_type.startswith("text/event-stream"):
        messages = sse_messages(response.text)
    elif content_type.startswith("application/json"):
        messages = [response.json()]
    else:
        messages = []
    for message in messages:
        check_message(message, method if "id" in message else None)
    return messages


def mcp_body(
    method: str, params: dict[str, Any] | None = None, request_id: Any = 1, meta: dict[str, Any] = META
) -> dict[str, Any]:
    """A JSON-RPC request as a correct client writes it, `_meta` (META unless told) in its params."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}


def mcp_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    """The headers a correct client sends with `method` (the benchmark's literal ones, not mcpref's
    own builder, which is under test); `extra` adds or replaces any."""
    return {**standard_headers(method, name), **extra}


def error_answer(response: httpx.Response, status: int) -> dict[str, Any]:
    """The JSON-RPC error an HTTP answer carries, once its status is `status` (the body shows when
    either check fails)."""
    assert response.status_code == status, response.text
    message = response.json()
    assert "error" in message, message
    error: dict[str, Any] = message["error"]
    return error


class MCPClient:
    """A deliberately literal client: it writes every header itself, so tests can break any."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def headers(self, method: str, name: str | None = None, **extra: str) -> dict[str, str]:
        return mcp_headers(method, name, **extra)

    def post(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        id: Any = 1,  # noqa: A002 - the JSON-RPC field name
        meta: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        body = mcp_body(method, params, id, META if meta is None else meta)
        name = body["params"].get("uri") if method == "resources/read" else body["params"].get("name")
        sent_headers = headers if headers is not None else self.headers(method, name if isinstance(name, str) else None)
        response = self.http.post("/mcp", json=body, headers=sent_headers)
        response.messages = checked(response, method)  # type: ignore[attr-defined]
        return response

    def result(self, method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
        response = self.post(method, params, **kwargs)
        assert response.status_code == 200, response.text
        message = response.messages[-1]  # type: ignore[attr-defined]
        assert "result" in message, message
        return message["result"]

    def error(self, method: str, params: dict[str, Any] | None = None, *, status: int, **kwargs: Any) -> dict[str, Any]:
        response = self.post(method, params, **kwargs)
        assert response.status_code == status, response.text
        message = response.messages[-1]  # type: ignore[attr-defined]
        assert "error" in message, message
        assert message.get("id") == kwargs.get("id", 1)
        return message["error"]


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A DSN for a throwaway PostgreSQL cluster (tests/tasks/pg.py) that lives as long as the test
    session: the task stores' tests and the balanced deployment's use it. Without PostgreSQL's
    binaries those tests skip, saying so; under CI=true they fail instead."""
    if pg.bindir() is None:
        reason = "PostgreSQL is not installed (no initdb): apt-get install postgresql"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; under CI=true this is a failure, not a skip")
        pytest.skip(reason)
    try:
        with pg.cluster() as dsn:
            yield dsn
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture
def serve() -> Iterator[Callable[[Any], httpx.Client]]:
    """`serve(app)` runs `app` under a real uvicorn until the test ends and returns an httpx client
    for it; a test may serve several."""
    with ExitStack() as stack:

        def start(app: Any) -> httpx.Client:
            base_url = stack.enter_context(running(app))
            return stack.enter_context(httpx.Client(base_url=base_url, timeout=10))

        yield start


@pytest.fixture
def mcp_client_for(serve: Callable[[Any], httpx.Client]) -> Callable[[Any], MCPClient]:
    """`mcp_client_for(app)`: an `MCPClient` for `app` under a real uvicorn."""
    return lambda app: MCPClient(serve(app))
