"""MCP Apps on the site: the page's host (docs/assets/apps-host.js) renders the weather desk's
view in a sandbox on another origin, in Chromium, and the bridge between them keeps its rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from bench.procs import free_port
from mcpref import demo
from mcpref.apps import content_security_policy
from mcpref.examples.reference_server import build_server
from tests.browser.conftest import open_context, switch_palette
from tests.conftest import running
from tests.test_extensions import handle

PAGE = "/patterns/mcp-apps/"
HOST = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
#: What the reference server answers the view's call, asked here before Playwright's loop runs.
HOURLY = handle(build_server(), "tools/call", {"name": "get_hourly", "arguments": {"city": "Lisbon", "day": 2}}, HOST)


class Visit:
    """The MCP Apps page, open in one tab, and what it did."""

    def __init__(self, browser: Any, site_url: str, local: str | None = None) -> None:
        self.outside: list[str] = []
        self.context = open_context(browser, site_url, "desktop", "light", self.outside)
        if local is not None:  # the reader's own server, as the console's "Use another address" keeps it
            self.context.add_init_script(f"localStorage.setItem('mcpref.localServer', {local!r})")
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.console: list[str] = []
        self.sent: list[str] = []  # bodies POSTed to the MCP endpoint
        self.proxy_headers: list[dict[str, str]] = []
        self.page.on("console", lambda message: self.console.append(message.text))
        self.page.on("request", self._request)
        self.page.on("response", self._response)
        self.page.goto(site_url + PAGE, wait_until="load")
        self.page.wait_for_selector(".mcp-app-host[data-state=rendered]")
        # The chart is drawn once the tool's result reached the view.
        self.view.locator("rect.bar").first.wait_for()

    def _request(self, request: Any) -> None:
        if request.method == "POST" and urlsplit(request.url).path == "/mcp":
            self.sent.append(request.post_data or "")

    def _response(self, response: Any) -> None:
        if urlsplit(response.url).path == "/apps/sandbox":
            self.proxy_headers.append(response.headers)

    @property
    def frame(self) -> Any:
        return self.page.locator("iframe.mcp-app-frame")

    @property
    def view(self) -> Any:
        return self.page.frame_locator("iframe.mcp-app-frame").frame_locator("iframe")

    def view_frame(self) -> Any:
        return next(f for f in self.page.frames if f.parent_frame and "/apps/sandbox" in f.parent_frame.url)

    def logged(self) -> list[str]:
        return self.page.locator(".mcp-app-log li").all_text_contents()


@pytest.fixture(scope="module")
def visit(browser: Any, site_url: str) -> Iterator[Visit]:
    opened = Visit(browser, site_url)
    yield opened
    opened.context.close()


def test_the_view_renders_in_a_sandbox_on_another_origin(visit: Visit, site_url: str) -> None:
    frame = visit.frame
    assert frame.get_attribute("sandbox") == "allow-scripts allow-same-origin"
    proxy = urlsplit(frame.get_attribute("src") or "")
    assert (proxy.hostname, proxy.port, proxy.path) == ("localhost", urlsplit(site_url).port, "/apps/sandbox")
    assert visit.page.evaluate("location.hostname") == "127.0.0.1"
    inner = visit.page.frame_locator("iframe.mcp-app-frame").locator("iframe")
    assert inner.get_attribute("sandbox") == "allow-scripts"
    assert visit.view_frame().evaluate("origin") == "null"  # opaque: no storage, no cookies of anyone's
    assert visit.proxy_headers[0]["content-security-policy"] == content_security_policy(None)


def test_the_view_gets_the_tool_input_then_its_result(visit: Visit) -> None:
    assert visit.view.locator("#title").inner_text() == "Forecast for Lisbon"
    assert visit.view.locator("rect.bar").count() == 5
    log = visit.logged()
    order = [
        log.index(line)
        for line in (
            "view → page: ui/initialize (id 1)",
            "page → view: result (id 1)",
            "view → page: ui/notifications/initialized",
            "page → view: ui/notifications/tool-input",
            "page → view: ui/notifications/tool-result",
        )
    ]
    assert order == sorted(order)


def test_the_view_calls_an_app_only_tool_and_gets_the_answer(visit: Visit) -> None:
    visit.view.locator("rect.bar[data-day='2']").click()
    hourly = visit.view.locator("#hourly")
    hourly.filter(has_text="Day 2").wait_for()
    expected = " · ".join(f"{h['hour']}h {h['tempC']}°" for h in HOURLY["structuredContent"]["hours"])
    assert hourly.inner_text() == f"Day 2, every three hours: {expected}"
    assert any('"name":"get_hourly"' in body for body in visit.sent)


def test_the_views_call_to_a_model_only_tool_is_refused_and_never_sent(visit: Visit) -> None:
    visit.view.locator("#file-report").click()
    status = visit.view.locator("#status.refused")
    status.wait_for()
    assert status.inner_text() == "Refused by the host: file_report is not callable by views (visibility: model)"
    assert not any("file_report" in body for body in visit.sent)


def test_a_request_to_an_undeclared_origin_is_blocked_by_the_csp_before_it_leaves(visit: Visit) -> None:
    def violation(message: Any) -> bool:
        text = message.text
        return (
            "api.weather-desk.example" in text and "Content Security Policy directive: \"connect-src 'none'\"" in text
        )

    with visit.page.expect_console_message(violation):
        visit.view.locator("#reach-out").click()
    visit.view.locator("#status", has_text="Blocked by the Content Security Policy (connect-src)").wait_for()
    assert visit.outside == []  # the browser's router never saw it: no request left


def test_the_view_declares_its_display_modes_in_ui_initialize(visit: Visit) -> None:
    declared = visit.page.locator(".mcp-app-host").get_attribute("data-app-capabilities")
    assert declared == '{"availableDisplayModes":["inline"]}'


def test_the_host_keeps_the_view_inline_and_says_so(visit: Visit) -> None:
    """Asked for a mode the view did not declare, the host answers with the mode the view is in
    (the only one this host offers)."""
    answer = visit.view_frame().evaluate(
        """() => new Promise((resolve) => {
          addEventListener("message", (event) => event.data?.id === "mode" && resolve(event.data));
          parent.postMessage({ jsonrpc: "2.0", id: "mode", method: "ui/request-display-mode",
                               params: { mode: "fullscreen" } }, "*");
        })"""
    )
    assert answer == {"jsonrpc": "2.0", "id": "mode", "result": {"mode": "inline"}}


def test_the_host_follows_the_views_size(visit: Visit) -> None:
    """The view reports its body's height; the host sizes its frame to it (flexible dimensions)."""
    before = visit.frame.evaluate("f => f.getBoundingClientRect().height")
    visit.view.locator("rect.bar[data-day='4']").click()  # the hourly line changes the body's height
    visit.view.locator("#hourly", has_text="Day 4").wait_for()
    body = visit.view_frame().evaluate("Math.ceil(document.body.getBoundingClientRect().height)")
    visit.page.wait_for_function(
        "h => document.querySelector('iframe.mcp-app-frame').dataset.reportedHeight === String(h)", arg=body
    )
    assert visit.frame.evaluate("f => f.getBoundingClientRect().height") == body != before
    assert "view → page: ui/notifications/size-changed" in visit.logged()


def test_the_theme_follows_the_palette(visit: Visit) -> None:
    inner = visit.view_frame()
    background = "getComputedStyle(document.body).backgroundColor"
    assert (inner.evaluate("document.documentElement.dataset.theme"), inner.evaluate(background)) == (
        "light",
        "rgb(255, 255, 255)",
    )
    switch_palette(visit.page, "dark")
    inner.wait_for_function("document.documentElement.dataset.theme === 'dark'")
    assert inner.evaluate(background) == "rgb(30, 33, 41)"
    assert "page → view: ui/notifications/host-context-changed" in visit.logged()


def test_on_a_static_copy_the_view_comes_from_the_readers_mcpref_demo(browser: Any, static_site_url: str) -> None:
    """Was: on a static copy (the published site is one) the view said it needed ./scripts/serve,
    though `mcpref demo` serves the weather desk and the sandbox proxy too."""
    with running(demo.make_app()) as local:
        opened = Visit(browser, static_site_url, local=local + "/")
        try:
            assert opened.view.locator("#title").inner_text() == "Forecast for Lisbon"
            proxy = urlsplit(opened.frame.get_attribute("src") or "")
            assert (proxy.hostname, proxy.port, proxy.path) == ("localhost", urlsplit(local).port, "/apps/sandbox")
            caption = opened.page.locator(".mcp-app-caption").inner_text()
            assert f"from {local}/mcp, sandboxed on http://localhost:{urlsplit(local).port}" in caption
            opened.view.locator("rect.bar[data-day='2']").click()  # the view's own call goes there too
            opened.view.locator("#hourly", has_text="Day 2").wait_for()
            assert any('"name":"get_hourly"' in body for body in opened.sent)
        finally:
            opened.context.close()


def test_on_a_static_copy_without_a_server_the_view_says_to_start_mcpref_demo(
    browser: Any, static_site_url: str
) -> None:
    nothing = f"http://127.0.0.1:{free_port()}/"
    context = open_context(browser, static_site_url, "desktop", "light")
    context.add_init_script(f"localStorage.setItem('mcpref.localServer', {nothing!r})")
    try:
        page = context.new_page()
        page.goto(static_site_url + PAGE, wait_until="load")
        page.wait_for_selector(".mcp-app-host[data-state=no-server]", timeout=15_000)
        caption = page.locator(".mcp-app-caption").inner_text()
        assert caption.startswith(
            "The live view needs a reference server on your machine: mcpref demo (Run it says how to install "
            "it; in a clone, ./scripts/serve), then reload this page. Tried "
        ), caption
        assert f"{static_site_url}/mcp: " in caption and f"{nothing}mcp: " in caption  # where it looked
        guide = page.locator(".mcp-app-caption a")  # how to install it: the page that says so, on this copy
        assert guide.get_attribute("href") == f"{static_site_url}/guides/run-it/#the-pages-endpoints-on-your-machine"
    finally:
        context.close()


def test_teardown_asks_the_view_first_then_removes_it(visit: Visit) -> None:
    """Last in this file: the view is gone after it."""
    visit.page.locator(".mcp-app-close").click()
    visit.page.wait_for_selector(".mcp-app-host[data-state=closed]")
    log = visit.logged()
    assert log[-2:] == ["page → view: ui/resource-teardown (id host-1)", "view → page: result (id host-1)"]
    assert visit.page.locator("iframe.mcp-app-frame").count() == 0
