"""The API reference in a real browser: its docstring tables read on a phone (issue 23), each cell
under its column's name as every other table's (overrides/stacked_tables.py)."""

from __future__ import annotations

from typing import Any

from tests.browser.conftest import VIEWPORTS, goto, open_context


def test_the_parameter_tables_stack_on_a_phone(browser: Any, site_url: str) -> None:
    """Was: four columns at 390 px, the description scrolled out of sight beside the type."""
    context = open_context(browser, site_url, "mobile", "light")
    phone = context.new_page()
    goto(phone, site_url + "/reference/api/server/")
    cells = phone.evaluate(
        """() => [...document.querySelectorAll('.doc-contents tr.doc-section-item td')].map(td => {
            const box = td.getBoundingClientRect();
            return {left: box.left, right: box.right, text: td.innerText.trim(), label: td.dataset.label};
        })"""
    )
    assert len(cells) > 100, len(cells)
    assert all(cell["label"] for cell in cells), [cell for cell in cells if not cell["label"]][:3]
    outside = [cell for cell in cells if cell["right"] > 390 + 1 or cell["left"] < 0]
    assert not outside, outside[:3]
    described = phone.locator('[id="mcpref.Server.tool"] ~ .doc-contents td', has_text="The tool's name").first
    assert described.is_visible()
    row = described.locator("xpath=..")
    cells_of_row = """tr => [...tr.children].map(td => {
        const box = td.getBoundingClientRect();
        return [getComputedStyle(td, '::before').content, td.innerText.trim(), box.left, box.top];
    })"""
    labelled = row.evaluate(cells_of_row)
    assert [label for label, *_ in labelled] == ['"Name"', '"Type"', '"Description"', '"Default"'], labelled
    assert labelled[3][1] == "None", labelled
    # Stacked, not a grid: each cell below the one before it, all starting at the row's left edge.
    tops = [top for *_, top in labelled]
    assert tops == sorted(tops) and len(set(tops)) == 4, labelled
    assert len({round(left) for _, _, left, _ in labelled}) == 1, labelled
    # At desktop width the same table is a grid again: one line of four cells, under its headings.
    phone.set_viewport_size(VIEWPORTS["desktop"])
    grid = row.evaluate(cells_of_row)
    assert len({round(top) for *_, top in grid}) == 1 and [label for label, *_ in grid] == ["none"] * 4, grid
    context.close()
