"""The site for machines: each page as Markdown beside its HTML, /llms.txt and /llms-full.txt, built
by `mkdocs build` itself (the llmstxt plugin, fed by overrides/hooks.py) and served with the site."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import yaml

from tests.browser.conftest import ROOT
from tests.browser.test_published import SITE as SITE_URL


def nav_pages() -> list[str]:
    """Every page the nav lists, as its source path under docs/."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = yaml.safe_load(text[text.index("\nnav:") :])["nav"]
    found: list[str] = []

    def walk(items: list) -> None:
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            if isinstance(value, list):
                walk(value)
            else:
                found.append(value)

    walk(nav)
    return found


def markdown_path(source: str) -> str:
    """`internals/overview.md` -> `internals/overview/index.md`, where its Markdown copy is built."""
    stem = source.removesuffix(".md")
    return "index.md" if stem == "index" else f"{stem.removesuffix('/index')}/index.md"


def test_llms_txt_lists_every_page_with_a_one_line_summary(built_site: Path) -> None:
    text = (built_site / "llms.txt").read_text(encoding="utf-8")
    assert text.startswith("# mcpref")
    assert re.search(r"^> .+", text, re.MULTILINE), "the site description"
    entries = dict(re.findall(r"^- \[[^\]]+\]\((\S+)\): (.+)$", text, re.MULTILINE))
    for source in nav_pages():
        url = SITE_URL + markdown_path(source)
        assert url in entries, f"{source} is not listed in llms.txt"
        assert len(entries[url]) > 20 and "\n" not in entries[url], (source, entries[url])
    assert {"## Internals", "## Patterns", "## Reference"} <= set(re.findall(r"^## .+$", text, re.MULTILINE))


def test_each_page_has_a_markdown_copy_with_its_frames_and_diagrams(built_site: Path) -> None:
    for source in nav_pages():
        copy = built_site / markdown_path(source)
        assert copy.is_file(), source
        text = copy.read_text(encoding="utf-8")
        assert text.startswith("# "), source
        original = (ROOT / "docs" / source).read_text(encoding="utf-8")
        for language in ("http", "mermaid"):
            expected = len(re.findall(rf"^[ \t]*```{language}\b", original, re.MULTILINE))
            assert len(re.findall(rf"^[ \t]*```{language}\s*$", text, re.MULTILINE)) == expected, (source, language)
        assert not re.search(r"^\s*<(pre|div)\b", text, re.MULTILINE), f"{source}: raw HTML left in its Markdown"


def test_llms_full_txt_holds_every_page(built_site: Path) -> None:
    full = (built_site / "llms-full.txt").read_text(encoding="utf-8")
    for source in nav_pages():
        title = (built_site / markdown_path(source)).read_text(encoding="utf-8").split("\n", 1)[0]
        assert title in full, source
    assert '"code": -32020' in full and "```http" in full


def test_the_served_site_answers_for_the_llms_files(site_url: str) -> None:
    for path, kind in [("/llms.txt", "text/plain"), ("/llms-full.txt", "text/plain"), ("/glossary/index.md", "")]:
        response = httpx.get(site_url + path)
        assert response.status_code == 200, path
        assert response.headers["content-type"].startswith(kind), path
