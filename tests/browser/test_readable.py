"""Pages a reader finishes, frames that show what matters (issue 23), in a real browser."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.browser.conftest import ROOT, Visit, goto, open_context
from tests.browser.test_controls import search

#: The tallest a page may be at 1280 x 900, once loaded (diagrams drawn, folds closed).
MAX_PAGE_HEIGHT_PX = 20_000


def test_no_page_is_taller_than_the_bound(survey: dict[str, Visit], terminal_report) -> None:  # type: ignore[no-untyped-def]
    """Was: Compliance 103,000 px, API 49k, primitives 42k, the trace 35k, errors 34k."""
    heights = {path: visit.facts[("desktop", "light")]["height"] for path, visit in survey.items()}
    tallest = max(heights, key=heights.__getitem__)
    # Printed at the end of every run, pass or fail.
    line = f"tallest page at 1280 x 900: {tallest} {heights[tallest]} px (bound {MAX_PAGE_HEIGHT_PX})"
    terminal_report("measurements", [line])
    assert {path: h for path, h in heights.items() if h > MAX_PAGE_HEIGHT_PX} == {}


def test_boilerplate_is_folded_on_load_and_opens_in_place(page: Any, site_url: str) -> None:
    """Was: every frame showed the same `_meta` and `serverInfo` lines in full."""
    goto(page, site_url + "/internals/mirrored-headers/")
    state = page.evaluate(
        """() => [...document.querySelectorAll('.mcpref-fold')].map(f => ({
            label: getComputedStyle(f.querySelector('.mcpref-fold__toggle'), '::before').content,
            shown: f.querySelector('.mcpref-fold__body').getClientRects().length > 0,
            expanded: f.querySelector('.mcpref-fold__toggle').getAttribute('aria-expanded'),
        }))"""
    )
    assert len(state) > 10, state
    assert not any(s["shown"] for s in state), "folds are closed on load"
    assert {s["expanded"] for s in state} == {"false"}
    assert '"… _meta as in every request"' in {s["label"] for s in state}, state
    fold = page.locator(".mcpref-fold", has=page.locator("[data-label='… _meta as in every request']")).first
    code = fold.locator("xpath=ancestor::code")
    before = code.evaluate("c => c.getBoundingClientRect().height")
    fold.locator(".mcpref-fold__toggle").click()
    assert fold.locator(".mcpref-fold__body").is_visible()
    assert fold.locator(".mcpref-fold__toggle").get_attribute("aria-expanded") == "true"
    assert "io.modelcontextprotocol/protocolVersion" in code.inner_text()
    assert code.evaluate("c => c.getBoundingClientRect().height") > before, "opened in place"
    fold.locator(".mcpref-fold__toggle").click()
    assert not fold.locator(".mcpref-fold__body").is_visible()


def test_copying_a_folded_frame_copies_all_of_it(page: Any, site_url: str) -> None:
    goto(page, site_url + "/internals/mirrored-headers/")
    block = page.locator("pre", has=page.locator("[data-label='… _meta as in every request']")).first
    whole = block.locator("code").evaluate("c => c.textContent").rstrip()
    assert "io.modelcontextprotocol/clientCapabilities" in whole
    block.hover()
    block.locator(".md-code__button[data-md-type=copy]").click()
    assert page.evaluate("navigator.clipboard.readText()") == whole


VISIBLE_CARDS = "[...document.querySelectorAll('.mcpref-req')].filter(c => c.getClientRects().length)"


def test_compliance_filters_by_status_and_anchors_each_entry(page: Any, site_url: str) -> None:
    """Was: one 103,000 px page of 32 six-column tables, no filter and no anchor per entry."""
    goto(page, site_url + "/reference/compliance/transports/#http.header-body-mismatch-rejected")
    top = page.locator("[id='http.header-body-mismatch-rejected']").evaluate("e => e.getBoundingClientRect().top")
    assert 0 <= top < 300, top
    cards = page.locator(".mcpref-req")
    total = cards.count()
    label = page.locator(".mcpref-filter label", has_text="divergent")
    wanted = int(label.inner_text().split("(")[1].rstrip(")"))
    label.click()
    shown = page.evaluate(f"() => {VISIBLE_CARDS}.map(c => c.dataset.status)")
    assert shown == ["divergent"] * wanted and 0 < wanted < total
    page.locator(".mcpref-filter label", has_text="all").click()
    assert (
        page.evaluate(
            "() => [...document.querySelectorAll('.mcpref-req')].filter(c => c.getClientRects().length).length"
        )
        == total
    )


def test_compliance_entries_are_stacked_cards_on_a_phone(browser: Any, site_url: str) -> None:
    context = open_context(browser, site_url, "mobile", "light")
    phone = context.new_page()
    goto(phone, site_url + "/reference/compliance/transports/")
    widths = phone.evaluate(
        "() => [...document.querySelectorAll('.mcpref-req')].map(c => c.getBoundingClientRect().right)"
    )
    assert widths and max(widths) <= 390, max(widths)
    assert phone.locator(".md-content table").count() == 0
    context.close()


def result_pages(page: Any, query: str) -> list[str]:
    """The pages a query brings, best first, as the reader sees them listed."""
    pages = []
    for result in search(page, query):
        path = result["href"].split("?")[0].split("#")[0]
        if path not in pages:
            pages.append(path)
    return pages


#: (query, the page it must bring first, a page it must bring among the first three). Was:
#: Transports not in the first six for "Mcp-Method"; Errors second for "-32602"; the API page
#: before Authorization for "OAuth".
DEFINING_PAGES = [
    ("Mcp-Method", "/internals/mirrored-headers/", "/internals/transports/"),
    ("-32602", "/reference/errors/", None),
    ("OAuth", "/internals/authorization/", None),
]


def test_search_brings_the_defining_page_first_with_prose_previews(page: Any, site_url: str) -> None:
    """One page load for every query (each answer is lunr's scoring of the built index, in the
    browser); previews were mostly raw frame JSON, two or three results a screen."""
    goto(page, site_url + "/")
    ranked = {query: result_pages(page, query) for query, _, _ in DEFINING_PAGES}
    for query, first, near in DEFINING_PAGES:
        assert ranked[query] and ranked[query][0] == site_url + first, (query, ranked[query])
        assert near is None or site_url + near in ranked[query][:3], (query, ranked[query])
    for query in ("resultType", "serverInfo", "inputRequests"):
        previews = [r["text"] for r in search(page, query)]
        assert previews, query
        assert not [p for p in previews if '"jsonrpc"' in p], (query, previews)
    page.keyboard.press("Escape")


def test_a_link_to_a_section_that_moved_lands_on_its_new_page(page: Any, site_url: str) -> None:
    page.goto(site_url + "/internals/transports/#x-mcp-header-the-rules-in-full", wait_until="load")
    page.wait_for_url("**/internals/mirrored-headers/#x-mcp-header-the-rules-in-full")
    assert page.locator("[id='x-mcp-header-the-rules-in-full']").count() == 1


def test_every_moved_section_is_on_the_page_it_moved_to(built_site: Path) -> None:
    """Each anchor docs/assets/moved.json sends on is gone from its old page (where it is still
    there, moved.js never looks the anchor up) and present on the new one: a split that forgot an
    anchor, or sent it to the wrong page, lands the reader at the top of a page without the
    section. Was: three entries for anchors their old page still had, one for an anchor the new
    page never had."""
    moved = json.loads((ROOT / "docs/assets/moved.json").read_text(encoding="utf-8"))
    ids = {}

    def anchors(path: str) -> set[str]:
        if path not in ids:
            html = (built_site / path / "index.html").read_text(encoding="utf-8")
            ids[path] = set(re.findall(r'id="([^"]+)"', html))
        return ids[path]

    wrong = [
        f"{old}#{anchor} -> {new}"
        for old, sections in moved.items()
        for anchor, new in sections.items()
        if anchor in anchors(old) or anchor not in anchors(new)
    ]
    assert wrong == []
    assert sum(len(sections) for sections in moved.values()) > 100, "the whole map was read"


ROUTES = ("a server", "a client", "a host", "a gateway", "a migration")


def test_the_home_page_routes_readers_and_says_hello_in_its_first_screens(page: Any, site_url: str) -> None:
    """Was: a flat list of 16 links, the trust argument at the bottom, and an "Illustration" first."""
    goto(page, site_url + "/")
    facts = page.evaluate(
        """(routes) => {
            const cells = [...document.querySelectorAll('.md-content td strong')];
            const bottom = (text) => cells.find(c => c.textContent === text)?.getBoundingClientRect().bottom ?? null;
            const first = document.querySelector('.md-content div.highlight');
            const trust = [...document.querySelectorAll('.md-content h2')].find(h => /trust/i.test(h.textContent));
            return {
                routes: Object.fromEntries(routes.map(r => [r, bottom(r)])),
                firstLanguage: first.className,
                firstTitle: first.querySelector('.filename')?.textContent || null,
                trustTop: trust ? trust.getBoundingClientRect().top + scrollY : null,
            };
        }""",
        list(ROUTES),
    )
    assert all(b is not None and b <= 900 for b in facts["routes"].values()), facts["routes"]
    assert "language-python" in facts["firstLanguage"] and facts["firstTitle"] is None, facts
    assert facts["trustTop"] is not None and facts["trustTop"] < 3 * 900, facts
