"""A browser MCP client on another origin meets the protected endpoint (`/secure/mcp`) as Chromium
enforces CORS: it reads the 401's challenge, fetches both metadata documents, and gets its
authenticated POST (an `Authorization` header, so a preflight first) through."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.responses import HTMLResponse

import docsite
from tests.conftest import mcp_body, mcp_headers, running

#: What the page's script does: the calls a browser MCP client makes before it has a token.
DISCOVER = """async ({server, body, headers: sent}) => {
    const post = (headers) => fetch(server + '/secure/mcp', {method: 'POST', headers, body: JSON.stringify(body)});
    const first = await post(sent);
    const metadata = await (await fetch(server + '/.well-known/oauth-protected-resource/secure/mcp',
                                        {headers: {'MCP-Protocol-Version': '2026-07-28'}})).json();
    const issuer = metadata.authorization_servers[0];
    const asMetadata = await (await fetch(server + '/.well-known/oauth-authorization-server' + new URL(issuer).pathname,
                                          {headers: {'MCP-Protocol-Version': '2026-07-28'}})).json();
    const withToken = await post({...sent, Authorization: 'Bearer not-a-token'});
    return {
        status: first.status,
        challenge: first.headers.get('WWW-Authenticate'),
        resource: metadata.resource,
        tokenEndpoint: asMetadata.token_endpoint,
        withToken: [withToken.status, withToken.headers.get('WWW-Authenticate')],
    };
}"""


async def page_app(scope: Any, receive: Any, send: Any) -> None:
    """The browser client's own origin: an empty page."""
    await HTMLResponse("<!doctype html><title>a browser MCP client</title>")(scope, receive, send)


@pytest.fixture(scope="module")
def origins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The site as `./scripts/serve` runs it, and the client's page on another loopback port."""
    site: Path = tmp_path_factory.mktemp("site")
    (site / "index.html").write_text("<h1>home</h1>")
    with running(docsite.make_app(site)) as server, running(page_app) as page:
        yield server, page


def test_a_page_on_another_origin_reads_the_challenge_and_discovers(browser: Any, origins: tuple[str, str]) -> None:
    server, page_origin = origins
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(page_origin + "/")
    body, headers = mcp_body("tools/call", {"name": "whoami", "arguments": {}}), mcp_headers("tools/call", "whoami")
    seen = page.evaluate(DISCOVER, {"server": server, "body": body, "headers": headers})
    context.close()
    metadata_url = f"{server}/.well-known/oauth-protected-resource/secure/mcp"
    assert seen["status"] == 401
    assert seen["challenge"] == f'Bearer resource_metadata="{metadata_url}", scope="mcp:tools"'
    assert seen["resource"] == f"{server}/secure/mcp"
    assert seen["tokenEndpoint"] == f"{server}/auth/token"
    assert seen["withToken"] == [401, seen["challenge"] + ', error="invalid_token"']
