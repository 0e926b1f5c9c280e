"""Search, copy buttons and the diagram Expand control, used as a reader uses them (issue 15)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import VIEWPORTS, goto


def search(page: Any, query: str) -> list[dict[str, str]]:
    """Put `query` into the search box; the results as shown: each one's link and preview text.

    Emptied first, then filled in one go (one query, as a paste is), and read once the worker has
    answered it and the list has stopped changing: on a busy machine answers take their time."""
    box = page.locator("input.md-search__input")
    box.click()
    box.fill("")
    box.press("End")  # Material reads the box on keyup
    box.fill(query)
    box.press("End")
    return page.evaluate(
        """async () => {
            const read = () => [...document.querySelectorAll('.md-search-result__item > .md-search-result__link')]
                .map(a => ({ href: a.getAttribute('href'), text: a.innerText }));
            let last = null, stable = 0;
            for (let i = 0; i < 200 && stable < 4; i++) {
                await new Promise(r => setTimeout(r, 100));
                const meta = document.querySelector('.md-search-result__meta')?.textContent || '';
                const now = JSON.stringify(read());
                // "Type to start searching" until the worker answers this query, then "N matching ..."
                stable = now === last && /matching/i.test(meta) ? stable + 1 : 0;
                last = now;
            }
            return read();
        }"""
    )


def test_search_finds_an_error_code_as_written(page: Any) -> None:
    """Was: `-32020` returned every page, the leading `-` read as "leave out pages with 32020"."""
    hrefs = [r["href"] for r in search(page, "-32020")]
    assert any("reference/errors/" in href and "#-32020" in href for href in hrefs), hrefs
    pages = {href.split("?")[0] for href in hrefs}
    assert pages == {r["href"].split("?")[0] for r in search(page, "32020")}
    assert not any("/internals/overview/" in href or "/reference/performance/" in href for href in hrefs), hrefs


@pytest.mark.parametrize(
    ("query", "page_path"),
    [("requestState", "serverless-state"), ("input_required", "primitives-and-mrtr"), ("Mcp-Method", "")],
)
def test_search_finds_pages_by_protocol_terms(page: Any, query: str, page_path: str) -> None:
    hrefs = [r["href"] for r in search(page, query)]
    assert hrefs, f"no result for {query}"
    assert any(page_path in href for href in hrefs), hrefs


def test_search_previews_show_no_diagram_source(page: Any) -> None:
    """Was: a preview showed the raw mermaid source of a diagram."""
    for query in ("participant", "sequenceDiagram", "flowchart"):
        for result in search(page, query):
            assert "participant " not in result["text"] and "->>" not in result["text"], (query, result)


def test_copy_copies_the_command_without_prompt_or_output(page: Any) -> None:
    """Was: the home page's curl block copied its `$` prompt and the server's answer too."""
    page.keyboard.press("Escape")
    block = page.locator(".language-console pre", has_text="curl -s http://127.0.0.1:8000/mcp").first
    block.hover()
    block.locator(".md-code__button[data-md-type=copy]").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("curl -s http://127.0.0.1:8000/mcp \\\n"), copied
    assert "$" not in copied.split("\n")[0]
    assert '"jsonrpc":"2.0","id":1,"result"' not in copied  # the output stays behind
    assert copied.rstrip().endswith("}}}'")


def test_expand_on_a_phone_fills_the_screen_and_refits_when_the_phone_turns(page: Any, site_url: str) -> None:
    """On a phone the performance flowchart is wider than the column: Expand fills the screen with
    it at 12 px text, scrolling both ways, its hint saying the phone can be turned; turned sideways
    (844x390) the same dialog shows its whole width. Close, a 44x44 px target, closes it. (Every
    diagram at 390 px: tests/browser/test_pages.py; at 1280 px every diagram fits the column.)"""
    page.set_viewport_size(VIEWPORTS["mobile"])
    goto(page, site_url + "/reference/performance/")
    figure = page.locator("figure.mcpref-diagram").first
    assert figure.locator(".mcpref-diagram__hint").is_visible()
    figure.locator("button", has_text="Expand diagram").click()
    dialog = page.locator("dialog.mcpref-dialog[open]")
    copy = dialog.locator("svg")
    body = dialog.locator(".mcpref-dialog__body")
    assert dialog.bounding_box() == {"x": 0, "y": 0, **VIEWPORTS["mobile"]}
    upright = copy.bounding_box()
    assert upright["width"] > body.evaluate("b => b.clientWidth"), "at 12 px it is wider than the screen"
    assert "turn the phone sideways" in dialog.locator(".mcpref-dialog__hint").inner_text()
    page.set_viewport_size({"width": 844, "height": 390})
    page.wait_for_function(
        "() => { const b = document.querySelector('dialog[open] .mcpref-dialog__body');"
        " return b.querySelector('svg').getBoundingClientRect().width <= b.clientWidth; }"
    )
    turned = copy.bounding_box()
    assert turned["width"] > upright["width"], "fitted to the wider screen, larger"
    assert dialog.locator(".mcpref-dialog__hint").is_hidden()
    close = dialog.locator("button", has_text="Close")
    box = close.bounding_box()
    assert box["width"] >= 44 and box["height"] >= 44, box
    close.click()
    # The dialog leaves on its `close` event, which the browser fires in a task of its own.
    page.locator("dialog.mcpref-dialog").wait_for(state="detached")
    page.set_viewport_size(VIEWPORTS["desktop"])
