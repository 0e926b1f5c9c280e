"""The site itself: it builds with `--strict`, serves mermaid from its own files, and
`examples/site.py` puts the pages and the MCP endpoints on one origin."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from examples.site import make_app

ROOT = Path(__file__).resolve().parents[2]
MERMAID = ROOT / "docs" / "assets" / "vendor" / "mermaid.min.js"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not MERMAID.exists():  # a fresh clone: fetch the pinned mermaid once, as scripts/serve would
        subprocess.run(["bash", str(ROOT / "scripts" / "_site_setup")], check=True, cwd=ROOT)
    site = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    return site


def test_every_page_is_built_and_diagrams_load_mermaid_from_the_site(built_site: Path) -> None:
    for page in [
        "index.html",
        "internals/overview/index.html",
        "internals/primitives-and-mrtr/index.html",
        "internals/versioning/index.html",
        "internals/transports/index.html",
        "internals/message-trace/index.html",
        "patterns/composition/index.html",
        "patterns/serverless-state/index.html",
        "reference/errors/index.html",
        "reference/compliance/index.html",
        "glossary/index.html",
    ]:
        assert (built_site / page).exists(), page
    trace = (built_site / "internals/message-trace/index.html").read_text(encoding="utf-8")
    assert '<pre class="mermaid">' in trace
    assert 'src="../../assets/vendor/mermaid.min.js"' in trace
    assert (built_site / "assets/vendor/mermaid.min.js").stat().st_size == MERMAID.stat().st_size
    for html in built_site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "unpkg.com" not in text and "cdn.jsdelivr" not in text and "fonts.googleapis" not in text, html
    assert not (built_site / "conftest.py").exists()
    # The compliance page holds the matrix rendered from requirements.yaml, linked to the spec.
    compliance = (built_site / "reference/compliance/index.html").read_text(encoding="utf-8")
    assert "<!-- compliance-matrix -->" not in compliance
    assert "http.header-body-mismatch-rejected" in compliance
    spec = "https://modelcontextprotocol.io/specification/2026-07-28"
    assert f'href="{spec}/basic/transports/streamable-http#server-validation"' in compliance


def test_pages_and_endpoints_share_one_origin(built_site: Path) -> None:
    async def fetch() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=make_app(built_site))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
            body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
            headers = {
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "server/discover",
            }
            return [
                await client.get("/internals/message-trace/"),
                await client.post("/mcp", json=body, headers=headers),
                await client.post("/tides/mcp", json=body, headers=headers),
                await client.get("/mcp"),
            ]

    page, weather, tides, get = asyncio.run(fetch())
    assert page.status_code == 200 and "Annotated message trace" in page.text
    assert weather.json()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "weather-desk"
    assert tides.json()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "tide-tables"
    assert get.status_code == 405
