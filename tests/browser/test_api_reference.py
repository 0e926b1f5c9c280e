"""The API reference in a real browser: its docstring tables read on a phone (issue 23)."""

from __future__ import annotations

from typing import Any

from tests.browser.conftest import goto, open_context


def test_the_parameter_tables_stack_on_a_phone(browser: Any, site_url: str) -> None:
    """Was: four columns at 390 px, the description scrolled out of sight beside the type."""
    context = open_context(browser, site_url, "mobile", "light")
    phone = context.new_page()
    goto(phone, site_url + "/reference/api/server/")
    cells = phone.evaluate(
        """() => [...document.querySelectorAll('.doc-contents tr.doc-section-item td')].map(td => {
            const box = td.getBoundingClientRect();
            return {left: box.left, right: box.right, text: td.innerText.trim()};
        })"""
    )
    assert len(cells) > 100, len(cells)
    outside = [cell for cell in cells if cell["right"] > 390 + 1 or cell["left"] < 0]
    assert not outside, outside[:3]
    described = phone.locator('[id="mcpref.Server.tool"] ~ .doc-contents td', has_text="The tool's name").first
    assert described.is_visible()
    default = described.locator("xpath=following-sibling::td[1]")
    assert default.inner_text().strip() == "None"
    assert default.evaluate("td => getComputedStyle(td, '::before').content") == '"Default: "'
    context.close()
