"""Schema dialects (basic/index.mdx §JSON Schema Usage): 2020-12 unless `$schema` names another
dialect the validator knows; a dialect it does not know is refused when the tool is registered."""

from __future__ import annotations

import pytest

from mcpref import Server
from tests.test_server import call


def test_an_unknown_dialect_is_refused_at_registration() -> None:
    server = Server("unit", "1")
    schema = {"$schema": "https://schemas.example/my-dialect", "type": "object"}
    with pytest.raises(ValueError, match="dialect this server does not support"):
        server.tool(name="odd", input_schema=schema)(lambda: "")


def test_a_known_older_dialect_is_validated_as_itself() -> None:
    server = Server("unit", "1")
    # A boolean exclusiveMinimum is draft-04; under 2020-12 this schema would not even be valid.
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}},
    }
    server.tool(name="draft4", input_schema=schema)(lambda n=1: str(n))
    assert call(server, "tools/call", {"name": "draft4", "arguments": {"n": 2}})["content"][0]["text"] == "2"
    assert call(server, "tools/call", {"name": "draft4", "arguments": {"n": 0}}).get("isError") is True
