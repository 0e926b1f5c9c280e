"""The site as published (issue 22): its address, the links to its source, what each page was
verified against, the changelog, the 404 page under a sub-path, the social meta."""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from overrides.published import pages_url
from tests.browser.conftest import ROOT, open_context


class Tags(HTMLParser):
    """Every start tag of a page, as (name, attributes, the text right after it): pages with a diagram
    are written out again by mkdocs-mermaid2-plugin (BeautifulSoup), attributes in another order."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str], str]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {k: v or "" for k, v in attrs}, ""))

    def handle_data(self, data: str) -> None:
        if self.found and not self.found[-1][2]:
            tag, attrs, _ = self.found[-1]
            self.found[-1] = (tag, attrs, data)

    def all(self, tag: str, **wanted: str) -> list[tuple[dict[str, str], str]]:
        return [
            (attrs, text)
            for name, attrs, text in self.found
            if name == tag and all(attrs.get(k.replace("_", "-")) == v for k, v in wanted.items())
        ]


CONFIG = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
REPO = CONFIG["repo_url"]
SITE = pages_url(REPO)


def test_the_site_url_is_the_published_https_address_under_a_sub_path() -> None:
    parts = urlsplit(SITE)
    assert parts.scheme == "https" and parts.netloc.endswith(".github.io") and parts.path == "/mcpref/", SITE
    assert REPO == "https://github.com/mcpref/mcpref"


def test_canonicals_the_sitemap_and_the_llms_files_name_the_published_site(built_site: Path) -> None:
    """Was: every canonical link, the sitemap and the llms files named http://127.0.0.1:8000/."""
    page = (built_site / "internals" / "transports" / "index.html").read_text(encoding="utf-8")
    canonical = [attrs["href"] for attrs, _ in Tags(page).all("link", rel="canonical")]
    assert canonical == [f"{SITE}internals/transports/"]
    sitemap = re.findall(r"<loc>([^<]+)</loc>", (built_site / "sitemap.xml").read_text(encoding="utf-8"))
    assert len(sitemap) > 20 and all(loc.startswith(SITE) for loc in sitemap), sitemap
    llms = re.findall(r"\]\((\S+?)\)", (built_site / "llms.txt").read_text(encoding="utf-8"))
    assert len(llms) > 20 and all(link.startswith(SITE) for link in llms), llms
    full = (built_site / "llms-full.txt").read_text(encoding="utf-8")
    assert not re.findall(r"\]\(http://127\.0\.0\.1", full)
    assert f"]({SITE}" in full


def head_commit() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def test_every_page_links_its_source_a_report_and_says_what_it_was_verified_against(built_site: Path) -> None:
    """Was: nothing on a page said where its source is or how to report it wrong."""
    from mcpref.meta import LATEST_VERSION

    version = subprocess.run(
        ["python", "-c", "import importlib.metadata as m; print(m.version('mcpref'))"], capture_output=True, text=True
    ).stdout.strip()
    commit = head_commit()
    sources = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    assert len(sources) > 20
    for source in sources:
        stem = source.removesuffix(".md").removesuffix("index").rstrip("/")
        html = (built_site / stem / "index.html").read_text(encoding="utf-8")
        tags = Tags(html)
        assert ({"href": f"{REPO}/edit/main/docs/{source}", "rel": "edit"}, "Edit this page") in tags.all("a"), source
        reports = [attrs["href"] for attrs, text in tags.all("a") if text == "Report a problem with this page"]
        assert len(reports) == 1, source
        report = reports[0]
        query = parse_qs(urlsplit(report).query)
        assert report.startswith(f"{REPO}/issues/new?"), source
        assert query["template"] == ["wrong-on-a-page.md"], source
        assert f"docs/{source}" in query["title"][0] and f"docs/{source}" in query["body"][0], source
        facts = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html.split('class="mcpref-page-facts__verified"')[1]))
        verified = f"Verified against MCP {LATEST_VERSION} with mcpref {version}, built from commit {commit[:12]}"
        assert verified in facts, (source, facts)
        assert tags.all("a", href=REPO, title="Go to repository"), source
    changelog = (built_site / "changelog" / "index.html").read_text(encoding="utf-8")
    assert '<h1 id="changelog">Changelog' in changelog and "Keep a Changelog" in changelog
    assert Tags(changelog).all("a", href=f"{REPO}/edit/main/CHANGELOG.md", rel="edit")


def test_social_meta_favicon_and_logo(built_site: Path) -> None:
    page = (built_site / "guides" / "run-it" / "index.html").read_text(encoding="utf-8")
    meta = {attrs["property"]: attrs["content"] for attrs, _ in Tags(page).all("meta") if "property" in attrs}
    assert meta["og:url"] == f"{SITE}guides/run-it/" and meta["og:title"].startswith("Run it - mcpref"), meta
    image = meta["og:image"]
    assert image.startswith(SITE) and (built_site / image.removeprefix(SITE)).is_file(), image
    assert Tags(page).all("link", rel="icon", href="../../assets/images/favicon.svg")
    assert (built_site / "assets" / "images" / "logo.svg").is_file()


def test_performance_figures_are_tables_not_preformatted_text(built_site: Path) -> None:
    """Was: the recorded bench run was a code block, cut off at the right and under the copy button."""
    page = (built_site / "reference" / "performance" / "index.html").read_text(encoding="utf-8")
    assert "req/s</th>" in page and "cold start</th>" in page and "instructions</th>" in page
    assert not re.search(r"<pre[^>]*>(?:(?!</pre>).)*×bare", page, re.DOTALL)


NOT_FOUND_FACTS = """() => ({
    styled: getComputedStyle(document.querySelector('.md-header')).position === 'sticky',
    title: document.querySelector('.md-content h1')?.textContent,
    entries: [...document.querySelectorAll('.mcpref-notfound__entries a')].map(a => a.href),
    logo: document.querySelector('.md-header__button.md-logo img')?.naturalWidth > 0,
})"""


@pytest.mark.parametrize("where", ["static", "served"])
def test_the_404_page_is_styled_under_any_sub_path_with_search_and_entry_points(
    browser: Any, static_site_url: str, site_url: str, where: str
) -> None:
    """Was: under /mcpref/ the 404 page loaded no CSS or JS; at the root it was the stock
    "404 - Not found" with no way on."""
    root = static_site_url if where == "static" else site_url
    context = open_context(browser, root, "desktop", "light")
    page = context.new_page()
    page.set_default_timeout(15_000)
    response = page.goto(root + "/no/such/page/here", wait_until="load")
    assert response.status == 404
    facts = page.evaluate(NOT_FOUND_FACTS)
    assert facts["styled"] and facts["logo"] and facts["title"] == "Page not found", facts
    assert root + "/guides/build-a-server/" in facts["entries"], facts
    assert all(entry.startswith(root + "/") for entry in facts["entries"]), facts
    box = page.locator("input.md-search__input")
    box.click()
    box.fill("requestState")
    box.press("End")  # Material reads the box on keyup
    first = page.locator(".md-search-result__item > .md-search-result__link").first
    first.wait_for()
    assert first.evaluate("a => a.href").startswith(root + "/"), first.evaluate("a => a.href")
    context.close()
