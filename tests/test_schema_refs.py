"""`$ref` resolution (basic/index.mdx §$ref Resolution): a reference to a network URI is never
fetched; a tool whose schema needs one cannot validate its arguments, and the call fails."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from mcpref import Server
from mcpref.jsonrpc import INTERNAL_ERROR
from tests.test_server import call, fails


def test_a_remote_ref_is_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> None:
        attempts.append(args)
        raise OSError("no network in this test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    server = Server("unit", "1")
    schema = {"type": "object", "properties": {"a": {"$ref": "https://schemas.example/a.json"}}}
    server.tool(name="remote", input_schema=schema)(lambda a=None: "ran")
    assert fails(server, "tools/call", {"name": "remote", "arguments": {"a": 1}}).code == INTERNAL_ERROR
    assert attempts == []


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
