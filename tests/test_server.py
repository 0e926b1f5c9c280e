"""The dispatcher, called directly: results, registries and the errors each method owns.

Transport concerns (status codes, headers) are tested in transports/test_http.py.
"""

from __future__ import annotations

import asyncio
import base64
import math
import threading
from typing import Any

import pytest

from mcpref import CacheHints, MCPError, Server, ToolError, ToolResult, text
from mcpref.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, Request
from mcpref.validation import check_message
from tests.conftest import META

SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "unit", "version": "1"}}


def call(server: Server, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Dispatch one request and check the response against the official schema."""
    result = asyncio.run(server.handle(Request(1, method, {**(params or {}), "_meta": META})))
    check_message({"jsonrpc": "2.0", "id": 1, "result": result}, method)
    return result


def fails(server: Server, method: str, params: dict[str, Any] | None = None) -> MCPError:
    with pytest.raises(MCPError) as caught:
        call(server, method, params)
    return caught.value


@pytest.fixture
def server() -> Server:
    server = Server("unit", "1", instructions="Use the tools.", cache_for={"tools/list": CacheHints(1000, "public")})

    @server.tool(
        input_schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
        output_schema={"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
        title="Add",
        annotations={"readOnlyHint": True},
    )
    def add(a: int, b: int) -> dict[str, int]:
        """Add two integers."""
        return {"sum": a + b}

    @server.tool(output_schema={"type": "object", "required": ["sum"]})
    def liar() -> dict[str, int]:
        return {"total": 1}

    @server.tool()
    def picture() -> list[dict[str, Any]]:
        return [text("a red dot"), {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]

    @server.tool()
    def explicit() -> ToolResult:
        return ToolResult(content=[text("partial")], is_error=True)

    @server.tool()
    def refuses() -> str:
        raise ToolError("no such city")

    @server.tool()
    def crashes() -> str:
        raise RuntimeError("secret internal detail")

    @server.resource("config://app", mime_type="application/json")
    def config() -> str:
        return '{"debug": false}'

    @server.resource("bin://logo", mime_type="image/png")
    def logo() -> bytes:
        return b"\x89PNG"

    @server.resource_template(
        "notes://{folder}/{name}", mime_type="text/plain", complete={"folder": lambda value: ["work", "home"]}
    )
    def note(folder: str, name: str) -> str:
        return f"{folder}/{name}"

    @server.resource("broken://x")
    def broken_resource() -> str:
        raise OSError("disk")

    @server.prompt(
        arguments={"topic": "What to write about"},
        complete={"style": lambda value, context: [s for s in ("short", "long") if s.startswith(value)]},
    )
    def essay(topic: str, style: str = "short") -> str:
        """Write an essay."""
        return f"Write a {style} essay about {topic}."

    return server


def test_discover_describes_the_server(server: Server) -> None:
    assert call(server, "server/discover") == {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {
            "prompts": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "tools": {"listChanged": True},
            "completions": {},
        },
        "instructions": "Use the tools.",
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": SERVER_INFO,
    }


def test_tools_list_shows_definitions_with_per_method_cache_hints(server: Server) -> None:
    result = call(server, "tools/list")
    assert result["tools"][0] == {
        "name": "add",
        "title": "Add",
        "description": "Add two integers.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
        "annotations": {"readOnlyHint": True},
    }
    assert (result["ttlMs"], result["cacheScope"]) == (1000, "public")


def test_structured_output_comes_with_a_text_copy(server: Server) -> None:
    result = call(server, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert result["structuredContent"] == {"sum": 5}
    assert result["content"] == [{"type": "text", "text": '{"sum": 5}'}]


def test_output_that_breaks_its_schema_is_an_internal_error(server: Server) -> None:
    assert fails(server, "tools/call", {"name": "liar", "arguments": {}}).code == INTERNAL_ERROR


def test_content_blocks_and_explicit_results(server: Server) -> None:
    assert call(server, "tools/call", {"name": "picture"})["content"][1]["type"] == "image"
    assert call(server, "tools/call", {"name": "explicit"})["isError"] is True


@pytest.mark.parametrize("returned", [[1, 2, 3], {"temperature": 21}, [text("fine"), "not a block"]])
def test_a_tool_that_returns_what_is_no_content_is_an_internal_error(returned: Any) -> None:
    """Without an output schema a dict is one content block and a list is the content: data that
    is no content block would make a schema-invalid result (the official SDK refuses it), so the
    server refuses it as its own bug, as it does a return of any other type."""
    server = Server("unit", "1")

    @server.tool()
    def data() -> Any:
        return returned

    assert fails(server, "tools/call", {"name": "data", "arguments": {}}).code == INTERNAL_ERROR


@pytest.mark.parametrize("returned", [[1, 2], [{"text": "no uri"}], [{"uri": "a://x"}]])
def test_a_resource_list_of_what_is_no_contents_is_an_internal_error(returned: Any) -> None:
    """A list is taken as ready-made contents, each with a `uri` and a `text` or `blob`; anything
    else would be a schema-invalid result, so it is refused as the server's own bug."""
    server = Server("unit", "1")

    @server.resource("a://x")
    def odd() -> Any:
        return returned

    assert fails(server, "resources/read", {"uri": "a://x"}).code == INTERNAL_ERROR


@pytest.mark.parametrize("returned", [[1, 2], [{"text": "hi"}], {"x": 1}, {"messages": "hi"}])
def test_a_prompt_that_returns_what_is_no_messages_is_an_internal_error(returned: Any) -> None:
    """A list is the messages (each a `role` and a `content`), a dict the whole result with its
    `messages`; anything else would be a schema-invalid result: refused as the server's bug."""
    server = Server("unit", "1")

    @server.prompt()
    def odd() -> Any:
        return returned

    assert fails(server, "prompts/get", {"name": "odd"}).code == INTERNAL_ERROR


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_structured_output_that_is_no_json_is_an_internal_error(value: float) -> None:
    """NaN and the infinities pass `"type": "number"` but are no JSON: sent, they would be the
    bare word `NaN`, which a client's JSON parser refuses. The server's bug, so -32603."""
    server = Server("unit", "1")

    @server.tool(output_schema={"type": "object", "properties": {"mean": {"type": "number"}}})
    def mean() -> dict[str, float]:
        return {"mean": value}

    assert fails(server, "tools/call", {"name": "mean", "arguments": {}}).code == INTERNAL_ERROR


def test_tool_errors_are_results_and_crashes_do_not_leak(server: Server) -> None:
    assert call(server, "tools/call", {"name": "refuses"})["content"] == [text("no such city")]
    crashed = call(server, "tools/call", {"name": "crashes"})
    assert crashed["isError"] is True
    assert "secret" not in crashed["content"][0]["text"]


@pytest.mark.parametrize(
    "params",
    [{"name": "nope"}, {}, {"name": 5}, {"name": "add", "arguments": []}, {"name": "add", "arguments": "a=1"}],
)
def test_tools_call_invalid_params(server: Server, params: dict) -> None:
    """Protocol errors (server/tools.mdx §Error Handling): an unknown tool, or a request that is
    no `CallToolRequest` at all."""
    assert fails(server, "tools/call", params).code == INVALID_PARAMS


@pytest.mark.parametrize(
    ("arguments", "where"),
    [({"a": "x", "b": 1}, "at a: 'x' is not of type 'integer'"), ({"a": 1.5, "b": 1}, "at a: 1.5 is not of type")],
)
def test_arguments_that_break_the_input_schema_are_a_tool_execution_error(
    server: Server, arguments: dict, where: str
) -> None:
    """Input validation errors are tool execution errors: a result with `isError: true` and a
    message the model can act on, not a JSON-RPC error (server/tools.mdx §Error Handling)."""
    result = call(server, "tools/call", {"name": "add", "arguments": arguments})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Invalid arguments for tool 'add' ")
    assert where in result["content"][0]["text"]


def test_resources(server: Server) -> None:
    assert [r["uri"] for r in call(server, "resources/list")["resources"]] == [
        "config://app",
        "bin://logo",
        "broken://x",
    ]
    templates = call(server, "resources/templates/list")["resourceTemplates"]
    assert templates == [{"uriTemplate": "notes://{folder}/{name}", "name": "note", "mimeType": "text/plain"}]
    assert call(server, "resources/read", {"uri": "bin://logo"})["contents"] == [
        {"uri": "bin://logo", "mimeType": "image/png", "blob": "iVBORw=="}
    ]
    read = call(server, "resources/read", {"uri": "notes://work/todo"})
    assert read["contents"] == [{"uri": "notes://work/todo", "mimeType": "text/plain", "text": "work/todo"}]
    assert (read["ttlMs"], read["cacheScope"]) == (0, "private")


@pytest.mark.parametrize("uri", ["notes://a/b/c", "config://other", 7])
def test_resource_not_found_is_invalid_params(server: Server, uri: object) -> None:
    assert fails(server, "resources/read", {"uri": uri}).code == INVALID_PARAMS


def test_a_broken_resource_handler_is_an_internal_error(server: Server) -> None:
    error = fails(server, "resources/read", {"uri": "broken://x"})
    assert error.code == INTERNAL_ERROR and "disk" not in error.message


def test_prompts(server: Server) -> None:
    assert call(server, "prompts/list")["prompts"] == [
        {
            "name": "essay",
            "description": "Write an essay.",
            "arguments": [
                {"name": "topic", "description": "What to write about", "required": True},
                {"name": "style", "required": False},
            ],
        }
    ]
    result = call(server, "prompts/get", {"name": "essay", "arguments": {"topic": "tides"}})
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Write a short essay about tides."}}
    ]


@pytest.mark.parametrize(
    "params",
    [
        {"name": "nope"},
        {"name": "essay"},
        {"name": "essay", "arguments": {"topic": 1}},
        {"name": "essay", "arguments": {"topic": "t", "x": "y"}},
    ],
)
def test_prompts_get_invalid_params(server: Server, params: dict) -> None:
    assert fails(server, "prompts/get", params).code == INVALID_PARAMS


def test_completion(server: Server) -> None:
    prompt = call(
        server,
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "essay"}, "argument": {"name": "style", "value": "l"}},
    )
    assert prompt["completion"] == {"values": ["long"], "total": 1, "hasMore": False}
    template = call(
        server,
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "notes://{folder}/{name}"},
            "argument": {"name": "folder", "value": ""},
        },
    )
    assert template["completion"]["values"] == ["work", "home"]
    nothing = call(
        server,
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "essay"}, "argument": {"name": "topic", "value": ""}},
    )
    assert nothing["completion"]["values"] == []


def test_completers_are_called_like_every_handler() -> None:
    """A plain `def` completer runs in a worker thread, so a slow one does not stall the loop; an
    `async def` one runs on the loop. Either may ask for `context`."""
    server = Server("unit", "1")
    threads: dict[str, str] = {}

    def blocking(value: str, context: dict[str, str]) -> list[str]:
        threads["sync"] = threading.current_thread().name
        return [value + context.get("other", "")]

    async def awaited(value: str) -> list[str]:
        threads["async"] = threading.current_thread().name
        return [value + "!"]

    server.prompt(complete={"a": blocking, "b": awaited})(lambda a, b: a + b)

    def complete(argument: str, value: str) -> list[str]:
        params = {"ref": {"type": "ref/prompt", "name": "<lambda>"}, "argument": {"name": argument, "value": value}}
        return call(server, "completion/complete", {**params, "context": {"arguments": {"other": "+"}}})["completion"][
            "values"
        ]

    assert complete("a", "x") == ["x+"] and complete("b", "y") == ["y!"]
    assert threads["sync"] != threading.main_thread().name and threads["async"] == threading.main_thread().name


def test_completion_caps_values_at_100() -> None:
    server = Server("unit", "1")
    server.prompt(complete={"n": lambda value: [str(i) for i in range(150)]})(lambda n: n)
    result = call(
        server,
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "<lambda>"}, "argument": {"name": "n", "value": ""}},
    )
    assert len(result["completion"]["values"]) == 100
    assert result["completion"]["total"] == 150 and result["completion"]["hasMore"] is True


@pytest.mark.parametrize(
    "params",
    [
        {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/resource", "uri": "x://{y}"}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/other"}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/prompt", "name": "essay"}},
    ],
)
def test_completion_invalid_params(server: Server, params: dict) -> None:
    assert fails(server, "completion/complete", params).code == INVALID_PARAMS


def test_a_completer_that_fails_is_internal_error_and_says_no_more(caplog: pytest.LogCaptureFixture) -> None:
    """server/utilities/completion.mdx §Error Handling: internal errors get -32603. The client
    learns only that completing failed; the log gets the traceback."""
    server = Server("unit", "1")

    def broken(value: str) -> list[str]:
        raise RuntimeError("the index is gone: /var/db/secret")

    server.prompt(complete={"topic": broken})(lambda topic: topic)
    params = {"ref": {"type": "ref/prompt", "name": "<lambda>"}, "argument": {"name": "topic", "value": "a"}}
    with caplog.at_level("ERROR", logger="mcpref.server"):
        error = fails(server, "completion/complete", params)
    assert (error.code, error.message) == (INTERNAL_ERROR, "Internal error while handling completion/complete")
    assert "secret" not in str(error.to_error_object())
    assert [record.exc_info is not None for record in caplog.records] == [True]


def test_cursors_are_stable_across_uses_instances_and_walks() -> None:
    """server/utilities/pagination.mdx §Implementation Guidelines: servers SHOULD provide stable
    cursors. The same cursor gives the same page every time it is used, on another instance (no
    per-process key, nothing remembered) and on a walk begun again; a cursor that worked once is
    not spent."""

    def build() -> Server:
        paged = Server("paged", "1", page_size=2)
        for n in range(5):
            paged.tool(name=f"t{n}")(lambda: "")
        return paged

    def walk(server: Server) -> list[tuple[list[str], str | None]]:
        pages, cursor = [], None
        while True:
            result = call(server, "tools/list", {} if cursor is None else {"cursor": cursor})
            cursor = result.get("nextCursor")
            pages.append(([tool["name"] for tool in result["tools"]], cursor))
            if cursor is None:
                return pages

    first, second = build(), build()
    pages = walk(first)
    assert [names for names, _ in pages] == [["t0", "t1"], ["t2", "t3"], ["t4"]]
    assert walk(first) == pages and walk(second) == pages
    middle = pages[0][1]
    for server in (first, second, first):
        assert [tool["name"] for tool in call(server, "tools/list", {"cursor": middle})["tools"]] == ["t2", "t3"]


def test_an_empty_server_offers_only_discovery() -> None:
    empty = Server("empty", "1")
    assert call(empty, "server/discover")["capabilities"] == {}
    for method in ("tools/list", "resources/list", "prompts/list", "completion/complete"):
        assert fails(empty, method).code == METHOD_NOT_FOUND


def test_a_subclass_may_override_handler_for() -> None:
    """`handle` works out what is offered by itself, not through a side effect of `handler_for`."""

    async def listed(ctx: Any) -> dict[str, Any]:
        return {"tools": []}

    class Routed(Server):
        def handler_for(self, method: str):  # type: ignore[no-untyped-def]
            return listed if method == "tools/list" else super().handler_for(method)

    routed = Routed("unit", "1")
    routed.tool(name="echo")(lambda: "echo")  # a registration clears what was computed as offered
    assert call(routed, "tools/list")["tools"] == []
    assert call(routed, "tools/call", {"name": "echo"})["content"][0]["text"] == "echo"


def test_registration_refuses_bad_tools() -> None:
    server = Server("unit", "1")
    with pytest.raises(ValueError, match="type 'object'"):
        server.tool(input_schema={"type": "string"})(lambda: "")
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        server.tool(name="t", input_schema={"type": "object", "properties": {"a": {"type": 5}}})(lambda: "")
    with pytest.raises(ValueError, match="x-mcp-header"):
        server.tool(
            name="u", input_schema={"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}
        )(lambda: "")
    server.tool(name="dup")(lambda: "")
    with pytest.raises(ValueError, match="already registered"):
        server.tool(name="dup")(lambda: "")


@pytest.mark.parametrize("name", ["", "x" * 129, "get user", "a,b", "naïve", "<lambda>"])
def test_tool_names_keep_to_the_recommended_characters(name: str) -> None:
    with pytest.raises(ValueError, match="1-128 characters"):
        Server("unit", "1").tool(name=name)(lambda: "")


def test_tool_names_are_case_sensitive_and_may_use_dots_and_dashes() -> None:
    server = Server("unit", "1")
    server.tool(name="Echo")(lambda: "upper")
    server.tool(name="echo")(lambda: "lower")
    server.tool(name="admin.tools-list_v2")(lambda: "dotted")
    server.tool(name="x" * 128)(lambda: "long")
    assert call(server, "tools/call", {"name": "Echo"})["content"] == [text("upper")]
    assert call(server, "tools/call", {"name": "echo"})["content"] == [text("lower")]
    assert fails(server, "tools/call", {"name": "ECHO"}).code == INVALID_PARAMS


def test_a_tool_name_is_registered_once() -> None:
    server = Server("unit", "1")
    server.tool(name="search")(lambda: "")
    with pytest.raises(ValueError, match="already registered"):
        server.tool(name="search")(lambda: "again")
    assert [tool["name"] for tool in call(server, "tools/list")["tools"]] == ["search"]


def refused_without_meta(server: Server, *requests: tuple[str, dict[str, Any]]) -> None:
    """Every request carries the required _meta (basic/index.mdx §_meta), whatever its feature."""
    for method, params in requests:
        with pytest.raises(MCPError) as caught:
            asyncio.run(server.handle(Request(1, method, params)))
        assert caught.value.code == INVALID_PARAMS


def test_a_tools_request_without_meta_is_refused(server: Server) -> None:
    refused_without_meta(server, ("tools/list", {}), ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}))


def test_a_resources_request_without_meta_is_refused(server: Server) -> None:
    refused_without_meta(
        server, ("resources/list", {}), ("resources/templates/list", {}), ("resources/read", {"uri": "config://app"})
    )


def test_a_prompts_request_without_meta_is_refused(server: Server) -> None:
    refused_without_meta(server, ("prompts/list", {}), ("prompts/get", {"name": "essay", "arguments": {"topic": "t"}}))


def test_a_server_with_resources_declares_them_and_only_them() -> None:
    server = Server("unit", "1")
    server.resource("memo://a")(lambda: "a")
    assert call(server, "server/discover")["capabilities"] == {"resources": {"subscribe": True, "listChanged": True}}
    assert [r["uri"] for r in call(server, "resources/list")["resources"]] == ["memo://a"]
    assert fails(server, "prompts/list").code == METHOD_NOT_FOUND


def test_a_server_with_prompts_declares_them_and_only_them() -> None:
    server = Server("unit", "1")
    server.prompt(name="hello")(lambda: "Say hello.")
    assert call(server, "server/discover")["capabilities"] == {"prompts": {"listChanged": True}}
    assert [p["name"] for p in call(server, "prompts/list")["prompts"]] == ["hello"]
    assert fails(server, "resources/list").code == METHOD_NOT_FOUND


@pytest.mark.parametrize("uri", ["no-scheme", "/etc/passwd", "1abc://x", ""])
def test_a_resource_uri_starts_with_a_scheme(uri: str) -> None:
    with pytest.raises(ValueError, match="RFC 3986 scheme"):
        Server("unit", "1").resource(uri)(lambda: "")
    with pytest.raises(ValueError, match="RFC 3986 scheme"):
        Server("unit", "1").resource_template(uri + "{x}")(lambda x: x)


def test_a_resource_uri_that_is_not_a_string_is_refused(server: Server) -> None:
    for uri in (None, 7, ["config://app"], {"uri": "config://app"}):
        assert fails(server, "resources/read", {"uri": uri}).code == INVALID_PARAMS
    assert fails(server, "resources/read", {}).code == INVALID_PARAMS


def test_binary_resource_contents_are_base64_blobs(server: Server) -> None:
    (content,) = call(server, "resources/read", {"uri": "bin://logo"})["contents"]
    assert "text" not in content and base64.b64decode(content["blob"], validate=True) == b"\x89PNG"


@pytest.mark.parametrize("uri", ["notes://../secret", "notes://work/..", "notes://./x"])
def test_template_values_never_hold_dot_segments(uri: str) -> None:
    server = Server("unit", "1")
    server.resource_template("notes://{folder}/{name}")(lambda folder, name: "leaked")
    server.resource_template("files://{+path}")(lambda path: "leaked")
    assert fails(server, "resources/read", {"uri": uri}).code == INVALID_PARAMS
    assert fails(server, "resources/read", {"uri": uri.replace("notes://", "files://")}).code == INVALID_PARAMS
    assert call(server, "resources/read", {"uri": "files://a/b.txt"})["contents"][0]["text"] == "leaked"


def test_prompt_arguments_are_checked_before_the_prompt_runs() -> None:
    server = Server("unit", "1")
    ran: list[str] = []

    @server.prompt()
    def greet(name: str) -> str:
        ran.append(name)
        return f"Greet {name}."

    for arguments in ({}, {"name": 5}, {"name": "Ada", "extra": "x"}, ["Ada"]):
        assert fails(server, "prompts/get", {"name": "greet", "arguments": arguments}).code == INVALID_PARAMS
    assert ran == []
    assert call(server, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})["messages"]


def test_an_input_schema_is_an_object_schema() -> None:
    server = Server("unit", "1")
    for schema in ({"type": "string"}, {"type": "array"}, {"properties": {}}):
        with pytest.raises(ValueError, match="type 'object'"):
            server.tool(name="t", input_schema=schema)(lambda: "")
    server.tool(name="none")(lambda: "")  # no schema given: the empty-object schema, never null
    assert call(server, "tools/list")["tools"][0]["inputSchema"] == {"type": "object"}


def test_tools_are_listed_in_registration_order_every_time(server: Server) -> None:
    names = [tool["name"] for tool in call(server, "tools/list")["tools"]]
    assert names == ["add", "liar", "picture", "explicit", "refuses", "crashes"]
    assert [tool["name"] for tool in call(server, "tools/list")["tools"]] == names


def test_arguments_are_checked_before_the_tool_runs() -> None:
    server = Server("unit", "1")
    ran: list[int] = []

    @server.tool(input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    def count(n: int) -> str:
        ran.append(n)
        return str(n)

    for bad in ({}, {"n": "7"}, {"n": 1.5}):
        try:
            result = call(server, "tools/call", {"name": "count", "arguments": bad})
        except MCPError:
            continue  # refused as a protocol error
        assert result["isError"] is True  # or as a tool execution error (server/tools.mdx §Error Handling)
    assert ran == []
    assert call(server, "tools/call", {"name": "count", "arguments": {"n": 7}})["content"] == [text("7")]


def test_handlers_may_be_async_and_take_the_context(server: Server) -> None:
    @server.tool(name="whoami")
    async def whoami(ctx) -> str:  # type: ignore[no-untyped-def]
        return ctx.meta.protocol_version

    assert call(server, "tools/call", {"name": "whoami"})["content"][0]["text"] == "2026-07-28"


def test_a_server_that_emits_logs_declares_logging() -> None:
    assert call(Server("unit", "1", emits_logs=True), "server/discover")["capabilities"] == {"logging": {}}


def _logging_server(**options: Any) -> Server:
    server = Server("unit", "1", **options)

    @server.tool()
    async def chatty(ctx) -> str:  # type: ignore[no-untyped-def]
        await ctx.log("warning", "careful")
        return "done"

    return server


def _sent_logs(server: Server) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def notify(message: dict[str, Any]) -> None:
        sent.append(message)

    meta = {**META, "io.modelcontextprotocol/logLevel": "debug"}
    asyncio.run(server.handle(Request(1, "tools/call", {"name": "chatty", "_meta": meta}), notify=notify))
    return [message for message in sent if message["method"] == "notifications/message"]


def test_a_server_whose_handlers_can_log_declares_logging_by_itself() -> None:
    """server/utilities/logging.mdx §Capabilities: servers that emit log notifications MUST declare
    `logging`. A handler that takes `ctx` can call `ctx.log`, so its server declares it."""
    server = _logging_server()
    assert call(server, "server/discover")["capabilities"] == {"tools": {"listChanged": True}, "logging": {}}
    assert [log["params"]["data"] for log in _sent_logs(server)] == ["careful"]

    @server.prompt()
    def plain() -> str:
        return "no context, no logs"

    quiet = Server("unit", "1")
    quiet.tool(name="plain")(lambda: "no context")
    assert "logging" not in call(quiet, "server/discover")["capabilities"]


def test_a_server_that_declines_logging_sends_no_log_messages() -> None:
    """`emits_logs=False`: `logging` is not declared, so `ctx.log` sends nothing, even when asked."""
    server = _logging_server(emits_logs=False)
    assert "logging" not in call(server, "server/discover")["capabilities"]
    assert _sent_logs(server) == []


#: A request answered by each complete result type of schema.mdx (`Result` is their common base).
RESULT_OF = {
    "Result": ("tools/call", {"name": "refuses"}),
    "CallToolResult": ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
    "ListToolsResult": ("tools/list", {}),
    "ListPromptsResult": ("prompts/list", {}),
    "GetPromptResult": ("prompts/get", {"name": "essay", "arguments": {"topic": "t"}}),
    "ListResourcesResult": ("resources/list", {}),
    "ListResourceTemplatesResult": ("resources/templates/list", {}),
    "ReadResourceResult": ("resources/read", {"uri": "config://app"}),
    "DiscoverResult": ("server/discover", {}),
    "CompleteResult": (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "essay"}, "argument": {"name": "style", "value": ""}},
    ),
}


@pytest.mark.parametrize("kind", RESULT_OF)
def test_every_result_says_its_result_type(server: Server, kind: str) -> None:
    method, params = RESULT_OF[kind]
    result = call(server, method, params)  # and the official schema requires the field
    assert result["resultType"] == "complete"


def test_client_info_changes_no_answer(server: Server) -> None:
    # clientInfo is for logs and diagnostics: servers do not branch on it (schema.mdx RequestMetaObject).
    answers = []
    for info in ({"name": "claude-code", "version": "1"}, {"name": "anything-else", "version": "0.0.1"}, None):
        meta = dict(META) if info is None else {**META, "io.modelcontextprotocol/clientInfo": info}
        params = {"name": "add", "arguments": {"a": 2, "b": 2}, "_meta": meta}
        answers.append(asyncio.run(server.handle(Request(1, "tools/call", params))))
    assert answers[0] == answers[1] == answers[2]


def test_a_server_with_tools_declares_them_and_only_them() -> None:
    server = Server("unit", "1")
    server.tool(name="t")(lambda: "t")
    assert call(server, "server/discover")["capabilities"] == {"tools": {"listChanged": True}}
    assert fails(server, "resources/list").code == METHOD_NOT_FOUND


def header(name: object, kind: str = "string") -> dict[str, Any]:
    return {"type": kind, "x-mcp-header": name}


@pytest.mark.parametrize(
    "properties",
    [
        pytest.param({"a": header("")}, id="empty"),
        pytest.param({"a": header("Bad Name")}, id="token"),
        pytest.param({"a": header("X\r\nY")}, id="control"),
        pytest.param({"a": header("Dup"), "b": header("DUP")}, id="unique"),
        pytest.param({"a": header("A", "number")}, id="number"),
        pytest.param({"a": header("A", "object")}, id="primitive"),
        pytest.param({"a": {"type": "array", "items": header("A")}}, id="reachable"),
    ],
)
def test_a_tool_whose_header_annotations_break_the_rules_is_refused(properties: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="x-mcp-header"):
        Server("unit", "1").tool(name="t", input_schema={"type": "object", "properties": properties})(lambda: "")


def test_a_crashing_tool_reveals_nothing_of_the_crash() -> None:
    server = Server("unit", "1")

    @server.tool()
    def leaky() -> str:
        open("/srv/secrets/api-key.txt")  # noqa: SIM115 - fails: FileNotFoundError with the path
        return "unreachable"

    result = call(server, "tools/call", {"name": "leaky"})
    text = result["content"][0]["text"]
    assert result["isError"] is True and "structuredContent" not in result
    assert all(secret not in text for secret in ("/srv", "api-key", "FileNotFoundError", "Traceback"))


def listed_alike(server: Server, method: str, key: str) -> None:
    """The list is the same whoever asks and whatever came before: no connection, no session."""
    seen = []
    for principal, capabilities in ((None, {}), ("alice", {"elicitation": {}}), ("bob", {"sampling": {}, "roots": {}})):
        earlier = {"name": "add", "arguments": {"a": 1, "b": 1}, "_meta": META}
        asyncio.run(server.handle(Request(2, "tools/call", earlier), principal=principal))
        meta = {**META, "io.modelcontextprotocol/clientCapabilities": capabilities}
        seen.append(asyncio.run(server.handle(Request(1, method, {"_meta": meta}), principal=principal))[key])
    assert seen[0] and seen[0] == seen[1] == seen[2]


def test_the_tool_list_is_the_same_whoever_asks(server: Server) -> None:
    listed_alike(server, "tools/list", "tools")


def test_the_resource_list_is_the_same_whoever_asks(server: Server) -> None:
    listed_alike(server, "resources/list", "resources")


def as_principal(server: Server, principal: str | None, method: str, params: dict[str, Any] | None = None) -> Any:
    """Dispatch one request on behalf of `principal`; the result, or the MCPError it raised."""
    try:
        return asyncio.run(server.handle(Request(1, method, {**(params or {}), "_meta": META}), principal=principal))
    except MCPError as error:
        return error


@pytest.fixture
def gated() -> Server:
    """Every kind of entry twice: one for everyone, one that only alice sees."""
    server = Server("unit", "1", cache=CacheHints(60_000, "public"), page_size=1)

    def only_alice(principal: str | None) -> bool:
        return principal == "alice"

    server.tool("hello")(lambda: "hi")
    server.tool("audit", visible=only_alice)(lambda: "the log")
    server.tool("bye")(lambda: "bye")
    server.prompt("greet")(lambda: "Hello")
    server.prompt("review", visible=only_alice, complete={"x": lambda value: ["a"]})(lambda x: f"Review {x}")
    server.resource("file:///public.txt")(lambda: "public")
    server.resource("file:///secret.txt", visible=only_alice)(lambda: "secret")
    server.resource_template("file:///shared/{name}", name="shared")(lambda name: name)
    server.resource_template(
        "file:///vault/{name}", name="vault", visible=only_alice, complete={"name": lambda value: ["k"]}
    )(lambda name: name)
    return server


def names(server: Server, principal: str | None, method: str, key: str) -> list[Any]:
    """Every entry of a list the principal sees, page after page, each page private."""
    listed, params = [], {}
    while True:
        page = as_principal(server, principal, method, params)
        assert (page["ttlMs"], page["cacheScope"]) == (60_000, "private")
        listed += [entry.get("name") for entry in page[key]]
        if "nextCursor" not in page:
            return listed
        params = {"cursor": page["nextCursor"]}


def test_each_principal_pages_through_only_what_it_may_see(gated: Server) -> None:
    assert names(gated, "alice", "tools/list", "tools") == ["hello", "audit", "bye"]
    assert names(gated, "bob", "tools/list", "tools") == names(gated, None, "tools/list", "tools") == ["hello", "bye"]
    assert names(gated, "alice", "prompts/list", "prompts") == ["greet", "review"]
    assert names(gated, "bob", "prompts/list", "prompts") == ["greet"]
    assert len(names(gated, "alice", "resources/list", "resources")) == 2
    assert len(names(gated, "bob", "resources/list", "resources")) == 1


def test_a_list_that_does_not_depend_on_the_principal_keeps_its_scope(server: Server) -> None:
    for principal in ("alice", "bob"):
        listed = as_principal(server, principal, "tools/list")
        assert (listed["ttlMs"], listed["cacheScope"]) == (1000, "public")


def completing(name: str) -> dict[str, Any]:
    return {"ref": {"type": "ref/prompt", "name": name}, "argument": {"name": "x", "value": ""}}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", lambda name: {"name": name}),
        ("prompts/get", lambda name: {"name": name, "arguments": {"x": "1"}}),
        ("resources/read", lambda name: {"uri": f"file:///{name}.txt"}),
        ("completion/complete", completing),
    ],
)
def test_an_entry_the_caller_may_not_see_fails_like_an_unknown_one(gated: Server, method: str, params: Any) -> None:
    hidden = {"tools/call": "audit", "prompts/get": "review", "resources/read": "secret"}.get(method, "review")
    refused, missing = (
        as_principal(gated, "bob", method, params(hidden)),
        as_principal(gated, "bob", method, params("nope")),
    )
    assert isinstance(refused, MCPError) and isinstance(missing, MCPError)
    # The same code, message and data, but for the name: nothing tells "hidden" from "absent".
    assert (refused.code, str(refused).replace(hidden, "?"), str(refused.data).replace(hidden, "?")) == (
        missing.code,
        str(missing).replace("nope", "?"),
        str(missing.data).replace("nope", "?"),
    )
    assert not isinstance(as_principal(gated, "alice", method, params(hidden)), MCPError)


def completing_template(uri_template: str) -> dict[str, Any]:
    return {"ref": {"type": "ref/resource", "uri": uri_template}, "argument": {"name": "name", "value": ""}}


def test_a_template_the_caller_may_not_see_is_not_there(gated: Server) -> None:
    assert names(gated, "alice", "resources/templates/list", "resourceTemplates") == ["shared", "vault"]
    assert names(gated, "bob", "resources/templates/list", "resourceTemplates") == ["shared"]
    for method, params in [
        ("resources/read", lambda where: {"uri": f"file:///{where}/k"}),
        ("completion/complete", lambda where: completing_template(f"file:///{where}/{{name}}")),
    ]:
        refused, missing = (
            as_principal(gated, "bob", method, params("vault")),
            as_principal(gated, "bob", method, params("nope")),
        )
        assert isinstance(refused, MCPError) and isinstance(missing, MCPError)
        assert (refused.code, str(refused).replace("vault", "?"), str(refused.data).replace("vault", "?")) == (
            missing.code,
            str(missing).replace("nope", "?"),
            str(missing.data).replace("nope", "?"),
        )
        assert not isinstance(as_principal(gated, "alice", method, params("vault")), MCPError)


def test_a_hidden_tool_has_no_header_parameters_to_betray_it() -> None:
    server = Server("unit", "1")
    schema = {"type": "object", "properties": {"region": header("Region")}}
    server.tool("audit", input_schema=schema, visible=lambda principal: principal == "alice")(lambda region: region)
    assert server.header_params_for("tools/call", {"name": "audit"}, "alice")
    hidden = server.header_params_for("tools/call", {"name": "audit"}, "bob")
    assert hidden == server.header_params_for("tools/call", {"name": "nope"}, "bob") == {}


def test_the_prompt_list_is_the_same_whoever_asks(server: Server) -> None:
    listed_alike(server, "prompts/list", "prompts")


def test_a_read_may_return_several_contents() -> None:
    server = Server("unit", "1")

    @server.resource("folder://docs")
    def folder() -> list[dict[str, Any]]:
        return [{"uri": "folder://docs/a", "text": "A"}, {"uri": "folder://docs/b", "blob": "Qg=="}]

    contents = call(server, "resources/read", {"uri": "folder://docs"})["contents"]
    assert [item["uri"] for item in contents] == ["folder://docs/a", "folder://docs/b"]
