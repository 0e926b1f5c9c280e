"""The try-it console: Run under a request frame sends it to the server the site is served with,
and says whether the real response is the documented one (issue 15), showing it once (issue 23)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import VIEWPORTS, goto, open_context


@pytest.fixture(scope="module")
def trace(browser: Any, site_url: str) -> Iterator[Any]:
    context = open_context(browser, site_url, "desktop", "light")
    page = context.new_page()
    page.set_default_timeout(15_000)
    goto(page, site_url + "/internals/message-trace/")
    yield page
    context.close()


def console_under(page: Any, *frame_texts: str) -> Any:
    """The console under the first request frame that contains each of `frame_texts`."""
    has = "".join(f":has-text('{text}')" for text in frame_texts)
    return page.locator(f".language-http{has} + .mcpref-tryit").first


def run(panel: Any) -> dict[str, Any]:
    """Run, and what the console then holds: `real` is every line of the server's answer, folded
    or not, `comparison` the lines it shows as differing from the documented response."""
    panel.locator("button", has_text="Run").click()
    panel.page.wait_for_function(
        "p => !['idle', 'sending', 'streaming'].includes(p.dataset.state)", arg=panel.element_handle()
    )
    return {
        "state": panel.get_attribute("data-state"),
        "differences": panel.get_attribute("data-differences"),
        "status": panel.locator(".mcpref-tryit__status").inner_text(),
        "real": panel.locator(".mcpref-tryit__real").evaluate("pre => pre.textContent"),
        "open": panel.locator(".mcpref-tryit__answer").evaluate("d => !d.hidden && d.open"),
        "comparison": panel.locator(".mcpref-tryit__differences").evaluate(
            "d => d.hidden ? null : d.querySelector('pre').innerText"
        ),
    }


def test_every_executed_request_frame_has_a_run_control(trace: Any) -> None:
    counts = trace.evaluate(
        """() => {
            const requests = [...document.querySelectorAll('.language-http')].filter(b =>
                /^(GET|POST|DELETE) \\S+ HTTP\\/1\\.1/.test(b.querySelector('code').textContent) &&
                !/^Illustration/.test(b.querySelector('.filename')?.textContent || ''));
            return [requests.length, requests.filter(b => b.nextElementSibling?.matches('.mcpref-tryit')).length];
        }"""
    )
    assert counts[0] >= 5 and counts[0] == counts[1], counts


def test_run_a_json_frame(trace: Any) -> None:
    shown = run(console_under(trace, "Mcp-Param-City: Lisbon"))
    assert shown["state"] == "done" and shown["differences"] == "0", shown
    assert shown["real"].startswith("HTTP/1.1 200 OK\nContent-Type: application/json")
    assert '"name": "weather-desk"' in shown["real"]
    assert "Matches the documented response" in shown["status"]


def test_run_an_sse_frame_shows_each_event(trace: Any) -> None:
    panel = console_under(trace, "Mcp-Name: survey_stations")
    shown = run(panel)
    assert shown["state"] == "done" and shown["differences"] == "0", shown
    assert "Content-Type: text/event-stream" in shown["real"]
    assert shown["real"].count("notifications/progress") >= 2
    assert int(panel.get_attribute("data-events")) >= 3


def test_run_an_error_frame(trace: Any, site_url: str) -> None:
    errors = trace.context.new_page()  # the trace's errors are on a page of their own
    errors.set_default_timeout(15_000)
    goto(errors, site_url + "/internals/trace-errors/")
    shown = run(console_under(errors, "Mcp-Name: get_forecast", '"name": "convert_temperature"'))
    errors.close()
    assert shown["state"] == "done" and shown["differences"] == "0", shown
    assert shown["real"].startswith("HTTP/1.1 400 Bad Request")
    assert '"code": -32020' in shown["real"]


def test_an_mrtr_retry_carries_the_real_request_state_of_the_first_round(trace: Any, site_url: str) -> None:
    rounds = trace.context.new_page()  # the trace's MRTR rounds are on its continuation
    rounds.set_default_timeout(15_000)
    goto(rounds, site_url + "/internals/message-trace-listen/")
    retry = console_under(rounds, '"requestState": "{{report_state}}"')
    first = run(retry)
    assert first["state"] == "needs-earlier" and "{{report_state}}" in first["status"], first
    round_one = run(console_under(rounds, "Mcp-Name: file_report"))
    assert round_one["differences"] == "0" and '"resultType": "input_required"' in round_one["real"], round_one
    round_two = run(retry)
    rounds.close()
    assert round_two["state"] == "done" and round_two["differences"] == "0", round_two
    assert '"resultType": "complete"' in round_two["real"]


def test_a_matching_answer_says_so_and_shows_nothing_more(trace: Any) -> None:
    """Was: "Matches the documented response." over the documented response and the server's
    answer side by side, unfolded: the page's frame, under the console, shown twice more."""
    panel = console_under(trace, "Mcp-Param-City: Lisbon")
    shown = run(panel)
    assert shown["state"] == "done" and shown["differences"] == "0", shown
    assert shown["status"] == "Matches the documented response." and not shown["open"], shown
    assert shown["comparison"] is None and panel.locator(".mcpref-tryit__documented").count() == 0
    assert '"jsonrpc"' not in panel.inner_text()  # nothing of the response on screen
    answer = panel.locator(".mcpref-tryit__real")
    assert not answer.is_visible()
    panel.locator(".mcpref-tryit__answer > summary").click()  # the real answer, on demand
    assert answer.is_visible() and '"resultType": "complete"' in answer.inner_text()
    # ... folded where the page's frame folds, with the page's own label, opened in place.
    page_label = trace.evaluate(
        """p => p.nextElementSibling.querySelector('.mcpref-fold__toggle[data-label*=serverInfo]').dataset.label""",
        panel.element_handle(),
    )
    fold = answer.locator(".mcpref-fold", has=trace.locator(f"[data-label='{page_label}']"))
    assert fold.count() == 1 and '"name": "weather-desk"' not in answer.inner_text()
    fold.locator(".mcpref-fold__toggle").click()
    assert '"name": "weather-desk"' in answer.inner_text()


def test_a_differing_answer_shows_the_real_answer_then_only_what_differs(browser: Any, site_url: str) -> None:
    """A page whose documented response no longer is what the server answers (here the page is
    changed on its way to the browser): the real answer first, its differing lines marked, then
    those lines against the documented ones with a little context, not the whole response again."""
    context = open_context(browser, site_url, "desktop", "light")

    def drifted(route: Any) -> None:
        response = route.fetch()
        route.fulfill(response=response, body=response.text().replace("light rain", "heavy rain"))

    context.route(site_url + "/internals/message-trace/", drifted)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(site_url + "/internals/message-trace/", wait_until="load")
    panel = console_under(page, "Mcp-Param-City: Lisbon")
    shown = run(panel)
    marked = panel.locator(".mcpref-tryit__real .mcpref-tryit__diff").all_inner_texts()
    order = panel.evaluate("p => [...p.children].map(c => c.className)")
    context.close()
    # The summary in the forecast's text and in its structured content, each on both sides.
    assert shown["state"] == "done" and shown["differences"] == "4", shown
    assert shown["status"] == "4 line(s) differ from the documented response." and shown["open"], shown
    assert len(marked) == 2 and all("light rain" in line for line in marked), marked
    assert order.index("mcpref-tryit__answer") < order.index("mcpref-tryit__differences"), order
    comparison = shown["comparison"].split("\n")
    assert sum("heavy rain" in line for line in comparison) == 2, comparison
    assert sum("light rain" in line for line in comparison) == 2, comparison
    assert len(comparison) < len(shown["real"].split("\n")) / 2, comparison  # compact
    assert any(line.startswith("⋯") and "matching lines" in line for line in comparison), comparison


def test_an_edited_request_shows_the_servers_answer_and_compares_nothing(browser: Any, site_url: str) -> None:
    """Was, on a phone: a request edited into a broken one said "30 line(s) differ from the
    documented response", showed the documented SSE answer (to another request) first, and the
    server's real 400 -32700 a long scroll below (issue 23)."""
    context = open_context(browser, site_url, "mobile", "light")
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(site_url + "/internals/transports/", wait_until="load")
    panel = console_under(page, "Mcp-Name: survey_stations")
    panel.locator("button", has_text="Edit request").click()
    editor = panel.locator("textarea")
    editor.fill(editor.input_value().replace('"survey_stations"', '"survey_stations'))
    shown = run(panel)
    status_bottom = panel.locator(".mcpref-tryit__status").bounding_box()
    answer_top = panel.locator(".mcpref-tryit__answer").bounding_box()
    visible = panel.locator(".mcpref-tryit__real").inner_text()
    marked = panel.locator(".mcpref-tryit__diff").count()
    context.close()
    assert shown["state"] == "done" and shown["differences"] == "", shown
    assert shown["status"] == "Edited request: the server's answer." and shown["open"], shown
    assert shown["comparison"] is None and marked == 0, shown
    assert visible.startswith("HTTP/1.1 400 Bad Request") and '"code": -32700' in visible, visible
    assert answer_top["y"] - (status_bottom["y"] + status_bottom["height"]) < 40  # right under the verdict


def test_the_editor_is_hidden_on_load_and_edit_request_toggles_it(trace: Any) -> None:
    """Was: the editor was always shown (so every request twice) and "Edit request" only changed
    its own label; the old test pressed Edit before it looked (issue 23 item 1)."""
    panel = console_under(trace, "Mcp-Name: survey_stations")
    editor, edit = panel.locator("textarea"), panel.locator("button", has_text="request")
    assert not editor.is_visible() and edit.inner_text() == "Edit request"
    edit.click()
    assert editor.is_visible() and edit.inner_text() == "Hide request"
    edit.click()
    assert not editor.is_visible() and edit.inner_text() == "Edit request"


#: Scrolls so that a console's bar (the middle one of the page) sits `y` px below the top of the window, arriving there
#: by scrolling up (which is when Material shows Back to top); the bar's buttons and the button.
PLACE_BAR = """async (y) => {
    const bars = document.querySelectorAll('.mcpref-tryit__bar');
    const bar = bars[Math.floor(bars.length / 2)];  // far enough down for Back to top to show
    window.scrollBy(0, bar.getBoundingClientRect().top - y + 400);
    await new Promise(r => setTimeout(r, 100));
}"""
OVERLAPS = """() => {
    const top = document.querySelector('.md-top').getBoundingClientRect();
    return [...document.querySelectorAll('.mcpref-tryit__bar button:not([hidden])')]
        .map(b => b.getBoundingClientRect())
        .filter(r => r.bottom > 0 && r.top < innerHeight)
        .filter(r => r.left < top.right && r.right > top.left && r.top < top.bottom && r.bottom > top.top).length;
}"""


@pytest.mark.parametrize("viewport", ["desktop", "mobile"])
def test_back_to_top_never_covers_a_run_bar(browser: Any, site_url: str, viewport: str) -> None:
    """Was: Material's Back-to-top pill, at the top centre, covered the Run bar scrolled under it."""
    context = open_context(browser, site_url, viewport, "light")
    page = context.new_page()
    page.set_default_timeout(15_000)
    goto(page, site_url + "/internals/transports/")  # diagrams drawn: nothing above moves the page after
    height = VIEWPORTS[viewport]["height"]
    for y in (60, 80, height // 2, height - 60, height - 40):
        page.evaluate(PLACE_BAR, y)
        page.mouse.move(10, height // 2)
        page.mouse.wheel(0, -400)
        page.wait_for_selector(".md-top:not([hidden])")
        assert page.evaluate(OVERLAPS) == 0, (viewport, y)
    context.close()
