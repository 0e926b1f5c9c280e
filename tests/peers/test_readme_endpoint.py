"""The URL the README prints works with the clients people have, in both eras.

`./scripts/serve` runs `python -m docsite` and prints `http://127.0.0.1:8000/mcp`. Here that
same app runs under a real uvicorn process, and three kinds of client use its `/mcp`:

- the official Python SDK client (`mcp` 2.3.0) in its three modes: `auto` (probe with
  `server/discover`), `legacy` (the 2025-11-25 handshake) and pinned to 2026-07-28;
- our own client, in the same three modes;
- the official conformance suite, one scenario per era that any server passes (every scenario runs
  against the everything server, on the same core, in tests/conformance/).

Each client lists the tools and calls `get_forecast`, whose `city` also travels in a header.
And the same SDK signs in with its own OAuth to the protected endpoint the README lists,
`/secure/mcp`, as the authorization page tells a third-party client to.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp.client import Client as SdkClient
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from bench.procs import server_processes
from mcpref.apps import UI_EXTENSION, AppsExtension
from mcpref.client import Client
from mcpref.examples.reference_server import build_server
from tests.conformance.cli import ROOT, conformance_command
from tests.conformance.results import load_checks

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy", "2026-07-28"]
ERA = {"auto": ("modern", "2026-07-28"), "legacy": ("legacy", "2025-11-25"), "2026-07-28": ("modern", "2026-07-28")}
#: What a client without MCP Apps is listed: every tool but those only a view may call (get_hourly).
_DESK = build_server()
_APPS = _DESK.extensions[UI_EXTENSION]
assert isinstance(_APPS, AppsExtension)
TOOLS = [tool.name for tool in _DESK.tools if tool.name not in _APPS.links or _APPS.links[tool.name].for_model]
#: One server scenario per era that uses only what any server has (no `test_*` fixture tools):
#: the suite's client reaches this URL in both eras. Each costs a Node start (seconds), and the
#: everything server runs every scenario of both requirement sets (tests/conformance/), so more
#: here would only repeat them.
SCENARIOS = {"2025-11-25": ["server-initialize"], "2026-07-28": ["tools-list"]}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The README's URL: `python -m docsite`'s app, `/mcp`."""
    with server_processes("docsite:app", [{}]) as [server]:
        yield server.url
        assert "Traceback" not in server.log(), server.log()


def forecast_text(content: list) -> dict:
    return json.loads(content[0]["text"] if isinstance(content[0], dict) else content[0].text)


@pytest.mark.parametrize("mode", MODES)
async def test_the_official_python_sdk_client(url: str, mode: str) -> None:
    async with (
        httpx2.AsyncClient(timeout=10) as http,
        SdkClient(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        assert client.protocol_version == ERA[mode][1]
        listed = await client.list_tools()
        result = await client.call_tool("get_forecast", {"city": "Osaka", "days": 2})
    assert [tool.name for tool in listed.tools] == TOOLS
    assert not result.is_error
    text = [block.text for block in result.content if isinstance(block, types.TextContent)]
    assert json.loads(text[0])["city"] == "Osaka"


@pytest.mark.parametrize("mode", MODES)
async def test_our_client(url: str, mode: str) -> None:
    async with Client(url, version=mode) as client:
        tools = await client.list_tools()
        result = await client.call_tool("get_forecast", {"city": "Osaka", "days": 2})
        assert (client.era.era, client.era.version) == ERA[mode]
    assert [tool["name"] for tool in tools] == TOOLS
    assert not result.get("isError")
    assert forecast_text(result["content"])["city"] == "Osaka"


@pytest.mark.parametrize(
    ("era", "scenario"), [(era, scenario) for era, scenarios in SCENARIOS.items() for scenario in scenarios]
)
def test_the_conformance_suite(url: str, era: str, scenario: str, tmp_path: Path) -> None:
    command, env = conformance_command()
    completed = subprocess.run(
        [command, "server", "--url", url, "--scenario", scenario, "--spec-version", era, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    checks = load_checks(tmp_path)
    assert list(checks) == [scenario], completed.stdout[-2000:]
    statuses = set(checks[scenario].values())
    # INFO is a note, not a verdict; anything else but SUCCESS (FAILURE, WARNING, SKIPPED) fails.
    assert "SUCCESS" in statuses and statuses <= {"SUCCESS", "INFO"}, (checks, completed.stdout[-2000:])


async def test_the_official_python_sdk_client_signs_in_to_the_protected_endpoint(url: str) -> None:
    """`/secure/mcp` with the SDK's own OAuth (`OAuthClientProvider`), configured as the
    authorization page tells a third-party client to be: the pre-registered public client
    `mcpref-docs` and a loopback redirect on any port. The demo authorization server approves at
    once, so the user's browser is a GET that reads the redirect's query."""
    base = url.removesuffix("/mcp")
    redirect_uri = "http://127.0.0.1:45678/callback"  # nothing listens: the code is read from Location
    back: dict[str, str] = {}

    class Storage:
        tokens: OAuthToken | None = None
        info = OAuthClientInformationFull(client_id="mcpref-docs", redirect_uris=[redirect_uri])

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull:
            return self.info

        async def set_client_info(self, info: OAuthClientInformationFull) -> None:
            self.info = info

    async def browser(authorize_url: str) -> None:
        async with httpx2.AsyncClient() as user_agent:
            answer = await user_agent.get(authorize_url)
        assert answer.status_code == 302, answer.text
        back.update(httpx2.URL(answer.headers["location"]).params)

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=back["code"], state=back.get("state"), iss=back.get("iss"))

    metadata = OAuthClientMetadata(redirect_uris=[redirect_uri], token_endpoint_auth_method="none")
    auth = OAuthClientProvider(f"{base}/secure/mcp", metadata, Storage(), browser, callback)
    async with (
        httpx2.AsyncClient(auth=auth, timeout=10) as http,
        SdkClient(streamable_http_client(f"{base}/secure/mcp", http_client=http)) as client,
    ):
        who = await client.call_tool("whoami", {})
    assert not who.is_error
    assert [block.text for block in who.content if isinstance(block, types.TextContent)] == [f"{base}/auth#alice"]
    assert back["iss"] == f"{base}/auth"


async def test_a_legacy_sdk_client_at_the_modern_only_endpoint_is_told_which_version_to_use(url: str) -> None:
    """basic/versioning.mdx: a modern-only server SHOULD name its versions in any error it gives
    `initialize`, since that may be all a legacy client can show its user. The SDK in legacy mode
    surfaces the error's message alone, which said only "Unsupported protocol version: 2025-11-25"."""
    modern_only = url.removesuffix("/mcp") + "/modern/mcp"
    with pytest.raises(Exception) as refused:
        async with (
            httpx2.AsyncClient(timeout=10) as http,
            SdkClient(streamable_http_client(modern_only, http_client=http), mode="legacy"),
        ):
            pass
    error: BaseException = refused.value
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    assert str(error).startswith("Unsupported protocol version"), repr(error)
    assert "2026-07-28" in str(error) and "2025-11-25" in str(error), str(error)
