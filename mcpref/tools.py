"""Tools: the registry behind `tools/list` and `tools/call` (server/tools.mdx).

A tool is a Python function plus the JSON Schema of its arguments. The schema is checked once,
at registration (JSON Schema 2020-12 by default, `x-mcp-header` rules), and compiled into a
validator once, so a call pays only for validating its own arguments. Simple schemas get a
plain-Python check first (`_quickcheck`); jsonschema has the last word on anything it does not
pass, and is imported only when first needed.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from ._handlers import call_handler, wants_context
from ._quickcheck import quick_check
from .catchall import log_bug
from .context import RequestContext
from .headers import annotation_problems, header_params
from .jsonrpc import INTERNAL_ERROR, MCPError
from .mrtr import InputRequired
from .registry import Registry

if TYPE_CHECKING:  # not a cycle: jsonschema's types, named without importing it at startup (`_compile`)
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

logger = logging.getLogger("mcpref.tools")

#: What a tool name should be (server/tools.mdx §Tool Names): 1 to 128 of A-Z a-z 0-9 _ - .
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


class ToolError(Exception):
    """Raise from a tool to report its own failure: the caller gets `isError: true`, not a JSON-RPC error."""


@dataclass
class ToolResult:
    """An explicit `CallToolResult`, for tools that need more than returning text or data
    ([`server/tools.mdx` §Tool Result](https://modelcontextprotocol.io/specification/2026-07-28/server/tools#tool-result)).

    Args:
        content: The content blocks (`text(...)`, images, resource links, ...).
        structured: The `structuredContent`, for a tool with an `output_schema` (checked against
            it); None leaves it out.
        is_error: Mark the result as the tool's own failure (`isError: true`), which the model
            sees, rather than a protocol error.
    """

    content: list[dict[str, Any]] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The `CallToolResult` fields.

        Returns:
            `content`, and `structuredContent`/`isError` when set.
        """
        result: dict[str, Any] = {"content": self.content}
        if self.structured is not None:
            result["structuredContent"] = self.structured
        if self.is_error:
            result["isError"] = True
        return result


def text(value: str) -> dict[str, Any]:
    """A text content block.

    Args:
        value: The text.

    Returns:
        `{"type": "text", "text": value}`.
    """
    return {"type": "text", "text": value}


@dataclass
class Tool:
    name: str
    fn: Callable[..., Any]
    input_schema: dict[str, Any]
    description: str | None = None
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    icons: list[dict[str, Any]] | None = None
    #: Client capabilities a call needs, e.g. `{"elicitation": {}}`; missing ones get -32021.
    requires: dict[str, Any] = field(default_factory=dict)
    #: Who may see the tool: called with the principal; None shows it to everyone (see `Server.tool`).
    visible: Callable[[str | None], bool] | None = None

    def __post_init__(self) -> None:
        if self.input_schema.get("type") != "object":
            raise ValueError(f"tool {self.name!r}: inputSchema must have type 'object' at its root")
        problems = annotation_problems(self.input_schema)
        if problems:
            raise ValueError(f"tool {self.name!r}: " + "; ".join(problems))
        if not TOOL_NAME.fullmatch(self.name):
            raise ValueError(f"tool name {self.name!r} must be 1-128 characters of A-Z, a-z, 0-9, '_', '-' and '.'")
        self.header_params = header_params(self.input_schema)
        self._arguments = _Schema(self.input_schema, f"tool {self.name!r} inputSchema")
        self._output = _Schema(self.output_schema, f"tool {self.name!r} outputSchema") if self.output_schema else None
        self._with_ctx = wants_context(self.fn)
        self._parameters = _parameters(self.fn)

    def definition(self) -> dict[str, Any]:
        """The tool as `tools/list` shows it."""
        tool: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            tool["title"] = self.title
        if self.description is not None:
            tool["description"] = self.description
        tool["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            tool["outputSchema"] = self.output_schema
        if self.annotations is not None:
            tool["annotations"] = self.annotations
        if self.icons is not None:
            tool["icons"] = self.icons
        return tool

    def check_arguments(self, arguments: dict[str, Any]) -> None:
        """Arguments that break the input schema are the tool's own failure, reported with
        `isError: true` so the model can correct them (server/tools.mdx §Error Handling)."""
        error = self._arguments.first_error(arguments)
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "(root)"
            raise ToolError(f"Invalid arguments for tool {self.name!r} at {where}: {error.message}")

    async def call(self, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any] | InputRequired:
        self.check_arguments(arguments)
        if self._parameters is not None:
            # A schema allows properties it does not list unless it says otherwise; the function
            # has no parameter for them, so they are not passed on (rather than failing the call).
            arguments = {key: value for key, value in arguments.items() if key in self._parameters}
        try:
            returned = await call_handler(self.fn, arguments, ctx, self._with_ctx)
        except (MCPError, ToolError):
            raise
        except Exception:
            log_bug(logger, "tool %r raised", self.name)
            raise ToolError(f"Tool {self.name!r} failed with an unexpected error") from None
        return self._to_result(returned)

    def result_of(self, returned: Any) -> dict[str, Any] | InputRequired:
        """The `CallToolResult` for what the function returned, as `call` builds it; for work the
        tool finished elsewhere (the tasks extension runs it after the request has been answered)."""
        return self._to_result(returned)

    def _to_result(self, returned: Any) -> dict[str, Any] | InputRequired:
        if type(returned) is str and self._output is None:
            return {"content": [text(returned)]}  # the usual result, without a ToolResult round trip
        if isinstance(returned, InputRequired):
            return returned
        if isinstance(returned, ToolResult):
            result = returned
        elif self._output is not None:
            try:
                copy = json.dumps(returned, ensure_ascii=False, allow_nan=False)
            except ValueError:  # NaN or an infinity: it passes "type": "number", but is no JSON
                logger.error("tool %r returned NaN or an infinity in its structured output", self.name)
                raise MCPError(
                    INTERNAL_ERROR, f"Internal error: tool {self.name!r} returned data that is not JSON"
                ) from None
            result = ToolResult(content=[text(copy)], structured=returned)
        elif isinstance(returned, str):
            result = ToolResult(content=[text(returned)])
        elif isinstance(returned, dict):
            result = ToolResult(content=self._content([returned], "a dict"))
        elif isinstance(returned, list):
            result = ToolResult(content=self._content(returned, "a list"))
        else:
            raise TypeError(
                f"tool {self.name!r} returned {type(returned).__name__}; return str, dict, list or ToolResult"
            )
        if self._output is not None and not result.is_error:
            error = self._output.first_error(result.structured)
            if error is not None:
                logger.error("tool %r broke its outputSchema: %s", self.name, error.message)
                raise MCPError(
                    INTERNAL_ERROR, f"Internal error: tool {self.name!r} returned data that breaks its outputSchema"
                )
        return result.to_dict()

    def _content(self, blocks: list[Any], what: str) -> list[dict[str, Any]]:
        """Without an output schema a dict is one content block and a list is the content; data
        that is no block would make a result the schema (and any client) refuses: a server bug."""
        if not all(isinstance(block, dict) and isinstance(block.get("type"), str) for block in blocks):
            raise TypeError(
                f'tool {self.name!r} returned {what} that is not content blocks (dicts with a "type"); '
                "declare output_schema to return data, or return str or ToolResult"
            )
        return blocks


def _parameters(fn: Callable[..., Any]) -> frozenset[str] | None:
    """The argument names `fn` takes by keyword, or None when it takes any (`**kwargs`)."""
    parameters = inspect.signature(fn).parameters.values()
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return None
    by_keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(p.name for p in parameters if p.kind in by_keyword and p.name != "ctx")


class _Schema:
    """A schema compiled once: a quick check when it is simple, jsonschema when it is not or when
    the quick check does not pass (jsonschema then decides, and words the error)."""

    def __init__(self, schema: dict[str, Any], what: str) -> None:
        self.schema = schema
        self.what = what
        self.quick = quick_check(schema)
        # A schema the quick check takes is well-formed; any other is checked now, at registration.
        self._validator = None if self.quick else _compile(schema, what)

    def first_error(self, instance: Any) -> ValidationError | None:
        if self.quick is not None and self.quick(instance):
            return None
        if self._validator is None:
            self._validator = _compile(self.schema, self.what)
        return next(iter(self._validator.iter_errors(instance)), None)


def _compile(schema: dict[str, Any], what: str) -> Validator:
    """A validator for `schema`, in the dialect its `$schema` names (2020-12 when it names none)."""
    import jsonschema  # here, not at the top: a server whose schemas are all simple never needs it
    import referencing
    import referencing.exceptions
    import referencing.jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    # jsonschema documents `default` as what to return for an unknown dialect; its stubs allow only a class.
    if "$schema" in schema and jsonschema.validators.validator_for(schema, default=None) is None:  # type: ignore[arg-type]
        # basic/index.mdx §Implementation Requirements: an unsupported dialect is an error, not 2020-12.
        raise ValueError(f"{what} names a JSON Schema dialect this server does not support: {schema['$schema']!r}")
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"{what} is not a valid JSON Schema: {exc.message}") from None
    # Only the schema itself and the resources embedded in it: a `$ref` to a network URI is never
    # fetched (basic/index.mdx §$ref Resolution; jsonschema's default registry would download it),
    # and one that does not resolve here is refused now, not found out at the first call.
    specification = referencing.jsonschema.specification_with(
        cls.META_SCHEMA.get("$schema", ""), default=referencing.jsonschema.DRAFT202012
    )
    resource = specification.create_resource(schema)
    local = referencing.Registry().with_resource(resource.id() or "", resource).crawl()
    for base, ref in _refs(schema, resource.id() or "", specification):
        try:
            local.resolver(base).lookup(ref)
        except referencing.exceptions.Unresolvable:
            raise ValueError(
                f"{what} has a $ref that does not resolve within the schema: {ref!r} "
                "(mcpref never fetches schemas from elsewhere)"
            ) from None
    return cls(schema, format_checker=cls.FORMAT_CHECKER, registry=local)


#: Keywords that refer to another schema: each must resolve within the schema, at registration.
_REF_KEYWORDS = ("$ref", "$dynamicRef")
#: Keywords whose values are data, not subschemas: a `$ref` inside them is not a reference.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
#: Keywords whose values map names (which may be any string, "const" included) to subschemas.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def _refs(node: Any, base: str, specification: Any) -> Iterator[tuple[str, str]]:
    """Every `$ref` and `$dynamicRef` in a schema, with the base URI it is resolved against (the nearest `$id`)."""
    if isinstance(node, list):
        for item in node:
            yield from _refs(item, base, specification)
    elif isinstance(node, dict):
        node_id = specification.id_of(node)
        if isinstance(node_id, str):
            base = urljoin(base, node_id)
        for keyword in _REF_KEYWORDS:
            if isinstance(node.get(keyword), str):
                yield base, node[keyword]
        for keyword, value in node.items():
            if keyword in _SCHEMA_MAPS and isinstance(value, dict):
                values: Any = value.values()  # keys are names, any name; the values are schemas
            elif keyword in _DATA_KEYWORDS:
                continue
            else:
                values = [value]
            for item in values:
                yield from _refs(item, base, specification)


class ToolRegistry(Registry[Tool]):
    """Tools by name, listed in the order they were registered (a deterministic order, as asked)."""

    def __init__(self) -> None:
        super().__init__("tool", attrgetter("name"))
