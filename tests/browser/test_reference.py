"""The reference pages read at both widths (issue 23, the stranger's findings 13 to 16): errors and
API tables and signatures on a phone, compliance's headings and filter, what search brings first
for a term, and blocks cut at the right at 1280 px."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import VIEWPORTS, Visit, goto, open_context
from tests.browser.test_readable import result_pages

PHONE = VIEWPORTS["mobile"]["width"]

#: Each table of the page's content: how wide it is drawn, how wide its content is, and whether the
#: box Material scrolls it in hides some of it sideways.
TABLES = """() => [...document.querySelectorAll('.md-content table')].map(t => {
    const wrap = t.closest('.md-typeset__scrollwrap');
    return {
        text: t.innerText.slice(0, 60),
        right: Math.round(t.getBoundingClientRect().right),
        hidden: t.scrollWidth > t.clientWidth + 1 || (wrap !== null && wrap.scrollWidth > wrap.clientWidth + 1),
    };
})"""


def opened(browser: Any, site_url: str, viewport: str) -> Iterator[Any]:
    context = open_context(browser, site_url, viewport, "light")
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture(scope="module")
def phone(browser: Any, site_url: str) -> Iterator[Any]:
    yield from opened(browser, site_url, "mobile")


@pytest.fixture(scope="module")
def desktop(browser: Any, site_url: str) -> Iterator[Any]:
    yield from opened(browser, site_url, "desktop")


def test_the_errors_tables_fit_a_phone_with_every_column_on_screen(phone: Any, site_url: str) -> None:
    """Was: the 7-column table of codes 891 px wide at 390 px, the HTTP status, `data` and frame
    link off the screen with no sign of them; all four tables of the page scrolled sideways."""
    goto(phone, site_url + "/reference/errors/")
    tables = phone.evaluate(TABLES)
    assert len(tables) >= 4, tables
    assert [t for t in tables if t["right"] > PHONE or t["hidden"]] == [], tables
    # The row of -32021: each of its seven cells on screen, under its column's name.
    cells = phone.evaluate(
        """() => {
            const row = [...document.querySelectorAll('.md-content tr')]
                .find(r => r.cells[0]?.textContent === '-32021');
            return [...row.cells].map(c => ({
                label: getComputedStyle(c, '::before').content,
                left: c.getBoundingClientRect().left,
                right: c.getBoundingClientRect().right,
                shown: c.getClientRects().length > 0,
            }));
        }"""
    )
    assert [c["label"] for c in cells] == [
        '"code"',
        '"name"',
        '"what it means"',
        '"HTTP (spec)"',
        '"HTTP (mcpref)"',
        '"data"',
        '"frame"',
    ]
    assert all(c["shown"] and c["left"] >= 0 and c["right"] <= PHONE for c in cells), cells


def test_no_table_on_any_page_is_wider_than_a_phone(survey: dict[str, Visit]) -> None:
    """Was: 49 tables on 24 pages wider than 390 px, their right-hand columns off the screen."""
    wide = {path: visit.facts[("mobile", "light")]["wideTables"] for path, visit in survey.items()}
    assert {path: tables for path, tables in wide.items() if tables} == {}


@pytest.mark.parametrize("palette", ["light", "dark"])
def test_no_table_on_any_page_is_wider_than_its_column_at_desktop_width(survey: dict[str, Visit], palette: str) -> None:
    """At 1280 px a reader sees every column of a table without scrolling it sideways. Was: 19
    tables on 15 pages wider than their 720 px box, observability's attribute table 943 px wide
    with "what mcpref records" cut to "the p...", its scrollbar below its 21st row; a message in
    "symptom" pushing "where to look" off the right; a test's name cut in Run it."""
    wide = {path: visit.facts[("desktop", palette)]["wideTables"] for path, visit in survey.items()}
    assert {path: tables for path, tables in wide.items() if tables} == {}


def test_the_errors_tables_stay_a_grid_at_desktop_width(desktop: Any, site_url: str) -> None:
    goto(desktop, site_url + "/reference/errors/")
    heads = desktop.evaluate(
        "() => [...document.querySelectorAll('.md-content thead')].map(h => h.getBoundingClientRect().height)"
    )
    assert heads and all(h > 10 for h in heads), "the column headings show above the rows"


@pytest.mark.parametrize("part", ["server", "client"])
def test_the_api_reference_reads_on_a_phone(phone: Any, site_url: str, part: str) -> None:
    """Was: at 390 px the "class" badge bigger than the name, 32 signature blocks scrolling sideways,
    and the parameter tables wider than the screen."""
    goto(phone, site_url + f"/reference/api/{part}/")
    facts = phone.evaluate(
        """() => ({
            signatures: document.querySelectorAll('.doc-signature pre > code').length,
            sideways: [...document.querySelectorAll('.doc-signature pre > code')]
                .filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 40)),
            badges: [...document.querySelectorAll('.doc-heading')]
                .filter(h => h.querySelector(':scope > code.doc-symbol'))
                .map(h => {
                    const badge = h.querySelector(':scope > code.doc-symbol');
                    const name = h.querySelector('.doc-object-name');
                    const size = e => parseFloat(getComputedStyle(e).fontSize);
                    const height = e => e.getBoundingClientRect().height;
                    const smaller = size(badge) < size(name), lower = height(badge) <= height(name);
                    return { name: name.textContent, smaller, lower };
                }),
        })"""
    )
    assert facts["signatures"] > 10 and facts["sideways"] == [], facts["sideways"]
    assert facts["badges"] and [b for b in facts["badges"] if not (b["smaller"] and b["lower"])] == []
    tables = phone.evaluate(TABLES)
    assert len(tables) > 10 and [t for t in tables if t["right"] > PHONE or t["hidden"]] == [], tables


def visible(page: Any, selector: str) -> Any:
    return page.evaluate(
        f"() => [...document.querySelectorAll({selector!r})].filter(e => e.getClientRects().length).length"
    )


def test_the_compliance_filter_hides_empty_sections_and_is_kept_in_the_address(phone: Any, site_url: str) -> None:
    """Was: with a status chosen, a spec page's heading with no entry of it stayed on screen, empty,
    and in the table of contents; the choice was lost on reload; headings read as file paths."""
    page = phone
    goto(page, site_url + "/reference/compliance/transports/")
    headings = page.evaluate("() => [...document.querySelectorAll('.md-content h2')].map(h => h.textContent.trim())")
    assert "Streamable HTTP" in [h.rstrip("¶") for h in headings], headings
    assert not [h for h in headings if ".md" in h], headings
    sections = visible(page, ".mcpref-spec-page")
    page.locator(".mcpref-filter label", has_text="divergent").click()
    page.wait_for_url("**/reference/compliance/transports/?status=divergent")

    def shown() -> dict[str, Any]:
        return page.evaluate(
            """() => {
                const seen = e => e.getClientRects().length > 0;
                const kept = [...document.querySelectorAll('.mcpref-spec-page')].filter(seen);
                return {
                    empty: kept.filter(s => ![...s.querySelectorAll('.mcpref-req')].some(seen))
                        .map(s => s.querySelector('h2').id),
                    headings: kept.map(s => s.querySelector('h2').id),
                    contents: [...new Set([...document.querySelectorAll('.md-nav--secondary a.md-nav__link')]
                        .filter(a => a.closest('li').style.display !== 'none').map(a => a.hash.slice(1)))],
                    statuses: [...new Set([...document.querySelectorAll('.mcpref-req')].filter(seen)
                        .map(c => c.dataset.status))],
                };
            }"""
        )

    chosen = shown()
    assert chosen["empty"] == [] and 0 < len(chosen["headings"]) < sections, chosen
    assert chosen["contents"] == chosen["headings"] and chosen["statuses"] == ["divergent"], chosen
    page.reload(wait_until="load")
    assert page.locator(".mcpref-filter input[value='divergent']").is_checked()
    assert shown() == chosen, "the address keeps the choice"
    page.locator(".mcpref-filter label", has_text="all").click()
    page.wait_for_url("**/reference/compliance/transports/")
    assert visible(page, ".mcpref-spec-page") == sections


def test_search_brings_the_mrtr_pages_first_for_input_required(desktop: Any, site_url: str) -> None:
    """Was: the message trace, the client guide and migrating came before the pages that define it."""
    goto(desktop, site_url + "/")
    ranked = result_pages(desktop, "input_required")
    mrtr = {site_url + "/internals/primitives-and-mrtr/", site_url + "/internals/mrtr-rounds/"}
    assert set(ranked[:2]) == mrtr, ranked
    desktop.keyboard.press("Escape")
