"""`mcpref.demo`: what a page of the published site needs from the reader's local `mcpref demo`
(issue 22): CORS for the site's origin, every header readable, and Chromium's Private Network
Access preflight answered, for allowed origins only."""

from __future__ import annotations

import asyncio

import httpx
import yaml

from mcpref import demo
from mcpref.examples.secure_server.demo import SECURE_PATH
from mcpref.origins import LOOPBACK_HOSTS
from overrides.published import pages_url
from tests.conftest import ROOT, mcp_body, mcp_headers


def exchange(method: str, headers: dict[str, str], body: dict | None = None, path: str = "/mcp") -> httpx.Response:
    async def run() -> httpx.Response:
        transport = httpx.ASGITransport(app=demo.make_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
            return await client.request(method, path, headers=headers, json=body)

    return asyncio.run(run())


def test_the_site_origin_is_where_mkdocs_publishes_the_site() -> None:
    repo = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)["repo_url"]
    assert pages_url(repo).startswith(demo.SITE_ORIGIN + "/")
    assert pages_url(repo) == demo.SITE_URL  # the pages `mcpref demo` names as it starts


PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "content-type, mcp-protocol-version, mcp-method",
    "Access-Control-Request-Private-Network": "true",
}


def test_a_preflight_from_the_published_site_allows_the_private_network() -> None:
    """Was: the published site's origin got 403, and no preflight said Allow-Private-Network."""
    answer = exchange("OPTIONS", {"Origin": demo.SITE_ORIGIN, **PREFLIGHT})
    assert answer.status_code == 204
    assert answer.headers["access-control-allow-origin"] == demo.SITE_ORIGIN
    assert answer.headers["access-control-allow-private-network"] == "true"


def test_a_preflight_from_another_origin_gets_nothing() -> None:
    answer = exchange("OPTIONS", {"Origin": "https://evil.example", **PREFLIGHT})
    assert answer.status_code == 403
    assert not [name for name in answer.headers if name.startswith("access-control-")]


def test_a_post_from_the_published_site_is_answered_with_every_header_readable() -> None:
    headers = {**mcp_headers("server/discover"), "Origin": demo.SITE_ORIGIN}
    answer = exchange("POST", headers, mcp_body("server/discover", {}))
    assert answer.status_code == 200 and answer.json()["result"]
    assert answer.headers["access-control-allow-origin"] == demo.SITE_ORIGIN
    assert answer.headers["access-control-expose-headers"] == "*"
    assert "access-control-allow-private-network" not in answer.headers  # a preflight's answer only


def test_a_request_without_origin_is_answered_as_before() -> None:
    answer = exchange("POST", mcp_headers("server/discover"), mcp_body("server/discover", {}))
    assert answer.status_code == 200
    assert not [name for name in answer.headers if name.startswith("access-control-")]


def test_the_run_it_page_names_every_origin_the_endpoints_take() -> None:
    """Run it said the demo answers loopback origins only unless `MCP_ALLOWED_ORIGINS` says
    otherwise; it takes the published site's too, a security fact the page must state (its
    Python block prints what `demo.ORIGINS` allows). `/secure/mcp` keeps the plain rule."""
    page = (ROOT / "docs" / "guides" / "run-it.md").read_text(encoding="utf-8")
    section = page.split("## The pages' endpoints on your machine", 1)[1].split("\n## ", 1)[0]
    assert f"`{demo.SITE_ORIGIN}`" in section
    assert all(f"`{f'[{host}]' if ':' in host else host}`" in section for host in LOOPBACK_HOSTS)
    assert f"`{SECURE_PATH}` does not take the published site's origin" in " ".join(section.split())
    headers = {**mcp_headers("tools/list"), "Origin": demo.SITE_ORIGIN}
    assert exchange("POST", headers, mcp_body("tools/list"), path=SECURE_PATH).status_code == 403
    assert "While `mcpref demo` runs, the published site can call it." in page  # Security implications
