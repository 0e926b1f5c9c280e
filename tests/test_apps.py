"""MCP Apps (`mcpref.apps`): views, tools linked to them, what each client is shown, and the host's reading."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest

from mcpref import INTERNAL_ERROR, INVALID_PARAMS, MCPError, Server, ToolResult
from mcpref.apps import (
    APP_MIME_TYPE,
    DEPRECATED_RESOURCE_URI,
    UI_EXTENSION,
    AppsExtension,
    ToolUi,
    View,
    ViewCsp,
    client_settings,
    content_security_policy,
    permissions_policy,
    supports_apps,
)
from tests.test_extensions import handle

HTML = "<!DOCTYPE html><html><head><title>chart</title></head><body><canvas></canvas></body></html>"
HOST = {"extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}}
URI = "ui://desk/chart"


@pytest.fixture
def server() -> Server:
    server = Server("desk", "1.0.0")
    apps = server.add_extension(AppsExtension())
    apps.view(URI, HTML, name="chart", csp=ViewCsp(connect_domains=("https://api.example.com",)), prefers_border=True)

    @apps.tool(URI, output_schema={"type": "object"})
    def forecast(city: str) -> dict[str, Any]:
        """Forecast, as data and as text."""
        return {"city": city, "highC": 21}

    @apps.tool(URI, visibility=("app",))
    def refresh() -> str:
        """Fetch the chart's data again."""
        return "refreshed"

    @server.tool()
    def plain() -> str:
        return "plain"

    return server


def tools(server: Server, capabilities: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in handle(server, "tools/list", {}, capabilities)["tools"]}


# -- negotiation ---------------------------------------------------------------------------


def test_the_server_advertises_the_extension_with_its_views_content_type(server: Server) -> None:
    extensions = handle(server, "server/discover", {}, {})["capabilities"]["extensions"]
    assert extensions == {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}


@pytest.mark.parametrize(
    ("capabilities", "renders"),
    [
        (HOST, True),
        ({"extensions": {UI_EXTENSION: client_settings()}}, True),
        ({"extensions": {UI_EXTENSION: {"mimeTypes": ["text/html", APP_MIME_TYPE]}}}, True),
        ({}, False),
        ({"extensions": {UI_EXTENSION: {}}}, False),  # mimeTypes is required
        ({"extensions": {UI_EXTENSION: {"mimeTypes": ["text/html"]}}}, False),
        ({"extensions": {UI_EXTENSION: {"mimeTypes": APP_MIME_TYPE}}}, False),  # a string, not a list
        ({"extensions": {"com.example/ui": {"mimeTypes": [APP_MIME_TYPE]}}}, False),
        ({"extensions": []}, False),
    ],
)
def test_support_is_the_extension_with_the_mime_type_in_mime_types(capabilities: dict[str, Any], renders: bool) -> None:
    assert supports_apps(capabilities) is renders


def test_a_host_sees_each_linked_tools_ui_meta_and_the_app_only_tools(server: Server) -> None:
    listed = tools(server, HOST)
    assert list(listed) == ["forecast", "refresh", "plain"]
    assert listed["forecast"]["_meta"] == {"ui": {"resourceUri": URI, "visibility": ["model", "app"]}}
    assert listed["refresh"]["_meta"] == {"ui": {"resourceUri": URI, "visibility": ["app"]}}
    assert "_meta" not in listed["plain"]


def test_the_deprecated_flat_key_is_never_written(server: Server) -> None:
    assert all(DEPRECATED_RESOURCE_URI not in tool.get("_meta", {}) for tool in tools(server, HOST).values())


@pytest.mark.parametrize("capabilities", [{}, {"extensions": {UI_EXTENSION: {"mimeTypes": ["text/html"]}}}])
def test_a_client_without_the_extension_gets_plain_tools_and_no_app_only_ones(
    server: Server, capabilities: dict[str, Any]
) -> None:
    listed = tools(server, capabilities)
    assert list(listed) == ["forecast", "plain"]
    assert all("_meta" not in tool for tool in listed.values())


def test_a_client_without_the_extension_cannot_call_an_app_only_tool(server: Server) -> None:
    with pytest.raises(MCPError) as caught:
        handle(server, "tools/call", {"name": "refresh", "arguments": {}}, {})
    assert (caught.value.code, caught.value.message) == (INVALID_PARAMS, "Unknown tool: refresh")
    assert handle(server, "tools/call", {"name": "refresh", "arguments": {}}, HOST)["content"][0]["text"] == "refreshed"


def test_the_same_tool_answers_with_text_whether_or_not_the_client_renders_views(server: Server) -> None:
    call = {"name": "forecast", "arguments": {"city": "Lisbon"}}
    with_view, without = handle(server, "tools/call", call, HOST), handle(server, "tools/call", call, {})
    assert with_view == without
    assert without["content"] == [{"type": "text", "text": '{"city": "Lisbon", "highC": 21}'}]
    assert without["structuredContent"] == {"city": "Lisbon", "highC": 21}


def test_a_linked_tool_answering_without_content_is_the_servers_bug(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("desk", "1.0.0")
    apps = server.add_extension(AppsExtension())
    apps.view(URI, HTML, name="chart")

    @apps.tool(URI)
    def silent() -> ToolResult:
        return ToolResult(content=[], structured={"x": 1})

    with caplog.at_level(logging.ERROR, "mcpref.apps"), pytest.raises(MCPError) as caught:
        handle(server, "tools/call", {"name": "silent", "arguments": {}}, {})
    assert caught.value.code == INTERNAL_ERROR
    assert "no text fallback" in caplog.text


def test_a_tool_error_of_a_linked_tool_still_reaches_the_client() -> None:
    server = Server("desk", "1.0.0")
    apps = server.add_extension(AppsExtension())
    apps.view(URI, HTML, name="chart")

    @apps.tool(URI, input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    def needs_n(n: int) -> str:
        return str(n)

    result = handle(server, "tools/call", {"name": "needs_n", "arguments": {}}, HOST)
    assert result["isError"] is True


# -- views ---------------------------------------------------------------------------------


def test_a_view_is_read_with_its_mime_type_and_ui_meta(server: Server) -> None:
    result = handle(server, "resources/read", {"uri": URI}, HOST)
    assert result["contents"] == [
        {
            "uri": URI,
            "mimeType": APP_MIME_TYPE,
            "text": HTML,
            "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True}},
        }
    ]


def test_a_view_is_listed_as_a_resource(server: Server) -> None:
    listed = handle(server, "resources/list", {}, {})["resources"]
    assert listed == [{"uri": URI, "name": "chart", "mimeType": APP_MIME_TYPE}]


def test_a_view_given_as_bytes_is_a_base64_blob_and_reads_back() -> None:
    server = Server("desk", "1.0.0")
    apps = server.add_extension(AppsExtension())
    apps.view(URI, HTML.encode(), name="chart", permissions=["geolocation", "camera"], domain="abc.example.net")
    (item,) = handle(server, "resources/read", {"uri": URI}, HOST)["contents"]
    assert base64.b64decode(item["blob"]).decode() == HTML
    assert "text" not in item
    assert item["_meta"]["ui"] == {"permissions": {"camera": {}, "geolocation": {}}, "domain": "abc.example.net"}
    view = View.of(item)
    assert (view.text, view.permissions, view.domain) == (HTML, {"camera", "geolocation"}, "abc.example.net")


def test_a_view_without_metadata_has_no_meta() -> None:
    assert "_meta" not in View(URI, HTML).content()


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"uri": "https://desk/chart"}, "must start with ui://"),
        ({"uri": "ui://"}, "must start with ui://"),
        ({"mime_type": "text/html"}, "mimeType must be"),
        ({"html": "<div>a fragment</div>"}, "whole HTML5 document"),
        ({"html": b"\xff<!DOCTYPE html>"}, "UTF-8"),
        ({"html": 42}, "given as str"),
        ({"permissions": frozenset({"usb"})}, "permissions are among"),
        ({"domain": "two words"}, "domain must be"),
        ({"prefers_border": "yes"}, "prefersBorder"),
    ],
)
def test_a_view_breaking_the_content_requirements_is_refused(arguments: dict[str, Any], complaint: str) -> None:
    fields: dict[str, Any] = {"uri": URI, "html": HTML, **arguments}
    with pytest.raises(ValueError, match=complaint):
        View(**fields)


@pytest.mark.parametrize(
    "html",
    [HTML, "<!doctype html><p>short</p>", "\ufeff<!DOCTYPE html>", "  <!-- built 1 -->\n<!DOCTYPE HTML>\n<html>"],
)
def test_a_whole_document_with_its_doctype_is_accepted(html: str) -> None:
    assert View(URI, html).text == html


def test_the_server_refuses_the_same_view_twice_and_views_before_it_is_added() -> None:
    server = Server("desk", "1.0.0")
    apps = AppsExtension()
    with pytest.raises(RuntimeError, match="add the extension"):
        apps.view(URI, HTML, name="chart")
    server.add_extension(apps).view(URI, HTML, name="chart")
    with pytest.raises(ValueError, match="already registered"):
        apps.view(URI, HTML, name="chart")


# -- links ---------------------------------------------------------------------------------


def test_a_link_to_a_view_that_does_not_exist_is_refused_before_the_tool_is_registered() -> None:
    server = Server("desk", "1.0.0")
    apps = server.add_extension(AppsExtension())
    with pytest.raises(ValueError, match="does not exist"):

        @apps.tool("ui://desk/missing")
        def lost() -> str:
            return "lost"

    assert server.tools.get("lost") is None


def test_link_needs_a_registered_tool_and_links_it_once(server: Server) -> None:
    apps = server.extensions[UI_EXTENSION]
    assert isinstance(apps, AppsExtension)
    with pytest.raises(ValueError, match="not registered"):
        apps.link("nothing", URI)
    with pytest.raises(ValueError, match="does not exist"):
        apps.link("plain", "ui://desk/missing")
    with pytest.raises(ValueError, match="already linked"):
        apps.link("forecast", URI)
    assert apps.link("plain", visibility=["model"]) == ToolUi(None, ("model",))
    assert tools(server, HOST)["plain"]["_meta"] == {"ui": {"visibility": ["model"]}}


@pytest.mark.parametrize("visibility", [(), ("agent",), ("app", "app"), "app"])
def test_a_visibility_that_is_not_model_and_app_is_refused(visibility: Any) -> None:
    with pytest.raises(ValueError, match="visibility"):
        ToolUi(URI, visibility)


# -- the host's reading --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"ui": {"resourceUri": URI, "visibility": ["app"]}}, ToolUi(URI, ("app",))),
        ({"ui": {"resourceUri": URI}}, ToolUi(URI, ("model", "app"))),
        ({DEPRECATED_RESOURCE_URI: URI}, ToolUi(URI, ("model", "app"))),
        ({"ui": {"resourceUri": URI}, DEPRECATED_RESOURCE_URI: "ui://desk/old"}, ToolUi(URI)),
        ({"ui": {"visibility": ["model"]}, DEPRECATED_RESOURCE_URI: URI}, ToolUi(URI, ("model",))),
        ({"other": 1}, None),
    ],
)
def test_a_host_reads_the_link_preferring_ui_resource_uri_to_the_flat_key(
    meta: dict[str, Any], expected: ToolUi | None
) -> None:
    assert ToolUi.of({"name": "t", "_meta": meta}) == expected


def test_a_tool_without_meta_has_no_link() -> None:
    assert ToolUi.of({"name": "t"}) is None


@pytest.mark.parametrize(
    "meta",
    [{"ui": "ui://x"}, {"ui": {"visibility": "app"}}, {"ui": {"visibility": []}}, {"ui": {"resourceUri": "https://x"}}],
)
def test_a_malformed_link_is_an_error_for_the_host(meta: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ToolUi.of({"name": "t", "_meta": meta})


def test_visibility_says_who_may_call() -> None:
    assert (ToolUi(URI, ("app",)).for_model, ToolUi(URI, ("app",)).for_app) == (False, True)
    assert (ToolUi(URI, ("model",)).for_model, ToolUi(URI, ("model",)).for_app) == (True, False)


@pytest.mark.parametrize(
    "item",
    [
        "not an object",
        {"uri": URI, "mimeType": APP_MIME_TYPE},
        {"uri": URI, "mimeType": APP_MIME_TYPE, "blob": "***"},
        {"uri": URI, "mimeType": "text/html", "text": HTML},
        {"uri": "file:///chart.html", "mimeType": APP_MIME_TYPE, "text": HTML},
        {"uri": URI, "mimeType": APP_MIME_TYPE, "text": HTML, "_meta": {"ui": []}},
        {"uri": URI, "mimeType": APP_MIME_TYPE, "text": HTML, "_meta": {"ui": {"permissions": ["camera"]}}},
        {"uri": URI, "mimeType": APP_MIME_TYPE, "text": HTML, "_meta": {"ui": {"csp": {"connectDomains": "x"}}}},
        {"uri": URI, "mimeType": APP_MIME_TYPE, "text": HTML, "_meta": {"ui": {"csp": []}}},
    ],
)
def test_a_host_refuses_content_that_breaks_the_rules(item: Any) -> None:
    with pytest.raises(ValueError):
        View.of(item)


# -- content security policy ---------------------------------------------------------------


def test_without_declared_domains_the_policy_is_the_restrictive_default() -> None:
    assert content_security_policy(None) == (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; "
        "object-src 'none'; base-uri 'self'"
    )
    assert content_security_policy(ViewCsp()) == content_security_policy(None)


def test_each_declared_list_widens_its_own_directives_only() -> None:
    csp = ViewCsp(
        connect_domains=("https://api.example.com", "wss://live.example.com"),
        resource_domains=("https://*.cdn.example.com",),
        frame_domains=("https://player.example.com",),
        base_uri_domains=("https://base.example.com",),
    )
    directives = dict(d.split(" ", 1) for d in content_security_policy(csp).split("; "))
    assert directives == {
        "default-src": "'none'",
        "script-src": "'self' 'unsafe-inline' https://*.cdn.example.com",
        "style-src": "'self' 'unsafe-inline' https://*.cdn.example.com",
        "img-src": "'self' data: https://*.cdn.example.com",
        "media-src": "'self' data: https://*.cdn.example.com",
        "font-src": "'self' https://*.cdn.example.com",
        "connect-src": "https://api.example.com wss://live.example.com",
        "frame-src": "https://player.example.com",
        "object-src": "'none'",
        "base-uri": "https://base.example.com",
    }


@pytest.mark.parametrize(
    "domain",
    [
        "https://a.example; script-src *",
        "*",
        "'unsafe-eval'",
        "https://a.example/path",
        "javascript://x",
        "data:",
        "https://",
        " https://a.example",
        "https://a.example:123456",
    ],
)
def test_a_domain_that_is_not_an_origin_is_refused_so_it_cannot_inject_directives(domain: str) -> None:
    with pytest.raises(ValueError, match="origin"):
        ViewCsp(connect_domains=(domain,))


@pytest.mark.parametrize("domain", ["https://api.example.com", "wss://x.example:8443", "http://127.0.0.1:9000"])
def test_origins_are_accepted(domain: str) -> None:
    assert ViewCsp.of({"resourceDomains": [domain]}).to_meta() == {"resourceDomains": [domain]}


def test_a_csp_list_given_as_a_string_is_refused() -> None:
    with pytest.raises(ValueError):
        ViewCsp(connect_domains="https://api.example.com")  # type: ignore[arg-type]


def test_permissions_map_to_the_iframe_allow_attribute() -> None:
    assert permissions_policy({"clipboardWrite", "camera"}) == "camera; clipboard-write"
    assert permissions_policy(()) == ""
