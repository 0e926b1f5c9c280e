"""Extensions: how something outside the core adds methods, `resultType` values and headers to it.

An extension is named by an identifier with a vendor prefix (`io.modelcontextprotocol/tasks`,
`com.example/station-alerts`). The server lists it, with its settings, under
`capabilities.extensions` in `server/discover`; a client lists it in the `clientCapabilities` of
each request that wants it
([`basic/versioning.mdx` §Extension Negotiation](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#extension-negotiation)).
When only one side supports it, the other gets core behaviour or a clear error, never extension behaviour.

The core knows nothing about any particular extension. An extension is an `Extension` object,
given to `Server.add_extension`, that says:

- `id` and `settings()`: what `server/discover` advertises;
- `methods`: the methods it adds. The core serves them only to requests that declare the
  extension, and answers the others with -32021 naming it (a method the client never asked for);
- `result_types`: the `resultType` values its handlers may return. The core refuses to send one
  to a client that did not declare the extension (extension behaviour that client cannot read);
- `name_fields`: which parameter the `Mcp-Name` header mirrors for its methods;
- `listen_keys`: the `subscriptions/listen` filter keys it defines, refused (-32021) to clients
  that did not declare it;
- `around(ctx, call_next)`: a hook around every request the client sent declaring the
  extension, or not, to change how a core method is answered (tasks answers a slow
  `tools/call` with a task handle).

A second extension plugs in the same way: subclass `Extension`, fill in what it adds, and call
`server.add_extension(YourExtension())` before serving. Two extensions must not claim the same
method or `resultType`; `add_extension` refuses that at start-up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .context import RequestContext

CallNext = Callable[[RequestContext], Awaitable[Any]]
"""Answers a request: the next extension's `around`, or in the end the core's handler."""
Handler = Callable[[RequestContext], Awaitable[Any]]
"""A method an extension adds: takes the request's context, returns its result."""


class Extension:
    """An extension of the protocol; subclass it and fill in what the extension adds."""

    #: The identifier, e.g. `io.modelcontextprotocol/tasks`.
    id: str = ""
    #: New methods: name -> async handler taking the `RequestContext`.
    methods: Mapping[str, Handler] = {}
    #: `resultType` values this extension's answers may carry, beyond `complete` and `input_required`.
    result_types: frozenset[str] = frozenset()
    #: Method -> the parameter its `Mcp-Name` header mirrors (streamable-http.mdx §Standard Headers).
    name_fields: Mapping[str, str] = {}
    #: Keys of `subscriptions/listen`'s `notifications` filter this extension defines (tasks: `taskIds`);
    #: a client that asks for one without declaring the extension gets -32021.
    listen_keys: frozenset[str] = frozenset()

    def added_to(self, server: Any) -> None:
        """Called by `Server.add_extension`: keep the server if the extension needs it (its tools).

        Args:
            server: The `Server` it was added to.
        """

    def settings(self) -> dict[str, Any]:
        """The settings object advertised under `capabilities.extensions[id]`.

        Returns:
            The settings; `{}` (the default) means plain support.
        """
        return {}

    async def around(self, ctx: RequestContext, call_next: CallNext) -> Any:
        """Answer a request, usually by calling `call_next(ctx)`; override to change core behaviour.

        Every request passes through each extension's `around`, the first added outermost.

        Args:
            ctx: The request's context.
            call_next: The next extension's `around`, or the handler itself.

        Returns:
            The result object (or what the core turns into one, as a handler's return).
        """
        return await call_next(ctx)


def declared(ctx_or_capabilities: RequestContext | Mapping[str, Any], extension_id: str) -> bool:
    """Whether a request's client capabilities list `extension_id` under `extensions`.

    Args:
        ctx_or_capabilities: The request's context, or the client capabilities themselves.
        extension_id: Such as `io.modelcontextprotocol/tasks`.

    Returns:
        True if the client declared the extension.
    """
    capabilities = (
        ctx_or_capabilities.client_capabilities
        if isinstance(ctx_or_capabilities, RequestContext)
        else ctx_or_capabilities
    )
    extensions = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    return isinstance(extensions, Mapping) and extension_id in extensions


def requirement(extension_id: str) -> dict[str, Any]:
    """The `requiredCapabilities` that names one extension, for a -32021 error.

    Args:
        extension_id: The extension the request needs.

    Returns:
        `{"extensions": {extension_id: {}}}`, the error's `data.requiredCapabilities`.
    """
    return {"extensions": {extension_id: {}}}


__all__ = ["CallNext", "Extension", "Handler", "declared", "requirement"]
