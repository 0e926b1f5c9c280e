"""The quick check never says valid where jsonschema says invalid, and takes only well-formed schemas."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpref import Server, ToolError
from mcpref._quickcheck import quick_check

NAMES = st.sampled_from(["a", "b", "message", "n"])
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "object", "array"])

#: Drawn on their own: among all floats, the non-whole ones an `integer` must refuse are rare enough
#: that a property drawing `st.floats()` inside nested schemas almost never meets one where it matters.
NON_WHOLE = st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not x.is_integer())

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | NON_WHOLE
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=8,
)


def _schemas(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keywords = st.fixed_dictionaries(
        {},
        optional={
            "type": TYPES | st.lists(TYPES, min_size=1, max_size=3),
            "properties": st.dictionaries(NAMES, inner, max_size=3),
            "required": st.lists(NAMES, max_size=3),
            "additionalProperties": st.booleans(),
            "items": inner,
            "enum": st.lists(st.text(max_size=2), max_size=3),
            "description": st.text(max_size=3),
            "default": json_values,
        },
    )
    return keywords


schemas = st.recursive(st.just(True) | _schemas(st.just(True)), _schemas, max_leaves=6)


#: Non-whole numbers where the drawn schemas' names and items put them: alone, as properties, as items.
non_whole_placed = (
    NON_WHOLE | st.dictionaries(NAMES, NON_WHOLE, min_size=1, max_size=3) | st.lists(NON_WHOLE, min_size=1)
)


@settings(max_examples=400, deadline=None)
@given(schemas, st.lists(json_values | non_whole_placed, min_size=1, max_size=5))
def test_a_quick_pass_is_a_jsonschema_pass(schema: Any, instances: list[Any]) -> None:
    check = quick_check(schema)
    if check is None:
        return  # a list `type` or `required` with repeats: left to jsonschema
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for instance in instances:
        if check(instance):
            assert validator.is_valid(instance), (schema, instance)


def _where_an_integer_is_expected(value: float) -> list[tuple[Any, Any]]:
    """(schema, instance) pairs that put `value` where only an integer may stand."""
    return [
        ({"type": "integer"}, value),
        ({"type": ["integer", "string"]}, value),
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": value}),
        ({"type": "object", "properties": {"o": {"properties": {"n": {"type": "integer"}}}}}, {"o": {"n": value}}),
        ({"type": "array", "items": {"type": "integer"}}, [1, value]),
    ]


@settings(max_examples=200, deadline=None)
@given(NON_WHOLE)
def test_an_integer_is_never_a_non_whole_number(value: float) -> None:
    for schema, instance in _where_an_integer_is_expected(value):
        check = quick_check(schema)
        assert check is not None and not check(instance), (schema, instance)


def test_a_tool_declared_with_an_integer_refuses_one_and_a_half() -> None:
    """The validation bypass a looser quick check would open: `{"n": 1.5}` must never reach the tool."""
    server = Server("t", "1")

    @server.tool(input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    def repeat(n: int) -> str:
        return "x" * n

    tool = server.tools.require("repeat")
    for value in (1.5, -0.5, 2.000001):
        with pytest.raises(ToolError, match=r"at n: .* is not of type 'integer'"):
            tool.check_arguments({"n": value})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "email"},
        {"type": "integer", "minimum": 0},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        {"$ref": "#/$defs/x", "$defs": {"x": {"type": "string"}}},
        {"type": "strin"},
        {"type": []},
        {"required": ["a", "a"]},
        {"additionalProperties": {"type": "string"}},
        {"properties": {"a": {"pattern": "^x"}}},
        {"description": 3},
        {"enum": [1]},
        {"enum": "a"},
        {"properties": []},
        False,
    ],
)
def test_schemas_beyond_the_subset_are_left_to_jsonschema(schema: Any) -> None:
    assert quick_check(schema) is None


def test_jsonschema_decides_what_the_quick_check_does_not_pass() -> None:
    server = Server("t", "1")

    @server.tool(input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    def double(n: int) -> str:
        return str(2 * n)

    tool = server.tools.require("double")
    tool.check_arguments({"n": 2.0})  # an integer to JSON Schema, though not to the quick check
    with pytest.raises(ToolError, match=r"at n: 'x' is not of type 'integer'"):
        tool.check_arguments({"n": "x"})
    with pytest.raises(ToolError, match=r"at \(root\): 'n' is a required property"):
        tool.check_arguments({})


ALL_TYPES = ["string", "integer", "number", "boolean", "null", "object", "array"]


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        (True, {"any": "thing"}),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, {"a": "x", "extra": 1}),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}, {"a": "x"}),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}, {}),
        ({"type": ALL_TYPES}, 1),
        ({"type": "array", "items": {"type": "integer"}}, [1, 2]),
        ({"type": "array", "items": True}, [None]),
    ],
)
def test_the_quick_check_passes_what_a_plain_schema_allows(schema: Any, instance: Any) -> None:
    """It exists to spare jsonschema on the common case: a valid call must pass it, not only jsonschema."""
    check = quick_check(schema)
    assert check is not None and check(instance)


def test_array_items_are_each_checked() -> None:
    check = quick_check({"type": "array", "items": {"type": "null"}})
    assert check is not None and check([None]) and not check([None, 1])


def test_an_enum_passes_its_members_only() -> None:
    """The property above draws a non-member only by chance; this is the rule itself."""
    check = quick_check({"type": "string", "enum": ["a", "b"]})
    assert check is not None and check("a") and check("b") and not check("c") and not check(1)
