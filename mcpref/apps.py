"""MCP Apps: the `io.modelcontextprotocol/ui` extension (SEP-1865, stable 2026-01-26), both sides.

A server registers a *view*: an HTML document under a `ui://` URI, with the mime type
`text/html;profile=mcp-app`, read with `resources/read` like any resource. A tool names its view
in `_meta.ui.resourceUri`, and says who may call it in `_meta.ui.visibility`: `model` (the agent),
`app` (the view, through the host). A host that declared the extension renders the view in a
sandboxed iframe and hands it the tool's input and result; any other client gets the tool as a
plain tool, whose text content is the answer (the text fallback).

```python
from mcpref import Server
from mcpref.apps import AppsExtension, ViewCsp

server = Server("desk", "1.0.0")
apps = server.add_extension(AppsExtension())
apps.view(
    "ui://desk/chart",
    "<!DOCTYPE html><html><body><canvas></canvas></body></html>",
    name="chart",
    csp=ViewCsp(connect_domains=("https://api.example.com",)),
    prefers_border=True,
)

@apps.tool("ui://desk/chart")
def show(city: str) -> str:
    return f"Sunny in {city}"
```

What the server sends depends on the request, because each request declares its own capabilities:
a client whose `io.modelcontextprotocol/ui` settings list the mime type in `mimeTypes` gets the
tools' `_meta.ui` and the app-only tools; any other client gets neither, only core tools. The
deprecated flat key `_meta["ui/resourceUri"]` is read (`ToolUi.of`) but never written.

The host's half lives here too, so server and host share one reading of each rule: `ToolUi.of`
(what a tool's metadata links it to), `View.of` (a `resources/read` content item, checked) and
`content_security_policy` (the CSP a host applies, from the view's `csp` or the restrictive default).
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .context import RequestContext
from .extensions import CallNext, Extension
from .jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, MCPError

logger = logging.getLogger("mcpref.apps")

UI_EXTENSION = "io.modelcontextprotocol/ui"
"""The extension's identifier (apps §Extension Identifier), under `capabilities.extensions`."""
APP_MIME_TYPE = "text/html;profile=mcp-app"
"""The one content type a view may have (apps §Content Requirements)."""
UI_SCHEME = "ui://"
"""The scheme every view's URI starts with (apps §UI Resource Format)."""
DEPRECATED_RESOURCE_URI = "ui/resourceUri"
"""The flat `_meta` key older servers put a tool's view under; read, never written (apps §Resource Discovery)."""
MODEL = "model"
"""In a tool's `visibility`: the agent may see and call it (apps §Visibility)."""
APP = "app"
"""In a tool's `visibility`: a view of the same server may call it (apps §Visibility)."""
DEFAULT_VISIBILITY = (MODEL, APP)
"""A tool that says nothing about its visibility is both the model's and the views'."""
PERMISSION_FEATURES = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}
"""The permissions a view may ask for, each with the Permission Policy feature it maps to."""

#: An origin a CSP list may hold: a scheme a view can fetch with, a host (or `*.` and a domain),
#: an optional port. Nothing else: a space, `;` or quote in a server's list would inject directives.
_ORIGIN = re.compile(
    r"(?:https?|wss?)://(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*(?::\d{1,5})?"
)
_DOCTYPE = re.compile(r"\s*(?:<!--.*?-->\s*)*<!doctype\s+html(?:\s[^>]*)?>", re.IGNORECASE | re.DOTALL)
_CSP_FIELDS = {
    "connectDomains": "connect_domains",
    "resourceDomains": "resource_domains",
    "frameDomains": "frame_domains",
    "baseUriDomains": "base_uri_domains",
}


def supports_apps(capabilities: Mapping[str, Any]) -> bool:
    """Whether client capabilities declare the extension with `text/html;profile=mcp-app` in
    `mimeTypes` (apps §Client (Host) Capabilities). Declaring it without `mimeTypes`, which the
    extension requires, or without this type, is not support: such a client gets the text fallback.

    Args:
        capabilities: The client capabilities of a request.

    Returns:
        True if the client renders views.
    """
    extensions = capabilities.get("extensions")
    settings = extensions.get(UI_EXTENSION) if isinstance(extensions, Mapping) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    return isinstance(mime_types, list) and APP_MIME_TYPE in mime_types


def client_settings() -> dict[str, Any]:
    """The settings a host declares for this extension, under `capabilities.extensions`.

    Returns:
        `{"mimeTypes": [APP_MIME_TYPE]}`, a new dict each time.
    """
    return {"mimeTypes": [APP_MIME_TYPE]}


# -- a view's metadata ---------------------------------------------------------------------


@dataclass(frozen=True)
class ViewCsp:
    """The origins a view may reach beyond its own document (apps §UI Resource Format, `McpUiResourceCsp`).

    Each is a tuple of origins such as `https://api.example.com` or `https://*.example.com`;
    empty means none, the secure default. Anything that is not such an origin is refused here.

    Args:
        connect_domains: Origins the view may fetch from or open sockets to (`connect-src`).
        resource_domains: Origins of its scripts, styles, images, media and fonts.
        frame_domains: Origins it may embed in frames (`frame-src`).
        base_uri_domains: Origins its `<base>` may name (`base-uri`).

    Raises:
        ValueError: An entry is not an origin (or a list is a bare string).
    """

    connect_domains: tuple[str, ...] = ()
    resource_domains: tuple[str, ...] = ()
    frame_domains: tuple[str, ...] = ()
    base_uri_domains: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for attribute, domains in self._lists():
            if isinstance(domains, str) or not all(isinstance(d, str) and _ORIGIN.fullmatch(d) for d in domains):
                raise ValueError(f"csp {attribute}: each entry must be an origin like 'https://api.example.com'")

    def _lists(self) -> Iterable[tuple[str, tuple[str, ...]]]:
        return ((key, getattr(self, attribute)) for key, attribute in _CSP_FIELDS.items())

    def to_meta(self) -> dict[str, list[str]]:
        """The `csp` object of `_meta.ui`.

        Returns:
            `connectDomains` and the others, only the lists that hold something.
        """
        return {key: list(domains) for key, domains in self._lists() if domains}

    @classmethod
    def of(cls, value: Any) -> ViewCsp:
        """Read a `csp` object a server sent.

        Args:
            value: The `csp` member of a view's `_meta.ui`, as received.

        Returns:
            The origins it declares.

        Raises:
            ValueError: It is not such an object.
        """
        if not isinstance(value, Mapping):
            raise ValueError("csp must be an object")
        lists = {}
        for key, attribute in _CSP_FIELDS.items():
            domains = value.get(key, [])
            if not isinstance(domains, list):
                raise ValueError(f"csp {key} must be a list of origins")
            lists[attribute] = tuple(domains)
        return cls(**lists)


def content_security_policy(csp: ViewCsp | None) -> str:
    """The `Content-Security-Policy` a host applies to a view (apps §Host Behavior, §Sandbox proxy).

    Without declared domains it is the extension's restrictive default (inline script and style,
    images and media from the document or `data:`, no connections), plus `frame-src 'none'`,
    `object-src 'none'` and `base-uri 'self'`. Each declared list widens exactly its directives,
    never more: a host MUST NOT allow undeclared domains.

    Args:
        csp: What the view declared; None for nothing.

    Returns:
        The header's value.
    """
    csp = csp or ViewCsp()
    resources = " ".join(csp.resource_domains)

    def source(base: str, extra: str) -> str:
        return f"{base} {extra}".strip()

    directives = [
        "default-src 'none'",
        source("script-src 'self' 'unsafe-inline'", resources),
        source("style-src 'self' 'unsafe-inline'", resources),
        source("img-src 'self' data:", resources),
        source("media-src 'self' data:", resources),
    ]
    if csp.resource_domains:
        directives.append(source("font-src 'self'", resources))
    directives += [
        "connect-src " + (" ".join(csp.connect_domains) or "'none'"),
        "frame-src " + (" ".join(csp.frame_domains) or "'none'"),
        "object-src 'none'",
        "base-uri " + (" ".join(csp.base_uri_domains) or "'self'"),
    ]
    return "; ".join(directives)


def permissions_policy(permissions: Iterable[str]) -> str:
    """The iframe `allow` attribute for the permissions a view asked for (apps §Sandbox proxy).

    Args:
        permissions: Of `camera`, `microphone`, `geolocation`, `clipboardWrite`; others are ignored.

    Returns:
        The attribute's value, such as `camera; microphone`; empty for none.
    """
    return "; ".join(PERMISSION_FEATURES[name] for name in PERMISSION_FEATURES if name in set(permissions))


@dataclass(frozen=True)
class View:
    """A UI resource: an HTML document a host renders for the tools that name its URI.

    `csp`, `permissions`, `domain` and `prefers_border` become the content's `_meta.ui`. The
    content requirements (apps §Content Requirements) are checked when the view is made, so a
    server that breaks them fails at start-up, and a host reading one (`View.of`) refuses it.

    Args:
        uri: Its `ui://` URI.
        html: A whole HTML5 document in UTF-8, `<!DOCTYPE html>` first: str is sent as `text`,
            bytes as a base64 `blob`.
        name: Its name in `resources/list`.
        title: A name for people.
        description: What it shows.
        csp: The origins it may reach; None: none.
        permissions: Of `camera`, `microphone`, `geolocation`, `clipboardWrite`; a host MAY
            grant them.
        domain: A dedicated sandbox origin; its format is the host's to define (apps §UI
            Resource Format).
        prefers_border: Whether the view would like the host to draw a border; None leaves it
            to the host.
        mime_type: Always `text/html;profile=mcp-app`, the only type the extension defines.

    Raises:
        ValueError: The view breaks the content requirements: a URI not under `ui://`, another
            type, HTML that is not a whole document, unknown permissions, a malformed domain.
    """

    uri: str
    html: str | bytes
    name: str = ""
    title: str | None = None
    description: str | None = None
    csp: ViewCsp | None = None
    permissions: frozenset[str] = frozenset()
    domain: str | None = None
    prefers_border: bool | None = None
    mime_type: str = APP_MIME_TYPE

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not self.uri.startswith(UI_SCHEME) or len(self.uri) == len(UI_SCHEME):
            raise ValueError(f"view URI {self.uri!r} must start with {UI_SCHEME} and name something after it")
        if self.mime_type != APP_MIME_TYPE:
            raise ValueError(f"view {self.uri}: mimeType must be {APP_MIME_TYPE!r}, not {self.mime_type!r}")
        _check_html(self.uri, self.html)
        unknown = set(self.permissions) - set(PERMISSION_FEATURES)
        if isinstance(self.permissions, str) or unknown:
            raise ValueError(f"view {self.uri}: permissions are among {sorted(PERMISSION_FEATURES)}, not {unknown}")
        if self.domain is not None and (not isinstance(self.domain, str) or not re.fullmatch(r"\S+", self.domain)):
            raise ValueError(f"view {self.uri}: domain must be a non-empty string without spaces")
        if self.prefers_border is not None and not isinstance(self.prefers_border, bool):
            raise ValueError(f"view {self.uri}: prefersBorder must be true or false")

    @property
    def text(self) -> str:
        """The HTML as text, however it was given."""
        return self.html if isinstance(self.html, str) else self.html.decode("utf-8")

    def ui_meta(self) -> dict[str, Any]:
        """`_meta.ui` of the content.

        Returns:
            `csp`, `permissions`, `domain` and `prefersBorder`, only what was set.
        """
        ui: dict[str, Any] = {}
        if self.csp is not None:
            ui["csp"] = self.csp.to_meta()
        if self.permissions:
            ui["permissions"] = {name: {} for name in PERMISSION_FEATURES if name in self.permissions}
        if self.domain is not None:
            ui["domain"] = self.domain
        if self.prefers_border is not None:
            ui["prefersBorder"] = self.prefers_border
        return ui

    def content(self) -> dict[str, Any]:
        """The `resources/read` content item.

        Returns:
            `uri`, `mimeType`, `text` for str or base64 `blob` for bytes, and `_meta.ui` if any.
        """
        item: dict[str, Any] = {"uri": self.uri, "mimeType": self.mime_type}
        if isinstance(self.html, str):
            item["text"] = self.html
        else:
            item["blob"] = base64.b64encode(self.html).decode("ascii")
        ui = self.ui_meta()
        if ui:
            item["_meta"] = {"ui": ui}
        return item

    def policy(self) -> str:
        """The CSP a host applies to this view.

        Returns:
            `content_security_policy(self.csp)`.
        """
        return content_security_policy(self.csp)

    @classmethod
    def of(cls, item: Any) -> View:
        """Read a content item of `resources/read` as a host must.

        Args:
            item: One item of the result's `contents`, as received.

        Returns:
            The view, checked as `View(...)` checks one.

        Raises:
            ValueError: The item breaks the rules.
        """
        if not isinstance(item, Mapping):
            raise ValueError("a view's content must be an object")
        if "text" in item and isinstance(item["text"], str):
            html: str | bytes = item["text"]
        elif "blob" in item and isinstance(item["blob"], str):
            try:
                html = base64.b64decode(item["blob"], validate=True)
            except binascii.Error:
                raise ValueError("a view's blob must be base64") from None
        else:
            raise ValueError("a view's content must be given as text or as a base64 blob")
        meta = item.get("_meta")
        ui = meta.get("ui", {}) if isinstance(meta, Mapping) else {}
        if not isinstance(ui, Mapping):
            raise ValueError("_meta.ui must be an object")
        permissions = ui.get("permissions", {})
        if not isinstance(permissions, Mapping):
            raise ValueError("_meta.ui.permissions must be an object")
        return cls(
            uri=item.get("uri"),  # type: ignore[arg-type]  # checked in __post_init__
            html=html,
            csp=ViewCsp.of(ui["csp"]) if "csp" in ui else None,
            permissions=frozenset(permissions),
            domain=ui.get("domain"),
            prefers_border=ui.get("prefersBorder"),
            mime_type=item.get("mimeType"),  # type: ignore[arg-type]
        )


def _check_html(uri: str, html: Any) -> None:
    """Text or bytes (sent as a base64 blob) holding an HTML5 document: UTF-8, `<!DOCTYPE html>` first.

    Full HTML5 validity is more than a server can cheaply prove; the doctype is what keeps a
    browser out of quirks mode, and what a fragment (the usual mistake) lacks.
    """
    if isinstance(html, bytes):
        try:
            html = html.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"view {uri}: the HTML must be UTF-8") from None
    if not isinstance(html, str):
        raise ValueError(f"view {uri}: the HTML must be given as str (text) or bytes (a blob)")
    if not _DOCTYPE.match(html.removeprefix("\ufeff")):
        raise ValueError(f"view {uri}: the HTML must be a whole HTML5 document, starting with <!DOCTYPE html>")


# -- a tool's link to its view ------------------------------------------------------------


@dataclass(frozen=True)
class ToolUi:
    """What a tool's `_meta.ui` says: the view it renders in, and who may call it.

    Args:
        resource_uri: The `ui://` URI of its view; None for a tool without one.
        visibility: Who may call it, of `"model"` and `"app"` (a view of the same server); both
            by default.

    Raises:
        ValueError: An empty, repeated or unknown visibility, or a URI not under `ui://`.
    """

    resource_uri: str | None = None
    visibility: tuple[str, ...] = DEFAULT_VISIBILITY

    def __post_init__(self) -> None:
        if (
            isinstance(self.visibility, str)
            or not self.visibility
            or len(set(self.visibility)) != len(self.visibility)
            or not set(self.visibility) <= {MODEL, APP}
        ):
            raise ValueError(f"visibility must be a non-empty list of 'model' and 'app', not {self.visibility!r}")
        if self.resource_uri is not None and not (
            isinstance(self.resource_uri, str) and self.resource_uri.startswith(UI_SCHEME)
        ):
            raise ValueError(f"resourceUri must be a {UI_SCHEME} URI, not {self.resource_uri!r}")

    @property
    def for_model(self) -> bool:
        """The agent may see and call the tool: a host lists it to the model only then."""
        return MODEL in self.visibility

    @property
    def for_app(self) -> bool:
        """A view of the same server may call the tool: a host refuses the view's call otherwise."""
        return APP in self.visibility

    def to_meta(self) -> dict[str, Any]:
        """The tool's `_meta.ui`; the flat `ui/resourceUri` is deprecated and never written.

        Returns:
            `resourceUri` if set, and `visibility`.
        """
        ui: dict[str, Any] = {}
        if self.resource_uri is not None:
            ui["resourceUri"] = self.resource_uri
        ui["visibility"] = list(self.visibility)
        return ui

    @classmethod
    def of(cls, tool: Mapping[str, Any]) -> ToolUi | None:
        """Read a tool definition from `tools/list`: its `_meta.ui`, or the deprecated flat
        `ui/resourceUri` when `ui.resourceUri` is absent; None for a tool that has neither.

        Args:
            tool: One tool of a `tools/list` result.

        Returns:
            What it says, or None.

        Raises:
            ValueError: `_meta.ui` or the flat URI is malformed (a host then gives the tool no view).
        """
        meta = tool.get("_meta")
        if not isinstance(meta, Mapping):
            return None
        ui = meta.get("ui")
        flat = meta.get(DEPRECATED_RESOURCE_URI)
        if ui is None and flat is None:
            return None
        if ui is not None and not isinstance(ui, Mapping):
            raise ValueError("_meta.ui must be an object")
        ui = ui or {}
        visibility = ui.get("visibility", list(DEFAULT_VISIBILITY))
        if not isinstance(visibility, list):
            raise ValueError("_meta.ui.visibility must be a list")
        return cls(ui.get("resourceUri", flat), tuple(visibility))


# -- the server's half ----------------------------------------------------------------------


class AppsExtension(Extension):
    """Serve views and link tools to them; add it with `server.add_extension(AppsExtension())`.

    `view(...)` registers a view as a resource of the server; `link(tool, uri)` (or the
    `tool(uri)` decorator) links a registered tool to a registered view. Both refuse, at
    registration, what the extension does not allow: a view that breaks the content
    requirements, a link to a view that does not exist
    ([MCP Apps](https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx)).
    """

    id = UI_EXTENSION

    def __init__(self) -> None:
        #: Views by URI, and tools' links by tool name.
        self.views: dict[str, View] = {}
        self.links: dict[str, ToolUi] = {}
        self._server: Any = None

    def added_to(self, server: Any) -> None:
        """Keep the server, where views and tools are registered.

        Args:
            server: The `Server` the extension was added to.
        """
        self._server = server

    def settings(self) -> dict[str, Any]:
        """What `server/discover` advertises.

        Returns:
            The content types its views use (`mimeTypes`).
        """
        return {"mimeTypes": [APP_MIME_TYPE]}

    def _require_server(self) -> Any:
        if self._server is None:
            raise RuntimeError("add the extension to a server first: server.add_extension(AppsExtension())")
        return self._server

    def view(
        self,
        uri: str,
        html: str | bytes,
        *,
        name: str,
        title: str | None = None,
        description: str | None = None,
        csp: ViewCsp | None = None,
        permissions: Iterable[str] = (),
        domain: str | None = None,
        prefers_border: bool | None = None,
    ) -> View:
        """Register a view: a resource at `uri` whose content is `html` (str is sent as `text`,
        bytes as a base64 `blob`). Listed in `resources/list` like any resource, so every view a
        server has can be enumerated and reviewed.

        Args:
            uri: Its `ui://` URI.
            html: A whole HTML5 document in UTF-8.
            name: Its name in `resources/list`.
            title: A name for people.
            description: What it shows.
            csp: The origins it may reach beyond its document; None: none.
            permissions: Of `camera`, `microphone`, `geolocation`, `clipboardWrite`.
            domain: A dedicated sandbox origin, in the host's format.
            prefers_border: Whether it would like a border drawn; None leaves it to the host.

        Returns:
            The view.

        Raises:
            ValueError: The view breaks the content requirements, or the URI is taken.
            RuntimeError: The extension is not added to a server yet.
        """
        server = self._require_server()
        view = View(uri, html, name, title, description, csp, frozenset(permissions), domain, prefers_border)
        if uri in self.views:
            raise ValueError(f"view {uri} is already registered")
        content = view.content()
        server.resource(uri, name=name, title=title, description=description, mime_type=APP_MIME_TYPE)(
            lambda: [content]
        )
        self.views[uri] = view
        return view

    def link(
        self, tool: str, resource_uri: str | None = None, *, visibility: Iterable[str] = DEFAULT_VISIBILITY
    ) -> ToolUi:
        """Link the registered tool `tool` to the view at `resource_uri` (which must be registered),
        and say who may call it.

        Args:
            tool: The tool's name.
            resource_uri: The view's URI; None links no view, only sets `visibility`.
            visibility: `("model", "app")` (the default), `("app",)` (only a view may call it;
                hidden from the model and from clients that render no views) or `("model",)`.

        Returns:
            The link, as `_meta.ui` will show it.

        Raises:
            ValueError: The tool is not registered or already linked, or the view does not exist.
            RuntimeError: The extension is not added to a server yet.
        """
        server = self._require_server()
        if server.tools.get(tool) is None:
            raise ValueError(f"tool {tool!r} is not registered; register it before linking it to a view")
        if resource_uri is not None and resource_uri not in self.views:
            raise ValueError(f"tool {tool!r}: view {resource_uri!r} does not exist; register it with view() first")
        if tool in self.links:
            raise ValueError(f"tool {tool!r} is already linked")
        link = ToolUi(resource_uri, tuple(visibility))
        self.links[tool] = link
        return link

    def tool(
        self, resource_uri: str | None = None, *, visibility: Iterable[str] = DEFAULT_VISIBILITY, **options: Any
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a tool and link it to a view, in one decorator.

        Args:
            resource_uri: The view's URI, as for `link`.
            visibility: Who may call it, as for `link`.
            **options: As for `Server.tool` (`name`, `input_schema`, ...).

        Returns:
            A decorator that registers and links the function and returns it unchanged.

        Raises:
            ValueError: The view does not exist, or the link is malformed (when applied).
            RuntimeError: The extension is not added to a server yet.
        """
        register = self._require_server().tool(**options)

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            ToolUi(resource_uri, tuple(visibility))  # refuse a bad link before registering anything
            if resource_uri is not None and resource_uri not in self.views:
                raise ValueError(f"view {resource_uri!r} does not exist; register it with view() first")
            register(fn)
            self.link(options.get("name") or fn.__name__, resource_uri, visibility=visibility)
            return fn

        return decorate

    async def around(self, ctx: RequestContext, call_next: CallNext) -> Any:
        """Show linked tools to hosts as linked, to other clients as plain tools without the
        app-only ones; an app-only tool called by a client that renders no views is unknown.

        Args:
            ctx: The request's context.
            call_next: The core's handler.

        Returns:
            The result, its tools' `_meta.ui` as the client may see it.

        Raises:
            MCPError: -32602 "Unknown tool" for an app-only tool called by a client that renders
                no views, as for a tool that does not exist.
        """
        if not self.links or ctx.method not in ("tools/list", "tools/call"):
            return await call_next(ctx)
        host_renders = supports_apps(ctx.client_capabilities)
        name = ctx.params.get("name") if ctx.method == "tools/call" else None
        link = self.links.get(name) if isinstance(name, str) else None
        if link is not None and not link.for_model and not host_renders:
            # Only a view may call an app-only tool, and this client renders none: the tool is
            # not there for it, with the error the core gives any unknown tool.
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        result = await call_next(ctx)
        if not isinstance(result, dict):
            return result  # an input round (InputRequired), answered as the core answers it
        if ctx.method == "tools/list":
            self._show_links(result, host_renders)
        elif link is not None:
            self._check_fallback(name, result)
        return result

    def _show_links(self, result: dict[str, Any], host_renders: bool) -> None:
        """A host gets each linked tool's `_meta.ui`; any other client gets the linked tools as
        plain tools and not the app-only ones, which nothing but a view may call."""
        shown = []
        for tool in result.get("tools", []):
            link = self.links.get(tool.get("name"))
            if link is None:
                shown.append(tool)
            elif host_renders:
                shown.append({**tool, "_meta": {**tool.get("_meta", {}), "ui": link.to_meta()}})
            elif link.for_model:
                shown.append(tool)
        result["tools"] = shown

    def _check_fallback(self, name: Any, result: dict[str, Any]) -> None:
        """A linked tool MUST answer with a meaningful content array even when a view renders it
        (apps §Graceful Degradation): the content is all a client without the extension shows."""
        if result.get("resultType", "complete") == "complete" and not result.get("content"):
            logger.error("tool %r, linked to a view, answered with empty content: no text fallback", name)
            raise MCPError(INTERNAL_ERROR, f"Internal error: tool {name!r} answered without content")


__all__ = [
    "APP",
    "APP_MIME_TYPE",
    "DEFAULT_VISIBILITY",
    "DEPRECATED_RESOURCE_URI",
    "MODEL",
    "PERMISSION_FEATURES",
    "UI_EXTENSION",
    "UI_SCHEME",
    "AppsExtension",
    "ToolUi",
    "View",
    "ViewCsp",
    "client_settings",
    "content_security_policy",
    "permissions_policy",
    "supports_apps",
]
