"""The site itself: it builds with `--strict`, serves mermaid from its own files, and
`docsite.py` puts the pages and the MCP endpoints on one origin."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mkdocs.exceptions import PluginError

from docsite import make_app
from tests.conftest import META, ROOT, build_site

MERMAID = ROOT / "docs" / "assets" / "vendor" / "mermaid" / "mermaid.esm.min.mjs"


def test_a_broken_link_or_anchor_fails_the_build(tmp_path: Path) -> None:
    """The site's own configuration (inherited), on two tiny pages: a good link builds, a bad one fails."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "b.md").write_text("# B\n\n## A heading\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        # Paths in the site's mkdocs.yml are relative to it: hooks are dropped but the one the
        # theme's templates read (these pages need no other), and the overrides folder is named
        # in full.
        f"INHERIT: {ROOT / 'mkdocs.yml'}\ndocs_dir: {docs}\nnav:\n  - index.md\n  - b.md\nplugins:\n  - search\n"
        f"hooks: [{ROOT / 'overrides' / 'published.py'}]\n"
        f"theme:\n  name: material\n  custom_dir: {ROOT / 'overrides'}\n",
        encoding="utf-8",
    )
    (docs / "index.md").write_text("# A\n\n[next](b.md#a-heading)\n", encoding="utf-8")
    assert build_site(tmp_path / "good", config).returncode == 0
    for link, complaint in [
        ("[next](b.md#no-such-heading)", "does not contain an anchor '#no-such-heading'"),
        ("[next](c.md)", "the target is not found among documentation files"),
        ("[here](#nowhere)", "#nowhere"),
        # A site-absolute link is not checked by mkdocs at all, and is broken on GitHub: refused.
        ("[next](/b/)", "absolute link '/b/'"),
    ]:
        (docs / "index.md").write_text(f"# A\n\n{link}\n", encoding="utf-8")
        broken = build_site(tmp_path / "bad", config)
        assert broken.returncode != 0 and complaint in broken.stderr, (link, broken.stderr)


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
    # mkdocs-mermaid2-plugin: each diagram a div.mermaid, the site's own mermaid imported on the
    # pages with a diagram (relative, with ./ even at the root), and on no other page.
    assert '<div class="mermaid">sequenceDiagram' in trace
    assert 'import mermaid from "../../assets/vendor/mermaid/mermaid.esm.min.mjs"' in trace
    home = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'import mermaid from "./assets/vendor/mermaid/mermaid.esm.min.mjs"' in home
    for page in ("reference/api/index.html", "reference/compliance/index.html", "contributing/index.html"):
        assert "mermaid.esm" not in (built_site / page).read_text(encoding="utf-8"), page
    assert (built_site / "assets/vendor/mermaid/mermaid.esm.min.mjs").stat().st_size == MERMAID.stat().st_size
    assert not (built_site / "assets/vendor/mermaid.min.js").exists()
    for html in built_site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "unpkg.com" not in text and "cdn.jsdelivr" not in text and "fonts.googleapis" not in text, html
    assert not (built_site / "conftest.py").exists()
    # The compliance pages hold the matrix rendered from requirements.yaml, linked to the spec.
    compliance = (built_site / "reference/compliance/transports/index.html").read_text(encoding="utf-8")
    assert "<!-- compliance-matrix" not in compliance
    assert 'id="http.header-body-mismatch-rejected"' in compliance
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


def test_scripts_serve_with_a_port_that_is_no_port_says_so(tmp_path: Path) -> None:
    """`PORT=abc ./scripts/serve` ended in a ValueError traceback from `python -m docsite`."""
    env = {**os.environ, "PORT": "abc", "MCPREF_SITE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "docsite"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == (
        "./scripts/serve: the PORT environment variable: 'abc' is not a TCP port (a whole number from 1 to 65535)"
    )


def test_the_api_reference_covers_every_exported_name(built_site: Path) -> None:
    from tests.docs.test_docstrings import MODULES

    page = "".join(html.read_text() for html in sorted((built_site / "reference" / "api").rglob("index.html")))
    for module in MODULES:
        missing = [name for name in module.__all__ if f'id="{module.__name__}.{name}"' not in page]
        assert not missing, f"no page of docs/reference/api/ shows these names of {module.__name__}: {missing}"


def test_a_build_provides_the_pinned_mermaid_itself_or_says_how_to(tmp_path: Path, monkeypatch: Any) -> None:
    """Was: `mkdocs build --strict` without scripts/_site_setup passed with every diagram blank."""
    from overrides import vendor_mermaid

    vendor_mermaid.ensure()  # the pinned tarball is in .tools/ from here on
    monkeypatch.setattr(vendor_mermaid, "TARGET", tmp_path / "mermaid")
    monkeypatch.setattr(vendor_mermaid, "STAMP", tmp_path / "mermaid" / ".pin")
    monkeypatch.setattr(vendor_mermaid, "STALE", tmp_path / "mermaid.min.js")
    assert vendor_mermaid.ensure() is True
    assert (tmp_path / "mermaid" / "mermaid.esm.min.mjs").read_bytes() == MERMAID.read_bytes()
    chunks = list((tmp_path / "mermaid" / "chunks" / "mermaid.esm.min").glob("sequenceDiagram-*.mjs"))
    assert len(chunks) == 1 and not list(tmp_path.rglob("*.map"))
    assert vendor_mermaid.ensure() is False  # a second build reads one stamp
    # Nowhere to get it from: the build fails and says how to get it.
    monkeypatch.setattr(vendor_mermaid, "TARGET", tmp_path / "elsewhere")
    monkeypatch.setattr(vendor_mermaid, "STAMP", tmp_path / "elsewhere" / ".pin")
    monkeypatch.setattr(vendor_mermaid, "TOOLS", tmp_path / "tools")
    monkeypatch.setattr(vendor_mermaid, "URL", "http://127.0.0.1:9/mermaid.tgz")
    with pytest.raises(PluginError, match=r"could not be fetched .*python overrides/vendor_mermaid\.py"):
        vendor_mermaid.ensure()
