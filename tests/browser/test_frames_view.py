"""How frames are shown (issue 23, "Frames that show what matters"): an SSE stream one event per
block, its JSON pretty-printed and highlighted, while Copy and the try-it console keep the wire;
the console's live stream in the same blocks; the console's no-server hint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from mcpref import demo
from tests.browser.conftest import goto, open_context
from tests.browser.test_console_online import ON_LOAD, open_static
from tests.browser.test_try_it import console_under, run
from tests.conftest import running

TRANSPORTS = "/internals/transports/"
#: The transports page's stream of log messages: five notifications, then the result.
LOG_STREAM = ".language-http:has(.mcpref-sse):has-text('notifications/message')"

#: Each stream block of the page as a reader sees it on load: the wire lines in the block's code,
#: whether they are visible, and each event shown (its label, its data as shown, how many lines
#: of it are highlighted tokens).
STREAMS = """() => [...document.querySelectorAll('.highlight:has(> .mcpref-sse)')].map(block => ({
    wire: block.querySelector('pre > code').textContent,
    wireShown: block.querySelector('.mcpref-sse__wire').getClientRects().length > 0,
    events: [...block.querySelectorAll('.mcpref-sse__event')].map(e => ({
        shown: e.getClientRects().length > 0,
        label: e.querySelector('.mcpref-sse__label')?.innerText ?? null,
        data: e.querySelector('.mcpref-sse__data')?.textContent ?? null,  // folded lines too
        keys: e.querySelectorAll('.mcpref-sse__data .nt').length,
        keyColour: getComputedStyle(e.querySelector('.mcpref-sse__data .nt') || e).color,
        textColour: getComputedStyle(e).color,
    })),
}))"""


@pytest.fixture(scope="module")
def context(browser: Any, site_url: str) -> Iterator[Any]:
    context = open_context(browser, site_url, "desktop", "light")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site_url)
    yield context
    context.close()


def wire_events(wire: str) -> list[dict[str, Any]]:
    """The events of a block's wire text: {"label": ..., "data": the JSON}."""
    found = []
    for chunk in wire.split("\n\n"):
        lines = [line for line in chunk.split("\n") if line.startswith(("event:", "data:"))]
        if lines:
            label = " ".join(line for line in lines if line.startswith("event:")) or None
            data = json.loads("\n".join(line[5:] for line in lines if line.startswith("data:")))
            found.append({"label": label, "data": data})
    return found


@pytest.mark.parametrize(("viewport", "palette"), [("desktop", "light"), ("mobile", "dark")])
def test_a_stream_is_shown_one_event_per_block_on_load(
    browser: Any, site_url: str, viewport: str, palette: str
) -> None:
    """Was: the wire as written, `event: message` / one long `data:` line / a blank line, six
    times (issue 23, "SSE streams show one event per block with its JSON pretty-printed")."""
    context = open_context(browser, site_url, viewport, palette)
    page = context.new_page()
    goto(page, site_url + TRANSPORTS)
    streams = page.evaluate(STREAMS)
    context.close()
    logs = [s for s in streams if "notifications/message" in s["wire"]]
    assert logs, streams
    for stream in logs:
        expected = wire_events(stream["wire"])
        assert not stream["wireShown"], "the wire lines are hidden"
        assert len(stream["events"]) == len(expected) == 6, stream
        for shown, wire in zip(stream["events"], expected, strict=True):
            assert shown["shown"] and shown["label"] == wire["label"] == "event: message", shown
            assert json.loads(shown["data"]) == wire["data"], "the event's data, whole"
            assert shown["data"].count("\n") >= 4, f"pretty-printed, not one line: {shown['data']}"
            assert shown["keys"] >= 4 and shown["keyColour"] != shown["textColour"], "highlighted"


def copy(block: Any) -> str:
    """What the block's copy button puts on the clipboard, pressed as a reader presses it."""
    block.hover()
    block.locator(".md-code__button[data-md-type=copy]").click()
    return str(block.page.evaluate("navigator.clipboard.readText()"))


def test_copying_a_stream_copies_the_wire(context: Any, site_url: str) -> None:
    page = context.new_page()
    goto(page, site_url + TRANSPORTS)
    block = page.locator(LOG_STREAM).first
    wire = block.locator("pre > code").evaluate("c => c.textContent").rstrip()
    assert wire.startswith("HTTP/1.1 200 OK\nContent-Type: text/event-stream")
    assert '\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/message"' in wire
    copied = copy(block)
    page.close()
    assert copied == wire


def test_a_stream_alone_copies_its_wire_too(context: Any, site_url: str) -> None:
    """A ```sse block (what arrived next on a stream left open) is all stream: nothing of it but
    the copy button is left in its <pre>."""
    page = context.new_page()
    goto(page, site_url + "/internals/message-trace-listen/")
    block = page.locator(".highlight:has(> .mcpref-sse)", has_text="The stream of listen request listen-1").first
    wire = block.locator("pre > code").evaluate("c => c.textContent").rstrip()
    assert wire.startswith("event: message\ndata: {") and wire.endswith(": (stream still open)")
    assert block.locator(".mcpref-sse__event").count() == 2
    assert block.locator(".mcpref-sse__note").inner_text() == ": (stream still open)"
    copied = copy(block)
    page.close()
    assert copied == wire


def test_the_console_shows_a_live_stream_one_event_per_block(context: Any, site_url: str) -> None:
    """Was: each real `data:` line as one long line of JSON."""
    page = context.new_page()
    page.set_default_timeout(15_000)
    goto(page, site_url + "/internals/message-trace/")
    panel = console_under(page, "Mcp-Name: survey_stations")
    shown = run(panel)
    assert shown["state"] == "done" and shown["differences"] == "0", shown
    panel.locator(".mcpref-tryit__answer > summary").click()  # a matching answer waits behind its toggle
    events = panel.locator(".mcpref-tryit__real .mcpref-sse__event")
    documented = panel.locator("xpath=following-sibling::*[1]").locator(".mcpref-sse__event")  # the page's frame
    assert events.count() == documented.count() == int(panel.get_attribute("data-events")) >= 3
    first = events.first
    assert first.locator(".mcpref-sse__label").inner_text() == "event: message"
    key = first.locator(".nt").first
    assert key.inner_text() == '"jsonrpc"', "the event's JSON highlighted, as on the page"
    assert key.evaluate("k => getComputedStyle(k).color") != first.evaluate("e => getComputedStyle(e).color")
    lines = [line.strip() for line in first.inner_text().split("\n") if line.strip()]
    assert lines[1] == "{" and '"method": "notifications/progress",' in lines, lines
    # The layout is written twice, in Python for the page (tests/docs/streams.py) and in JS for the
    # console (try-it.js): each live event reads as its documented one, line for line, indents too.
    for index in range(events.count()):
        real, shown_on_page = events.nth(index).inner_text(), documented.nth(index).inner_text()
        assert real.rstrip("\n") == shown_on_page.rstrip("\n"), (index, real, shown_on_page)
    page.close()


def test_with_no_server_the_console_says_what_a_reader_can_run(browser: Any, static_site_url: str) -> None:
    """Was: `pip install "mcpref[demo]"`, which fails: mcpref is not on PyPI. The pages install
    it from a clone, by path (README, "From an installed package")."""
    with running(demo.make_app()) as url:
        stopped = url + "/"
    context, page = open_static(browser, static_site_url, stopped)
    shown = page.evaluate(ON_LOAD)
    ran = run(console_under(page, "Mcp-Param-City: Lisbon"))
    repository = page.evaluate("document.querySelector('a.md-source').href")
    context.close()
    assert repository.startswith("https://github.com/")
    assert ran["state"] == "no-server" and "git clone" not in ran["status"], ran  # said once, above
    for text in [text for _, _, text in shown]:
        assert f"git clone {repository}" in text and 'pip install "./mcpref[demo]"' in text, text
        assert 'pip install "mcpref[demo]"' not in text and "mcpref demo" in text, text


#: The tab sets that show one exchange three ways: their labels, which is chosen, and what of each
#: tab's blocks is on screen.
TAB_SETS = """() => [...document.querySelectorAll('.tabbed-set')]
    .filter(set => [...set.querySelectorAll(':scope > .tabbed-labels > label')]
        .map(l => l.innerText.trim()).join() === 'Wire,curl,Python')
    .map(set => ({
        checked: [...set.querySelectorAll(':scope > input')].map(i => i.checked),
        shown: [...set.querySelectorAll(':scope > .tabbed-content > .tabbed-block')].map(block =>
            [...block.querySelectorAll(':scope > .highlight')].map(h => h.getClientRects().length > 0)),
        kinds: [...set.querySelectorAll(':scope > .tabbed-content > .tabbed-block')].map(block =>
            [...block.querySelectorAll(':scope > .highlight')].map(h => h.className.split(' ')[0])),
    }))"""
WIRE_CURL_PYTHON = ("/internals/message-trace/", "/internals/transports/")


@pytest.mark.parametrize("viewport", ["desktop", "mobile"])
def test_an_exchange_shown_three_ways_is_in_tabs_the_first_shown(browser: Any, site_url: str, viewport: str) -> None:
    """Was: the frame, the curl command and the client code one after the other (issue 23, "they
    sit in tabs (wire / curl / Python)")."""
    context = open_context(browser, site_url, viewport, "light")
    page = context.new_page()
    for path in WIRE_CURL_PYTHON:
        goto(page, site_url + path)
        (tabs,) = page.evaluate(TAB_SETS)
        assert tabs["checked"] == [True, False, False], (path, tabs)
        wire, curl, python = tabs["kinds"]
        assert wire == ["language-http", "language-http"] and curl == ["language-console"], (path, tabs)
        assert python[0] == "language-python" and "language-text" in python, (path, tabs)
        assert all(tabs["shown"][0]) and not any(tabs["shown"][1] + tabs["shown"][2]), (path, tabs)
    context.close()


def test_the_console_runs_the_frames_inside_a_tab(context: Any, site_url: str) -> None:
    """Run under the Wire tab's request, a JSON answer and a stream, each paired with the response
    beside it in the tab."""
    page = context.new_page()
    page.set_default_timeout(15_000)
    goto(page, site_url + "/internals/message-trace/")
    json_panel = page.locator(".tabbed-block .language-http:has-text('Mcp-Name: convert_temperature') + .mcpref-tryit")
    shown = run(json_panel)
    assert shown["state"] == "done" and shown["differences"] == "0", shown
    assert '"text": "20 °C = 68.0 °F"' in shown["real"]  # no difference: paired with the tab's response
    goto(page, site_url + TRANSPORTS)
    stream_panel = page.locator('.tabbed-block .language-http:has-text(\'"progressToken": "p1"\') + .mcpref-tryit')
    shown = run(stream_panel)
    assert shown["state"] == "done" and shown["differences"] == "0", shown
    assert stream_panel.locator(".mcpref-tryit__real .mcpref-sse__event").count() == 6
    page.close()
