"""The console on a static copy of the site (issue 22): the pages as a static host serves them,
under a sub-path on one loopback port, and the reader's own reference server (`mcpref demo`'s
app) on another. Before any click each console says which server it talks to, or how to start
one; Run gives the real answer from the local server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.responses import PlainTextResponse

from docsite import make_app
from mcpref import demo
from tests.browser.conftest import open_context
from tests.browser.test_try_it import console_under, run
from tests.conftest import running

TRACE = "/internals/message-trace/"
SERVERS_KNOWN = "() => [...document.querySelectorAll('.mcpref-tryit')].every(p => p.dataset.server !== 'checking')"
ON_LOAD = """() => [...document.querySelectorAll('.mcpref-tryit')].map(p => [
    p.dataset.server, p.dataset.state, p.querySelector('.mcpref-tryit__server').innerText])"""


def open_static(browser: Any, static_site_url: str, local: str, path: str = TRACE) -> tuple[Any, Any]:
    """A first visit to a page (the trace) of the static copy, the reader's local server at `local`."""
    context = open_context(browser, static_site_url, "desktop", "light")
    context.add_init_script(f"localStorage.setItem('mcpref.localServer', {local!r})")
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(static_site_url + path, wait_until="load")
    page.wait_for_function(SERVERS_KNOWN)
    return context, page


@pytest.fixture(scope="module")
def local_server() -> Iterator[str]:
    """The reader's `mcpref demo`: every endpoint the pages call, no pages."""
    with running(demo.make_app()) as url:
        yield url + "/"


@pytest.fixture(scope="module")
def static_trace(browser: Any, static_site_url: str, local_server: str) -> Iterator[Any]:
    context, page = open_static(browser, static_site_url, local_server)
    yield page
    context.close()


def test_before_any_click_each_console_names_the_local_server(static_trace: Any, local_server: str) -> None:
    """Was: the Run buttons looked live on a static copy; only a click told it needed a server."""
    shown = static_trace.evaluate(ON_LOAD)
    assert len(shown) >= 5
    assert {(kind, state) for kind, state, _ in shown} == {("local", "idle")}, shown
    assert all(local_server in text for _, _, text in shown), shown


def test_run_on_the_static_copy_gets_the_real_json_answer(static_trace: Any) -> None:
    shown = run(console_under(static_trace, "Mcp-Param-City: Lisbon"))
    assert shown["state"] == "done" and shown["differences"] == "0", shown
    assert '"name": "weather-desk"' in shown["real"]


def test_run_on_the_static_copy_streams_the_real_sse_answer(static_trace: Any) -> None:
    panel = console_under(static_trace, "Mcp-Name: survey_stations")
    shown = run(panel)
    assert shown["state"] == "done" and shown["differences"] == "0", shown  # every header read, too
    assert shown["real"].count("notifications/progress") >= 2 and int(panel.get_attribute("data-events")) >= 3


def test_an_mrtr_round_on_the_static_copy_carries_the_real_request_state(
    browser: Any, static_site_url: str, local_server: str
) -> None:
    context, rounds = open_static(browser, static_site_url, local_server, "/internals/message-trace-listen/")
    round_one = run(console_under(rounds, "Mcp-Name: file_report"))
    assert round_one["differences"] == "0" and '"resultType": "input_required"' in round_one["real"], round_one
    round_two = run(console_under(rounds, '"requestState": "{{report_state}}"'))
    context.close()
    assert round_two["state"] == "done" and round_two["differences"] == "0", round_two
    assert '"resultType": "complete"' in round_two["real"]


def test_with_the_local_server_stopped_the_console_says_how_to_start_it(browser: Any, static_site_url: str) -> None:
    with running(demo.make_app()) as url:
        stopped = url + "/"
    context, page = open_static(browser, static_site_url, stopped)
    shown = page.evaluate(ON_LOAD)
    assert {(kind, state) for kind, state, _ in shown} == {("none", "idle")}, shown
    assert all("mcpref demo" in text and "./scripts/serve" in text for _, _, text in shown), shown
    panel = console_under(page, "Mcp-Param-City: Lisbon")
    ran = run(panel)
    after = panel.inner_text()
    context.close()
    assert ran["state"] == "no-server", ran
    assert ran["status"] == f"Run would send POST /mcp to {stopped}mcp; nothing answers there.", ran
    # Was: the sentence under the buttons, and again after Run.
    assert after.count("No reference server answers.") == 1 and after.count("mcpref demo") == 1, after


def test_a_visit_to_a_static_copy_asks_its_own_origin_once(
    browser: Any, static_site_url: str, local_server: str
) -> None:
    """Was: every page of a static copy POSTed to the static host's own /mcp and met a 405, the
    console and the MCP Apps live view each asking on their own (try-it.js, apps-host.js)."""
    context = open_context(browser, static_site_url, "desktop", "light")
    context.add_init_script(f"localStorage.setItem('mcpref.localServer', {local_server!r})")
    asked: list[str] = []
    context.on("request", lambda r: r.url == static_site_url + "/mcp" and asked.append(r.url))
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(static_site_url + TRACE, wait_until="load")
    page.wait_for_function(SERVERS_KNOWN)
    ran = run(console_under(page, "Mcp-Param-City: Lisbon"))
    page.goto(static_site_url + "/internals/transports/", wait_until="load")
    page.wait_for_function(SERVERS_KNOWN)
    kinds = {kind for kind, _, _ in page.evaluate(ON_LOAD)}
    page.goto(static_site_url + "/patterns/mcp-apps/", wait_until="load")
    page.wait_for_selector(".mcp-app-host[data-state=rendered]")
    caption = page.locator(".mcp-app-caption").inner_text()
    context.close()
    assert ran["state"] == "done" and ran["differences"] == "0", ran
    assert kinds == {"local"} and f"from {local_server}mcp" in caption, (kinds, caption)
    assert asked == [static_site_url + "/mcp"], asked


class SubPath:
    """The docs app behind a reverse proxy that serves it under `/mcpref/`, and nothing else."""

    def __init__(self, app: Any, prefix: str = "/mcpref") -> None:
        self.app, self.prefix = app, prefix

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not scope["path"].startswith(self.prefix + "/"):
            await PlainTextResponse("not under /mcpref/", 404)(scope, receive, send)
            return
        if scope["type"] == "http":
            scope = {**scope, "path": scope["path"][len(self.prefix) :], "raw_path": None}
        await self.app(scope, receive, send)


def test_served_under_a_sub_path_the_console_calls_that_sub_paths_endpoints(browser: Any, built_site: Path) -> None:
    """Was: every request went to `location.origin`, ignoring the base path."""
    with running(SubPath(make_app(built_site))) as origin:
        context = open_context(browser, origin, "desktop", "light")
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(origin + "/mcpref" + TRACE, wait_until="load")
        page.wait_for_function(SERVERS_KNOWN)
        kinds = {kind for kind, _, _ in page.evaluate(ON_LOAD)}
        shown = run(console_under(page, "Mcp-Param-City: Lisbon"))
        context.close()
    assert kinds == {"site"}, kinds
    assert shown["state"] == "done" and shown["differences"] == "0", shown


def run_shown(panel: Any) -> dict[str, str]:
    """`run`, for a console that may sit in a tab not shown yet: that tab is chosen first."""
    panel.evaluate(
        """p => {
            const block = p.closest('.tabbed-block');
            if (!block) return;
            const set = block.closest('.tabbed-set');
            const index = [...block.parentElement.children].indexOf(block);
            set.querySelectorAll(':scope > .tabbed-labels > label')[index].click();
        }"""
    )
    return run(panel)


#: Frames whose Run a CORS preflight stopped (issue 24): a 2025 client's GET and DELETE, answered
#: 405, and requests carrying its Mcp-Session-Id. Page, and what picks out the frame on it.
LEGACY_FRAMES = [
    ("/internals/transports/", ("Mcp-Session-Id: 5b0a4f3c-legacy",)),
    ("/internals/message-trace-listen/", ("GET /mcp HTTP/1.1",)),
    ("/internals/message-trace-listen/", ("DELETE /mcp HTTP/1.1",)),
    ("/reference/http-statuses/", ("DELETE /mcp HTTP/1.1",)),
    ("/guides/migrating/", ("Mcp-Session-Id: 5f1d6a2e9c3b4e7a8d213b6c0f4a9e17",)),
    ("/guides/migrating/", ("GET /mcp HTTP/1.1", "MCP-Protocol-Version: 2025-11-25")),
    ("/guides/migrating/", ("DELETE /mcp HTTP/1.1",)),
]


def test_a_2025_clients_get_delete_and_session_header_frames_run_on_the_static_copy(
    browser: Any, static_site_url: str, local_server: str
) -> None:
    """Was "Nothing answered ... (Failed to fetch)": the preflight allowed POST alone and dropped
    `Mcp-Session-Id`, and the 405 carried no CORS headers, so the browser hid every one of these."""
    shown = {}
    for path in dict.fromkeys(path for path, _ in LEGACY_FRAMES):
        context, page = open_static(browser, static_site_url, local_server, path)
        for frame_path, texts in LEGACY_FRAMES:
            if frame_path == path:
                shown[(path, texts)] = run_shown(console_under(page, *texts))
        context.close()
    wrong = {key: ran for key, ran in shown.items() if (ran["state"], ran["differences"]) != ("done", "0")}
    assert not wrong, wrong


def test_a_frame_whose_origin_a_browser_sets_itself_is_offered_as_curl(
    browser: Any, static_site_url: str, local_server: str
) -> None:
    """Was "260 line(s) differ": the browser sent the page's own Origin, not the frame's, and the
    server rightly answered 200 where the page documents a 403."""
    context, page = open_static(browser, static_site_url, local_server, "/reference/http-statuses/")
    ran = run(console_under(page, "Origin: https://attacker.example"))
    context.close()
    assert ran["state"] == "needs-curl", ran
    assert ran["status"].startswith("A browser sends its own Origin, so Run cannot send this request"), ran
    curl = ran["status"].split("Run it with curl: ", 1)[1]
    assert curl.startswith(f"curl -i -X POST '{local_server}mcp' -H 'Content-Type: application/json' "), curl
    assert "-H 'Origin: https://attacker.example'" in curl
    assert """--data-binary '{"jsonrpc":"2.0","id":18,""" in curl


def test_a_request_that_fails_after_the_probe_answered_says_so_not_start_a_server(
    browser: Any, static_site_url: str, local_server: str
) -> None:
    """Was: one refused request read "No reference server answers. Start one ..." beside consoles
    whose Runs matched. The browser's network layer drops this one DELETE, the probe got through."""
    context, page = open_static(browser, static_site_url, local_server, "/reference/http-statuses/")
    page.route("**/mcp", lambda route: route.abort() if route.request.method == "DELETE" else route.fallback())
    ran = run(console_under(page, "DELETE /mcp HTTP/1.1"))
    context.close()
    assert ran["state"] == "failed", ran
    assert ran["status"].startswith(f"The browser refused DELETE {local_server}mcp, or the request failed ("), ran
    assert "Start one" not in ran["status"] and "mcpref demo" not in ran["status"], ran
