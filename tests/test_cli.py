"""The `mcpref` command: `mcpref demo` as a real process (the console script the package installs),
serving every endpoint the pages call, under the limits and Origin rules of `./scripts/serve`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpref import __version__, demo
from mcpref.cli import DEMO_EXTRA, parser
from mcpref.limits import ServerLimits
from mcpref.run import base_url, http_port
from tests.conftest import demo_process, mcp_body, mcp_headers

#: The console script pip put next to this interpreter (`[project.scripts]` in pyproject.toml).
MCPREF = str(Path(sys.executable).with_name("mcpref"))


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MCPREF, *args], capture_output=True, text=True, timeout=30, env=env)


def test_help_names_the_demo_and_its_port() -> None:
    top = run("--help")
    assert top.returncode == 0 and top.stdout.startswith("usage: mcpref ")
    assert "demo" in top.stdout and "/secure/mcp" in top.stdout
    sub = run("demo", "--help")
    assert sub.returncode == 0 and sub.stdout.startswith("usage: mcpref demo ")
    assert "--port" in sub.stdout and "PORT environment variable" in sub.stdout and "--max-header-bytes" in sub.stdout
    # Was: "as ./scripts/serve does", which means nothing to a reader who has only the wheel.
    described = " ".join(sub.stdout.split())
    assert "scripts/serve" not in described
    assert "The pages themselves stay online; GET / lists the endpoints." in described


def test_the_port_is_8000_unless_port_or_the_option_says_otherwise(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    top = parser()
    monkeypatch.delenv("PORT", raising=False)
    args = top.parse_args(["demo"])
    assert (args.host, http_port(top, args)) == ("127.0.0.1", 8000)
    monkeypatch.setenv("PORT", "8123")
    assert http_port(top, top.parse_args(["demo"])) == 8123
    assert http_port(top, top.parse_args(["demo", "--port", "9001"])) == 9001


#: Bad ports, found from outside the repo: each was a ValueError or OverflowError traceback,
#: `PORT` even where no port is needed (it was read while the parser was built).
BAD_PORTS = [
    ({"PORT": ""}, ["--version"], 0),
    ({"PORT": "abc"}, ["--help"], 0),
    ({"PORT": "abc"}, ["demo", "--help"], 0),
    ({"PORT": "abc"}, ["demo"], 2),
    ({"PORT": ""}, ["demo"], 2),
    ({}, ["demo", "--port", "99999"], 2),
    ({}, ["demo", "--port", "-5"], 2),
    ({}, ["demo", "--port", "eighty"], 2),
]


@pytest.mark.parametrize(("env", "argv", "status"), BAD_PORTS)
def test_a_bad_port_is_a_usage_error_not_a_traceback(env: dict[str, str], argv: list[str], status: int) -> None:
    done = run(*argv, env={**os.environ, **env})
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == status, done.stderr
    if status:
        *usage, error = done.stderr.strip().splitlines()
        assert usage[0].startswith("usage: mcpref")
        assert error.startswith("mcpref") and "is not a TCP port (a whole number from 1 to 65535)" in error
        assert ("PORT environment variable" in error) == ("PORT" in env), error


def test_the_address_it_names_is_a_url_for_an_ipv6_host_too() -> None:
    """`mcpref demo --host ::1` said it served at http://::1:8000/, which no browser opens."""
    assert (base_url("::1", 8000), base_url("127.0.0.1", 8000)) == ("http://[::1]:8000", "http://127.0.0.1:8000")


def test_a_taken_port_is_said_plainly_with_the_way_out() -> None:
    """Nothing says it is serving: before, the demo announced its endpoints, then uvicorn's
    "address already in use" followed and it exited."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run("demo", "--port", str(port))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines()[-1] == (
        f"Port {port} on 127.0.0.1 is in use: another server (an mcpref demo?) listens there. "
        "Stop it, or choose another port: --port N (or PORT=N)."
    )
    assert "mcpref demo:" not in done.stderr and "Traceback" not in done.stderr


#: `mcpref demo` in a Python where importing starlette fails as it does when it is not installed.
WITHOUT_STARLETTE = """
import sys

class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "starlette":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NotInstalled())
from mcpref.cli import main
main(["demo"])
"""


def test_without_the_demo_extra_it_says_what_to_install() -> None:
    """A plain `pip install mcpref` has no Starlette: the demo names the extra, no traceback."""
    done = subprocess.run([sys.executable, "-c", WITHOUT_STARLETTE], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert done.stderr.strip() == DEMO_EXTRA
    assert 'pip install "./mcpref[demo]"' in DEMO_EXTRA  # from a clone
    wheel = f'pip install "dist/mcpref-{__version__}-py3-none-any.whl[demo]"'
    assert wheel in DEMO_EXTRA  # from a wheel, which once read "from a clone" too
    for shown in ("README.md", "docs/guides/run-it.md"):  # the form they show, for this version
        assert wheel in (Path(__file__).parents[1] / shown).read_text("utf-8"), shown


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The empty folder `served` runs in; its output is `demo.log` there."""
    return tmp_path_factory.mktemp("demo")


@pytest.fixture(scope="module")
def served(demo_folder: Path) -> Iterator[str]:
    """`mcpref demo`, the console script, from an empty folder (`PORT` is not what it listens on:
    `demo_process` gives `--port`, which wins)."""
    env = {**os.environ, "PORT": "1"}
    env.pop("MCP_ALLOWED_ORIGINS", None)
    with demo_process(Path(MCPREF), demo_folder, env) as base:
        yield base


def test_it_says_what_it_serves_once_it_serves(served: str, demo_folder: Path) -> None:
    """Was: printed before uvicorn even bound the port, so a taken port read as served, then failed;
    and after three of uvicorn's INFO lines, which said less. Now it is the first line."""
    log = (demo_folder / "demo.log").read_text()
    ready = (
        f"mcpref demo: the reference server at {served}/mcp; {served}/ lists every endpoint the pages call"
        f" (the pages: {demo.SITE_URL})\n"
    )
    assert log.startswith(ready), log
    assert log.count(ready) == 1, log
    # Run it shows the line for the default port; was "the pages' endpoints at .../", where a reader
    # with only the wheel found a list of endpoints and no pages.
    shown = ready.replace(served, "http://127.0.0.1:8000")
    assert shown in (Path(__file__).parents[1] / "docs" / "guides" / "run-it.md").read_text("utf-8")


@pytest.mark.parametrize("path", list(demo.ENDPOINTS))
def test_every_mcp_endpoint_of_the_pages_answers(served, path) -> None:
    response = httpx.post(served + path, json=mcp_body("server/discover"), headers=mcp_headers("server/discover"))
    assert response.status_code == 200, response.text
    assert "io.modelcontextprotocol/serverInfo" in response.json()["result"]["_meta"]


def test_the_authorization_demo_answers_for_the_origin_it_is_reached_at(served) -> None:
    metadata = httpx.get(served + "/.well-known/oauth-authorization-server/auth").json()
    assert metadata["issuer"] == served + "/auth"
    resource = httpx.get(served + "/.well-known/oauth-protected-resource/secure/mcp").json()
    assert resource["resource"] == served + "/secure/mcp"
    challenge = httpx.post(served + "/secure/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list"))
    assert challenge.status_code == 401 and challenge.headers["www-authenticate"].startswith("Bearer ")


def test_the_demo_lists_its_endpoints_and_is_a_static_site_elsewhere(served) -> None:
    index = httpx.get(served + "/")
    assert index.status_code == 200 and index.headers["content-type"].startswith("text/plain")
    assert all(f"  {path}\n" in index.text for path in (*demo.ENDPOINTS, "/secure/mcp", "/auth/"))
    assert httpx.get(served + "/nope").status_code == 404
    refused = httpx.post(served + "/", content=b"{}")
    assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"
    near_miss = httpx.post(served + "/MCP/", json=mcp_body("tools/list"), headers=mcp_headers("tools/list"))
    assert near_miss.status_code == 404 and "/mcp (exact path)" in near_miss.json()["error"]["message"]


def test_the_demo_has_the_limits_and_origin_rules_of_scripts_serve(served) -> None:
    foreign = {**mcp_headers("tools/list"), "Origin": "https://evil.example"}
    assert httpx.post(served + "/mcp", json=mcp_body("tools/list"), headers=foreign).status_code == 403
    loopback = {**mcp_headers("tools/list"), "Origin": served}
    assert httpx.post(served + "/mcp", json=mcp_body("tools/list"), headers=loopback).status_code == 200
    too_large = {**mcp_headers("tools/list"), "X-Padding": "a" * ServerLimits().max_header_bytes}
    assert httpx.post(served + "/mcp", json=mcp_body("tools/list"), headers=too_large).status_code == 431
