"""What the client's calls return, typed: the result shapes of the 2026-07-28 schema
([`schema.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/schema)), as `TypedDict`s.

A result is the server's JSON object as it came (a plain `dict` at run time); these types say which
keys a reader can count on and which may be missing. A server may send more (extensions do, and
`_meta` carries anything), so code reading an unknown key uses `.get`. Fields a 2025-11-25 server
does not send (`resultType`, `ttlMs`, `cacheScope`) are not required here, since the same client
talks to both eras.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

#: `cacheScope` of a cacheable result (`server/utilities/caching.mdx`).
CacheScope = Literal["public", "private", "none"]


class DiscoverResult(TypedDict):
    """`server/discover`: what the server supports
    ([`server/discover.mdx` §DiscoverResult](https://modelcontextprotocol.io/specification/2026-07-28/server/discover#discoverresult))."""

    supportedVersions: NotRequired[list[str]]
    capabilities: dict[str, Any]
    instructions: NotRequired[str]
    resultType: NotRequired[str]
    ttlMs: NotRequired[int]
    cacheScope: NotRequired[CacheScope]
    _meta: NotRequired[dict[str, Any]]


class ToolInfo(TypedDict):
    """One entry of `tools/list` ([`server/tools.mdx` §Tool](https://modelcontextprotocol.io/specification/2026-07-28/server/tools#tool))."""

    name: str
    inputSchema: dict[str, Any]
    title: NotRequired[str]
    description: NotRequired[str]
    outputSchema: NotRequired[dict[str, Any]]
    annotations: NotRequired[dict[str, Any]]
    icons: NotRequired[list[dict[str, Any]]]
    _meta: NotRequired[dict[str, Any]]


class ToolCallResult(TypedDict):
    """`tools/call`'s result: content blocks, and `structuredContent` when the tool declares an
    output schema; `isError: true` for a tool execution error
    ([`server/tools.mdx` §Tool Result](https://modelcontextprotocol.io/specification/2026-07-28/server/tools#tool-result))."""

    content: list[dict[str, Any]]
    structuredContent: NotRequired[dict[str, Any]]
    isError: NotRequired[bool]
    resultType: NotRequired[str]
    _meta: NotRequired[dict[str, Any]]


class ResourceInfo(TypedDict):
    """One entry of `resources/list` ([`server/resources.mdx` §Resource](https://modelcontextprotocol.io/specification/2026-07-28/server/resources#resource))."""

    uri: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    size: NotRequired[int]
    annotations: NotRequired[dict[str, Any]]
    icons: NotRequired[list[dict[str, Any]]]
    _meta: NotRequired[dict[str, Any]]


class ResourceTemplateInfo(TypedDict):
    """One entry of `resources/templates/list`: a URI template (RFC 6570) and what it names."""

    uriTemplate: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    annotations: NotRequired[dict[str, Any]]
    icons: NotRequired[list[dict[str, Any]]]
    _meta: NotRequired[dict[str, Any]]


class ResourceContents(TypedDict):
    """One entry of a read's `contents`: `text`, or `blob` (base64) for binary data
    ([`server/resources.mdx` §Resource Contents](https://modelcontextprotocol.io/specification/2026-07-28/server/resources#resource-contents))."""

    uri: str
    mimeType: NotRequired[str]
    text: NotRequired[str]
    blob: NotRequired[str]
    _meta: NotRequired[dict[str, Any]]


class ReadResourceResult(TypedDict):
    """`resources/read`'s result."""

    contents: list[ResourceContents]
    resultType: NotRequired[str]
    ttlMs: NotRequired[int]
    cacheScope: NotRequired[CacheScope]
    _meta: NotRequired[dict[str, Any]]


class PromptInfo(TypedDict):
    """One entry of `prompts/list`; `arguments` name what `get_prompt` takes."""

    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    arguments: NotRequired[list[dict[str, Any]]]
    icons: NotRequired[list[dict[str, Any]]]
    _meta: NotRequired[dict[str, Any]]


class PromptResult(TypedDict):
    """`prompts/get`'s result: the messages, each a `role` and a `content` block."""

    messages: list[dict[str, Any]]
    description: NotRequired[str]
    resultType: NotRequired[str]
    _meta: NotRequired[dict[str, Any]]


class CompletionResult(TypedDict):
    """`completion/complete`'s result: `completion` holds `values`, and maybe `total` and `hasMore`."""

    completion: dict[str, Any]
    resultType: NotRequired[str]
    _meta: NotRequired[dict[str, Any]]


class TaskInfo(TypedDict):
    """A task as `tasks/get` reports it (the `io.modelcontextprotocol/tasks` extension): its status,
    then its input requests, result or error."""

    taskId: str
    status: str
    statusMessage: NotRequired[str]
    createdAt: NotRequired[str]
    lastUpdatedAt: NotRequired[str]
    ttlMs: NotRequired[int | None]
    pollIntervalMs: NotRequired[int]
    inputRequests: NotRequired[dict[str, Any]]
    result: NotRequired[dict[str, Any]]
    error: NotRequired[dict[str, Any]]
    _meta: NotRequired[dict[str, Any]]
