"""Resources: fixed URIs and URI templates behind `resources/list`, `resources/templates/list`
and `resources/read` (server/resources.mdx).

A read looks for an exact URI first, then tries the templates in registration order. A URI
that nothing serves is -32602 with the URI in `data`: the 2026-07-28 revision retired -32002
and forbids answering a missing resource with empty `contents`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from ._handlers import Completer, call_handler, wants_context
from .context import RequestContext
from .jsonrpc import INVALID_PARAMS, MCPError
from .mrtr import InputRequired
from .registry import Registry, shown


@dataclass
class Resource:
    uri: str
    name: str
    fn: Callable[..., Any]
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    #: Who may see the resource: called with the principal; None shows it to everyone.
    visible: Callable[[str | None], bool] | None = None

    def __post_init__(self) -> None:
        _check_scheme(self.uri)
        self._with_ctx = wants_context(self.fn)

    def definition(self) -> dict[str, Any]:
        return _describe({"uri": self.uri, "name": self.name}, self.title, self.description, self.mime_type)

    async def read(self, ctx: RequestContext) -> list[dict[str, Any]] | InputRequired:
        returned = await call_handler(self.fn, {}, ctx, self._with_ctx)
        return contents(self.uri, returned, self.mime_type)


@dataclass
class ResourceTemplate:
    """A family of resources, such as `file:///{path}`. Level-1 RFC 6570 variables (`{name}`)
    match one path segment; `{+name}` matches the rest of the URI, slashes included."""

    uri_template: str
    name: str
    fn: Callable[..., Any]
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    #: Completion functions by variable name, for `completion/complete` with a `ref/resource`.
    complete: dict[str, Completer] = field(default_factory=dict)
    #: Who may see the template (list it, read through it, complete its variables): called with
    #: the principal; None shows it to everyone.
    visible: Callable[[str | None], bool] | None = None

    def __post_init__(self) -> None:
        _check_scheme(self.uri_template)
        self._pattern = _template_pattern(self.uri_template)
        self._with_ctx = wants_context(self.fn)

    def definition(self) -> dict[str, Any]:
        return _describe(
            {"uriTemplate": self.uri_template, "name": self.name}, self.title, self.description, self.mime_type
        )

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of `uri`, or None when it is not this template's. A value holding a `.`
        or `..` path segment never matches: handlers often build file paths from these values
        (server/resources.mdx §Security Considerations: no directory traversal)."""
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        variables = found.groupdict()
        if any(segment in (".", "..") for value in variables.values() for segment in value.split("/")):
            return None
        return variables

    async def read(
        self, uri: str, variables: dict[str, str], ctx: RequestContext
    ) -> list[dict[str, Any]] | InputRequired:
        returned = await call_handler(self.fn, variables, ctx, self._with_ctx)
        return contents(uri, returned, self.mime_type)


#: An RFC 3986 scheme followed by its colon: what every resource URI starts with.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def _check_scheme(uri: str) -> None:
    if not isinstance(uri, str) or not _SCHEME.match(uri):
        raise ValueError(f"resource URI {uri!r} must start with an RFC 3986 scheme, such as file: or notes:")


def _template_pattern(template: str) -> re.Pattern[str]:
    parts: list[str] = []
    position = 0
    for variable in re.finditer(r"\{(\+?)([A-Za-z0-9_]+)\}", template):
        parts.append(re.escape(template[position : variable.start()]))
        reserved, name = variable.groups()
        parts.append(f"(?P<{name}>.+)" if reserved else f"(?P<{name}>[^/]+)")
        position = variable.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts))


def _describe(
    base: dict[str, Any], title: str | None, description: str | None, mime_type: str | None
) -> dict[str, Any]:
    """`base`, then the optional fields that are set: one left unset is left out, never null."""
    optional = {"title": title, "description": description, "mimeType": mime_type}
    return base | {key: value for key, value in optional.items() if value is not None}


def contents(uri: str, returned: Any, mime_type: str | None) -> list[dict[str, Any]] | InputRequired:
    """Turn what a handler returned into `contents`: str becomes text, bytes becomes a base64 blob,
    a list is taken as ready-made content objects."""
    if isinstance(returned, InputRequired):
        return returned
    if isinstance(returned, list):
        # Checked, not trusted: a list of anything else would be a result no client can read.
        if not all(
            isinstance(entry, dict) and isinstance(entry.get("uri"), str) and ("text" in entry or "blob" in entry)
            for entry in returned
        ):
            raise TypeError(
                f"resource {uri!r} handler returned a list that is not contents (each a uri and a text or blob)"
            )
        return returned
    item: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        item["mimeType"] = mime_type
    if isinstance(returned, str):
        item["text"] = returned
    elif isinstance(returned, bytes):
        item["blob"] = base64.b64encode(returned).decode("ascii")
    else:
        raise TypeError(f"resource {uri!r} handler returned {type(returned).__name__}; return str, bytes or a list")
    return [item]


class ResourceNotFound(MCPError):
    """Nothing serves `uri`: -32602 with the URI in `data` ([`server/resources.mdx` §Error Handling](https://modelcontextprotocol.io/specification/2026-07-28/server/resources#error-handling)),
    which a legacy client gets as -32002 (`mcpref.legacy`). Raise it from a template's function
    when the URI matches the template but names nothing.

    Args:
        uri: The URI asked for; echoed in `data` unless longer than 2048 characters.
    """

    def __init__(self, uri: str) -> None:
        # The data names the URI, unless it is too long to echo.
        super().__init__(INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri} if len(uri) <= 2048 else None)
        self.uri = uri


class ResourceRegistry(Registry[Resource]):
    """Resources by URI, and the templates tried in order for a URI none of them has."""

    def __init__(self) -> None:
        super().__init__("resource", attrgetter("uri"))
        self.templates: list[ResourceTemplate] = []
        #: How many templates have a `visible` predicate: with none, their list is everyone's.
        self._gated_templates = 0

    @property
    def resources(self) -> Mapping[str, Resource]:
        """The fixed resources by URI (the templates are in `templates`)."""
        return self._entries

    def add_template(self, template: ResourceTemplate) -> ResourceTemplate:
        self.templates.append(template)
        self._gated_templates += template.visible is not None
        self.on_change()
        return template

    def templates_visible_to(self, principal: str | None) -> tuple[list[ResourceTemplate], bool]:
        """The templates this principal may see, and whether that list depends on who asks."""
        if not self._gated_templates:
            return self.templates, False
        return [t for t in self.templates if shown(t, principal)], True

    def template_named(self, uri_template: Any, principal: str | None = None) -> ResourceTemplate | None:
        """The template `uri_template` if `principal` may see it, else None (as if there were none)."""
        return next((t for t in self.templates if t.uri_template == uri_template and shown(t, principal)), None)

    def audience_of(self, uri: str) -> Callable[[str | None], bool] | None:
        """Who may hear that `uri` changed (`notifications/resources/updated`); None is everyone.

        A fixed resource decides for its URI: a hidden one is never announced to those it is
        hidden from, even where a template would serve them the URI. Otherwise whoever may see a
        template matching it hears of it. A URI nothing serves is no one's secret."""
        resource = self._entries.get(uri)
        if resource is not None:
            return resource.visible
        matching = [t for t in self.templates if t.match(uri) is not None]
        if not matching or any(t.visible is None for t in matching):
            return None
        return lambda principal: any(shown(t, principal) for t in matching)

    async def read(self, uri: Any, ctx: RequestContext) -> list[dict[str, Any]] | InputRequired:
        if not isinstance(uri, str):
            raise MCPError(INVALID_PARAMS, "Invalid params: uri must be a string")
        # A resource the caller may not see is not found, exactly like one that does not exist.
        resource = self.find(uri, ctx.principal)
        if resource is not None:
            return await resource.read(ctx)
        for template in self.templates:
            if not shown(template, ctx.principal):
                continue  # as if it were not registered
            variables = template.match(uri)
            if variables is not None:
                return await template.read(uri, variables, ctx)
        raise ResourceNotFound(uri)

    def __len__(self) -> int:
        """Everything registered, templates included: what the `resources` capability stands for."""
        return len(self._entries) + len(self.templates)
