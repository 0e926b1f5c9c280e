"""`$ref` resolution (basic/index.mdx §$ref Resolution): a reference to a network URI is never
fetched, and a tool whose schema has a reference that does not resolve within the schema itself is
refused when it is registered, rather than every call failing (or passing) later."""

from __future__ import annotations

import re
import socket
from typing import Any

import pytest

from mcpref import Server
from tests.test_server import call


def test_a_remote_ref_is_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> None:
        attempts.append(args)
        raise OSError("no network in this test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    server = Server("unit", "1")
    schema = {"type": "object", "properties": {"a": {"$ref": "https://schemas.example/a.json"}}}
    with pytest.raises(ValueError, match="does not resolve"):
        server.tool(name="remote", input_schema=schema)(lambda a=None: "ran")
    assert attempts == []
    assert server.tools.get("remote") is None


@pytest.mark.parametrize(
    ("ref", "where"),
    [
        ("https://schemas.example/a.json", "input"),
        ("other.json#/$defs/a", "input"),
        ("#/$defs/missing", "input"),
        ("https://schemas.example/a.json", "output"),
    ],
)
def test_a_schema_whose_ref_does_not_resolve_locally_is_refused_at_registration(ref: str, where: str) -> None:
    schema = {"type": "object", "$defs": {"a": {"type": "string"}}, "properties": {"a": {"$ref": ref}}}
    schemas = {"input_schema": schema} if where == "input" else {"output_schema": schema}
    with pytest.raises(ValueError, match=f"{where}Schema.*does not resolve.*{re.escape(repr(ref))}"):
        Server("unit", "1").tool(name="t", **schemas)(lambda a=None: {"a": "x"})


def test_refs_resolve_against_the_schema_and_its_embedded_resources() -> None:
    server = Server("unit", "1")
    schema = {
        "$id": "https://schemas.example/root.json",
        "type": "object",
        "$defs": {
            "zone": {"$id": "zone.json", "type": "string", "$defs": {"short": {"maxLength": 3}}},
            "anchored": {"$anchor": "here", "type": "integer"},
        },
        "properties": {
            "zone": {"$ref": "zone.json"},
            "code": {"$ref": "zone.json#/$defs/short"},
            "n": {"$ref": "#here"},
            "same": {"$ref": "https://schemas.example/root.json#/$defs/anchored"},
            "data": {"const": {"$ref": "https://not-a-schema.example/only-data"}},
        },
    }
    server.tool(name="local", input_schema=schema)(lambda **kwargs: "ok")
    answered = call(server, "tools/call", {"name": "local", "arguments": {"zone": "eu", "n": 1}})
    assert answered["content"][0]["text"] == "ok"
    assert call(server, "tools/call", {"name": "local", "arguments": {"n": "x"}}).get("isError") is True


def test_a_reference_inside_the_schema_still_resolves() -> None:
    server = Server("unit", "1")
    schema = {
        "type": "object",
        "$defs": {"city": {"type": "string", "minLength": 2}},
        "properties": {"city": {"$ref": "#/$defs/city"}},
    }
    server.tool(name="local", input_schema=schema)(lambda city="": city)
    assert call(server, "tools/call", {"name": "local", "arguments": {"city": "Oslo"}})["content"][0]["text"] == "Oslo"
    refused = call(server, "tools/call", {"name": "local", "arguments": {"city": "O"}})
    assert refused.get("isError") is True
