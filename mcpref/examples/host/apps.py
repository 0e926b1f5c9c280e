"""The host's side of MCP Apps: which tools the model sees, the views it fetches, what a view may call.

A host that declares `io.modelcontextprotocol/ui` gets each linked tool's `_meta.ui`. It keeps a
tool whose visibility lacks `model` out of the model's catalogue (apps §Visibility), fetches a
tool's view with `resources/read` and checks it (`mcpref.apps.View.of`), logs the Content Security
Policy it applies to it (apps §Host Behavior: an audit trail) and warns when a view declares
origins outside its sandbox, and answers a view's `tools/call`
only for a tool of the view's own server whose visibility includes `app`.

Rendering is the browser's job: this host has no window. What it hands on is an `AppView`, the
checked HTML with the CSP and `allow` attribute a renderer must apply (the site's page host,
docs/assets/apps-host.js, renders one in a sandboxed iframe).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpref.apps import ToolUi, View, ViewCsp, permissions_policy

logger = logging.getLogger("mcpref.examples.host.apps")


@dataclass(frozen=True)
class AppView:
    """A view fetched for one tool of one server, checked, with the policy it must be rendered under."""

    server: str  #: the label of the server the view came from: the only one its calls may reach
    tool: str  #: the server's own name of the tool it renders
    view: View
    csp: str  #: the `Content-Security-Policy` the renderer applies
    allow: str  #: the inner iframe's `allow` attribute (the permissions the host grants)


def link_of(server: str, tool: Mapping[str, Any]) -> ToolUi | None:
    """A tool's link to a view, or None. A malformed `_meta.ui` is logged and read as model-only
    without a view: the host cannot tell what the server meant, so no view may call it."""
    try:
        return ToolUi.of(tool)
    except ValueError as problem:
        logger.warning(
            "%s: tool %r has a malformed _meta.ui (%s); treated as model-only", server, tool.get("name"), problem
        )
        return ToolUi(None, ("model",))


def for_model(server: str, tool: Mapping[str, Any]) -> bool:
    """Whether the model may see the tool: every tool but those whose visibility lacks `model`."""
    link = link_of(server, tool)
    return link is None or link.for_model


def checked_view(server: str, tool: str, uri: str, result: Mapping[str, Any]) -> AppView:
    """The view in a `resources/read` result, or ValueError when none there keeps the rules.

    The CSP applied is logged, with the server and the URI, for a later security review.
    """
    contents = result.get("contents")
    items = (
        [item for item in contents if isinstance(item, Mapping) and item.get("uri") == uri]
        if isinstance(contents, list)
        else []
    )
    if len(items) != 1:
        raise ValueError(f"{server} answered resources/read of {uri} without exactly one content for it")
    view = View.of(items[0])
    applied = AppView(server, tool, view, view.policy(), permissions_policy(view.permissions))
    logger.info("%s: view %s for %s, Content-Security-Policy: %s", server, uri, tool, applied.csp)
    external = sorted({origin for _, origins in (view.csp or ViewCsp()).to_meta().items() for origin in origins})
    if external:
        # apps §Content Security Policy Enforcement: the user should know a view reaches outside.
        logger.warning("%s: view %s for %s reaches outside its sandbox: %s", server, uri, tool, ", ".join(external))
    return applied
