"""The host's MCP Apps side (mcpref/examples/host/apps.py) against the real weather desk under uvicorn.

The weather desk links `get_forecast` to its chart, offers `get_hourly` to the view only, and
marks `file_report` model-only. Two servers made for the tests stand beside it: one written
before `_meta.ui` existed (the flat `ui/resourceUri` key), one whose view tries to widen its
Content Security Policy with a forged origin.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from docsite import app as site_app
from mcpref import RequestContext, Server, StreamableHTTP
from mcpref.apps import APP_MIME_TYPE, DEPRECATED_RESOURCE_URI, UI_EXTENSION, content_security_policy
from mcpref.examples.host import AppCallRefused, ConsentGate, Host, HostError, Registry, UnknownTool
from mcpref.examples.reference_server.views import CHART_HTML, CHART_URI
from mcpref.extensions import CallNext, Extension
from tests.conftest import running

PAGE = "<!DOCTYPE html><html><body>old</body></html>"


class FlatKey(Extension):
    """A server from before `_meta.ui`: its tool names its view under the deprecated flat key."""

    id = UI_EXTENSION

    async def around(self, ctx: RequestContext, call_next: CallNext) -> Any:
        result = await call_next(ctx)
        if ctx.method == "tools/list":
            for tool in result["tools"]:
                tool["_meta"] = {DEPRECATED_RESOURCE_URI: "ui://old/page"}
        return result


def old_server(name: str, ui: dict[str, Any] | None = None) -> Server:
    """A server from before `_meta.ui` (the flat key), whose view carries `ui` as its `_meta.ui`."""
    server = Server(name, "0.9")
    server.add_extension(FlatKey())

    @server.tool(input_schema={"type": "object"})
    def show() -> str:
        """Shows the old page."""
        return "shown"

    @server.resource("ui://old/page", mime_type=APP_MIME_TYPE)
    def page() -> list[dict[str, Any]]:
        content = {"uri": "ui://old/page", "mimeType": APP_MIME_TYPE, "text": PAGE}
        return [{**content, "_meta": {"ui": ui}} if ui is not None else content]

    return server


#: The forger's view hides a directive in what should be an origin.
FORGED = {"csp": {"connectDomains": ["https://a.example; connect-src *"]}}
#: The reaching server's view declares origins beyond its sandbox, as it may.
REACHING = {"csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]}}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    paths = {
        "/old/mcp": StreamableHTTP(old_server("old"), path=None),
        "/forger/mcp": StreamableHTTP(old_server("forger", FORGED), path=None),
        "/reaching/mcp": StreamableHTTP(old_server("reaching", REACHING), path=None),
    }

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await paths.get(scope.get("path", ""), site_app)(scope, receive, send)

    with running(app) as base:
        yield base


def registry(url: str) -> Registry:
    registry = Registry()
    registry.add("weather", f"{url}/mcp", trust_annotations=True)
    registry.add("tides", f"{url}/tides/mcp")
    registry.add("old", f"{url}/old/mcp")
    registry.add("forger", f"{url}/forger/mcp")
    registry.add("reaching", f"{url}/reaching/mcp")
    return registry


def host(url: str, *, apps: bool = True) -> Host:
    gate = ConsentGate()
    gate.allow("weather", "get_forecast")
    return Host(registry(url), principal="alice", consent=gate, listen=False, apps=apps)


@pytest.mark.anyio
async def test_the_model_never_sees_a_tool_only_views_may_call(url: str) -> None:
    async with host(url) as apps_host:
        await apps_host.start()
        catalogue = apps_host.catalogue
        assert "get_hourly" in {t["name"] for t in apps_host.servers["weather"].tools}  # listed to the host
    assert "weather.get_hourly" not in catalogue
    assert catalogue["weather.get_forecast"].view == CHART_URI
    assert catalogue["weather.file_report"].view is None
    assert catalogue["old.show"].view == "ui://old/page"  # read from the deprecated flat key
    assert catalogue["tides.get_forecast"].view is None


@pytest.mark.anyio
async def test_a_host_without_the_extension_gets_plain_tools(url: str) -> None:
    async with host(url, apps=False) as plain:
        await plain.start()
        weather = plain.servers["weather"].tools
        result = await plain.call("weather.get_forecast", {"city": "Lisbon", "days": 2})
    assert "get_hourly" not in {t["name"] for t in weather}
    assert all("_meta" not in t for t in weather)
    assert json.loads(result.text)["city"] == "Lisbon"  # the text fallback: the forecast, in its content


async def open_views(url: str, caplog: pytest.LogCaptureFixture, *names: str) -> tuple[list[Any], list[Any]]:
    """The views of `names`, opened with the host's log captured, and the weather desk's reads."""
    async with host(url) as apps_host:
        await apps_host.start()
        with caplog.at_level(logging.INFO, "mcpref.examples.host.apps"):
            views = [await apps_host.open_view(name) for name in names]
        reads = [frame.params for frame in apps_host.frames.of("weather") if frame.method == "resources/read"]
    return views, reads


@pytest.mark.anyio
async def test_the_view_is_fetched_with_resources_read_checked_and_its_csp_logged(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    (view,), reads = await open_views(url, caplog, "weather.get_forecast")
    assert (view.server, view.tool, view.view.uri, view.view.text) == ("weather", "get_forecast", CHART_URI, CHART_HTML)
    assert view.view.prefers_border is True
    assert view.csp == content_security_policy(None)  # the chart declares no csp: the restrictive default
    assert reads == [{"uri": CHART_URI}]
    assert f"weather: view {CHART_URI} for get_forecast, Content-Security-Policy: {view.csp}" in caplog.text


@pytest.mark.anyio
async def test_a_view_that_declares_outside_origins_is_applied_with_a_warning(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    (view, quiet), _ = await open_views(url, caplog, "reaching.show", "weather.get_forecast")
    assert "connect-src https://api.example.com" in view.csp
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned == [
        "reaching: view ui://old/page for show reaches outside its sandbox: https://api.example.com, https://cdn.example.com"
    ]
    assert quiet.csp == content_security_policy(None)


@pytest.mark.anyio
async def test_a_view_whose_csp_smuggles_a_directive_is_refused(url: str) -> None:
    async with host(url) as apps_host:
        await apps_host.start()
        with pytest.raises(HostError, match="refused: csp connectDomains"):
            await apps_host.open_view("forger.show")


@pytest.mark.anyio
async def test_a_tool_without_a_view_has_none_to_open(url: str) -> None:
    async with host(url) as apps_host:
        await apps_host.start()
        with pytest.raises(UnknownTool):
            await apps_host.open_view("weather.file_report")


@pytest.mark.anyio
async def test_a_view_may_call_an_app_tool_of_its_own_server(url: str) -> None:
    async with host(url) as apps_host:
        await apps_host.start()
        view = await apps_host.open_view("weather.get_forecast")
        hourly = await apps_host.app_call(view, "get_hourly", {"city": "Lisbon", "day": 2})
        forecast = await apps_host.app_call(view, "get_forecast", {"city": "Lisbon"})  # model and app
    assert hourly.result["structuredContent"]["day"] == 2
    assert len(hourly.result["structuredContent"]["hours"]) == 8
    assert forecast.result["structuredContent"]["city"] == "Lisbon"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "why"),
    [
        ("file_report", r"not callable by views \(visibility: \['model'\]\)"),
        ("tides.get_forecast", "only its own server's tools"),  # another server's tool, by catalogue name
        ("show", "only its own server's tools"),  # a tool of the old server, not of the weather desk
        ("no_such_tool", "only its own server's tools"),
    ],
)
async def test_a_views_call_outside_its_rights_is_refused_before_anything_is_sent(
    url: str, tool: str, why: str
) -> None:
    async with host(url) as apps_host:
        await apps_host.start()
        view = await apps_host.open_view("weather.get_forecast")
        before = [*apps_host.frames.of("weather"), *apps_host.frames.of("old")]
        with pytest.raises(AppCallRefused, match=why):
            await apps_host.app_call(view, tool, {"station": "lisbon", "note": "from the view"})
        after = [*apps_host.frames.of("weather"), *apps_host.frames.of("old")]
    assert after == before


@pytest.mark.anyio
async def test_the_model_cannot_call_an_app_only_tool_through_the_host(url: str) -> None:
    async with host(url) as apps_host:
        await apps_host.start()
        with pytest.raises(UnknownTool):
            await apps_host.call("weather.get_hourly", {"city": "Lisbon", "day": 1})
