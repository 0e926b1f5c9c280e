"""Tools on their own: definitions, argument checks, results, and schemas checked at registration.

The dispatcher's side of `tools/list` and `tools/call` is in test_server.py.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from mcpref import MCPError, ToolError
from mcpref.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from mcpref.tools import Tool, ToolRegistry, ToolResult, text

OBJECT = {"type": "object"}


def run(tool: Tool, arguments: dict[str, Any]) -> Any:
    return asyncio.run(tool.call(arguments, None))  # type: ignore[arg-type]  # no handler here reads ctx


def test_a_tool_definition_carries_every_field_it_was_given() -> None:
    icons = [{"src": "https://example.com/i.png"}]
    tool = Tool("t", lambda: "", OBJECT, description="d", title="T", icons=icons, annotations={"readOnlyHint": True})
    assert tool.definition() == {
        "name": "t",
        "title": "T",
        "description": "d",
        "inputSchema": OBJECT,
        "annotations": {"readOnlyHint": True},
        "icons": icons,
    }


def test_every_header_annotation_problem_is_named_at_once() -> None:
    header = {"type": "string", "x-mcp-header": "Same"}
    with pytest.raises(ValueError) as caught:
        Tool(
            "t",
            lambda: "",
            {"type": "object", "properties": {"a": header, "b": header, "c": {**header, "x-mcp-header": "A B"}}},
        )
    assert str(caught.value) == (
        "tool 't': $.b: x-mcp-header 'Same' is used twice (names ignore case); "
        "$.c: x-mcp-header must be a non-empty HTTP token, got 'A B'"
    )


def test_arguments_the_function_does_not_take_are_not_passed_on() -> None:
    tool = Tool("t", lambda a: f"a={a}", OBJECT)
    assert run(tool, {"a": 1, "extra": 2}) == {"content": [text("a=1")]}


def test_a_function_with_var_positional_gets_only_its_keyword_parameters() -> None:
    def f(a: int, *rest: int) -> str:
        return f"{a} {rest}"

    assert run(Tool("t", f, OBJECT), {"a": 1, "rest": 2}) == {"content": [text("1 ()")]}


def test_a_function_with_var_keyword_gets_every_argument() -> None:
    def f(**arguments: int) -> str:
        return ",".join(sorted(arguments))

    assert run(Tool("t", f, OBJECT), {"a": 1, "b": 2}) == {"content": [text("a,b")]}


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({"p": {"q": "x"}}, "at p/q: 'x' is not of type 'integer'"),
        ({"p": {}}, "at p: 'q' is a required property"),
        ({}, "at (root): 'p' is a required property"),
    ],
)
def test_an_argument_error_says_where_as_a_path(arguments: dict[str, Any], where: str) -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]}},
        "required": ["p"],
    }
    with pytest.raises(ToolError) as caught:
        Tool("t", lambda p: "", schema).check_arguments(arguments)
    assert str(caught.value) == f"Invalid arguments for tool 't' {where}"


def test_a_crash_is_logged_under_the_tool_name_and_answered_in_fixed_words(caplog: pytest.LogCaptureFixture) -> None:
    def crashes() -> str:
        raise RuntimeError("secret")

    with caplog.at_level(logging.ERROR, logger="mcpref.tools"), pytest.raises(ToolError) as caught:
        run(Tool("boom", crashes, OBJECT), {})
    assert str(caught.value) == "Tool 'boom' failed with an unexpected error"
    assert [record.getMessage() for record in caplog.records] == ["tool 'boom' raised"]
    assert caplog.records[0].exc_info is not None


def test_result_of_builds_the_result_call_builds() -> None:
    tool = Tool("t", lambda: "", OBJECT, output_schema=OBJECT)
    assert tool.result_of({"n": 1}) == {"content": [text('{"n": 1}')], "structuredContent": {"n": 1}}


def test_structured_output_is_copied_as_unescaped_text() -> None:
    tool = Tool("t", lambda: "", OBJECT, output_schema=OBJECT)
    assert tool.result_of({"city": "Zürich"})["content"] == [text('{"city": "Zürich"}')]


def test_text_returned_by_a_tool_with_an_output_schema_must_match_it() -> None:
    """With an outputSchema, what the tool returns is its structured content, text included."""
    tool = Tool("t", lambda: "", OBJECT, output_schema={"type": "string"})
    assert tool.result_of("hi") == {"content": [text('"hi"')], "structuredContent": "hi"}
    with pytest.raises(MCPError):
        Tool("t", lambda: "", OBJECT, output_schema=OBJECT).result_of("hi")


class Name(str):
    """A str subclass, as enum-like or tagged strings are."""


def test_plain_returns_become_content() -> None:
    tool = Tool("t", lambda: "", OBJECT)
    assert tool.result_of(Name("a")) == {"content": [text("a")]}
    assert tool.result_of(text("one block")) == {"content": [text("one block")]}
    assert tool.result_of([text("a"), text("b")]) == {"content": [text("a"), text("b")]}
    assert tool.result_of(ToolResult([text("x")], is_error=True)) == {"content": [text("x")], "isError": True}


def test_a_return_that_is_no_result_is_named() -> None:
    with pytest.raises(TypeError) as caught:
        Tool("t", lambda: "", OBJECT).result_of(42)
    assert str(caught.value) == "tool 't' returned int; return str, dict, list or ToolResult"


def test_output_that_breaks_its_schema_is_logged_and_an_internal_error(caplog: pytest.LogCaptureFixture) -> None:
    tool = Tool("t", lambda: "", OBJECT, output_schema={"type": "object", "required": ["sum"]})
    with caplog.at_level(logging.ERROR, logger="mcpref.tools"), pytest.raises(MCPError) as caught:
        tool.result_of({"total": 1})
    assert (caught.value.code, caught.value.message) == (
        INTERNAL_ERROR,
        "Internal error: tool 't' returned data that breaks its outputSchema",
    )
    assert [record.getMessage() for record in caplog.records] == [
        "tool 't' broke its outputSchema: 'sum' is a required property"
    ]


def test_a_plain_schema_is_checked_without_compiling_a_validator() -> None:
    """The fast path the module exists for: a simple schema never builds a jsonschema validator."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    tool = Tool("t", lambda a: "", schema)
    assert tool._arguments.quick is not None and tool._arguments._validator is None
    tool.check_arguments({"a": 1})
    assert tool._arguments._validator is None


def test_formats_are_asserted() -> None:
    tool = Tool("t", lambda day: "", {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}})
    tool.check_arguments({"day": "2026-07-28"})
    with pytest.raises(ToolError, match="at day: 'yesterday' is not a 'date'"):
        tool.check_arguments({"day": "yesterday"})


def missing(where: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", **where}


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(missing({"allOf": [{"$ref": "#/$defs/gone"}]}), id="in-a-list"),
        pytest.param(missing({"properties": {"xs": {"type": "array", "items": {"$ref": "#/$defs/gone"}}}}), id="items"),
        pytest.param(missing({"default": {}, "properties": {"x": {"$ref": "#/$defs/gone"}}}), id="after-data"),
    ],
)
def test_a_ref_anywhere_must_resolve_at_registration(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as caught:
        Tool("t", lambda: "", schema)
    assert str(caught.value) == (
        "tool 't' inputSchema has a $ref that does not resolve within the schema: '#/$defs/gone' "
        "(mcpref never fetches schemas from elsewhere)"
    )


def test_refs_resolve_against_the_nearest_id() -> None:
    schema = {
        "$id": "https://example.com/root.json",
        "type": "object",
        "$defs": {
            "t": {"$id": "dir/t.json", "type": "integer"},
            "u": {"$id": "dir/u.json", "allOf": [{"$ref": "t.json"}]},
        },
        "properties": {"x": {"$ref": "dir/u.json"}},
    }
    tool = Tool("t", lambda x: "", schema)
    tool.check_arguments({"x": 1})
    with pytest.raises(ToolError):
        tool.check_arguments({"x": "one"})


def test_an_older_dialect_resolves_refs_by_its_own_rules() -> None:
    """In draft-07 an `$id` of `#name` names a location; in 2020-12 it would be no anchor."""
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "definitions": {"n": {"$id": "#n", "type": "integer"}},
        "properties": {"x": {"$ref": "#n"}},
    }
    tool = Tool("t", lambda x: "", schema)
    with pytest.raises(ToolError):
        tool.check_arguments({"x": "one"})


def test_an_unknown_tool_is_named_as_a_tool() -> None:
    with pytest.raises(MCPError) as caught:
        ToolRegistry().require("nope")
    assert (caught.value.code, caught.value.message) == (INVALID_PARAMS, "Unknown tool: nope")


def test_a_dynamic_ref_must_resolve_at_registration_too() -> None:
    """Found by the mutation run: only `$ref` was checked, so a `$dynamicRef` to another document
    registered fine and then failed every call with an internal error (and jsonschema's default
    registry, were it used, would fetch it)."""
    remote = {"type": "object", "properties": {"x": {"$dynamicRef": "https://example.invalid/s.json"}}}
    with pytest.raises(ValueError, match="does not resolve within the schema: 'https://example.invalid/s.json'"):
        Tool("t", lambda x: "", remote)
    local = {
        "type": "object",
        "$defs": {"i": {"$dynamicAnchor": "i", "type": "integer"}},
        "properties": {"x": {"$dynamicRef": "#i"}},
    }
    tool = Tool("t", lambda x: "", local)
    tool.check_arguments({"x": 1})
    with pytest.raises(ToolError, match="at x: 'one' is not of type 'integer'"):
        tool.check_arguments({"x": "one"})


NUMBER_OUT = {"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]}


def _returning(value: Any, output_schema: dict[str, Any] | None = None) -> Tool:
    return Tool("t", lambda: value, OBJECT, output_schema=output_schema)


def test_structured_output_is_carried_and_mirrored_as_text_in_its_own_characters() -> None:
    result = run(_returning({"t": 21.5, "city": "Zürich"}, NUMBER_OUT), {})
    assert result == {
        "content": [{"type": "text", "text": '{"t": 21.5, "city": "Zürich"}'}],
        "structuredContent": {"t": 21.5, "city": "Zürich"},
    }


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_structured_output_that_is_not_json_is_an_internal_error_named_and_logged(
    bad: float, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpref"), pytest.raises(MCPError) as caught:
        run(_returning({"t": bad}, NUMBER_OUT), {})
    assert (caught.value.code, caught.value.message) == (
        INTERNAL_ERROR,
        "Internal error: tool 't' returned data that is not JSON",
    )
    assert [r.getMessage() for r in caplog.records] == ["tool 't' returned NaN or an infinity in its structured output"]


def test_output_that_breaks_its_schema_is_an_internal_error_unless_the_result_is_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpref"), pytest.raises(MCPError) as caught:
        run(_returning({"t": "warm"}, NUMBER_OUT), {})
    assert (caught.value.code, caught.value.message) == (
        INTERNAL_ERROR,
        "Internal error: tool 't' returned data that breaks its outputSchema",
    )
    assert [r.getMessage().partition(": ")[0] for r in caplog.records] == ["tool 't' broke its outputSchema"]
    failed = ToolResult(content=[text("no reading")], is_error=True)
    assert run(_returning(failed, NUMBER_OUT), {}) == {"content": [text("no reading")], "isError": True}


def test_without_an_output_schema_a_string_a_block_and_a_list_of_blocks_are_content() -> None:
    block = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    assert run(_returning("hi"), {}) == {"content": [text("hi")]}
    assert run(_returning(block), {}) == {"content": [block]}
    assert run(_returning([text("a"), block]), {}) == {"content": [text("a"), block]}
    assert run(_returning([]), {}) == {"content": []}


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ({"temperature": 21}, "a dict"),
        ({"type": 1}, "a dict"),
        ([1, 2], "a list"),
        ([text("a"), {"text": "b"}], "a list"),
    ],
)
def test_without_an_output_schema_data_that_is_no_content_is_refused_in_words(value: Any, what: str) -> None:
    with pytest.raises(TypeError) as caught:
        run(_returning(value), {})
    assert str(caught.value) == (
        f'tool \'t\' returned {what} that is not content blocks (dicts with a "type"); '
        "declare output_schema to return data, or return str or ToolResult"
    )


def test_a_return_of_another_type_is_named() -> None:
    with pytest.raises(TypeError) as caught:
        run(_returning(42), {})
    assert str(caught.value) == "tool 't' returned int; return str, dict, list or ToolResult"
