"""`_meta` keys (basic/index.mdx §_meta): every key mcpref writes follows the naming rules, and
keys it does not know, reserved or not, are carried without assumptions about their values."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from mcpref import Server
from mcpref.jsonrpc import Request
from tests.test_server import META, call

#: An optional prefix of dot-separated labels (each starting with a letter and ending with a
#: letter or digit) and a slash, then a name that begins and ends with an alphanumeric.
LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
NAME = r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?"
KEY = re.compile(rf"(?:{LABEL}(?:\.{LABEL})*/)?{NAME}")


def meta_keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        own = list(value.get("_meta", {})) if isinstance(value.get("_meta"), dict) else []
        return own + [k for v in value.values() for k in meta_keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in meta_keys(v)]
    return []


def test_the_key_grammar_itself() -> None:
    assert all(KEY.fullmatch(k) for k in ["io.modelcontextprotocol/serverInfo", "progressToken", "com.x-y/a_b.c", ""])
    assert not any(KEY.fullmatch(k) for k in ["9io/x", "io./x", "io-/x", "-a", "a-", "io.modelcontextprotocol/_x"])


def test_every_meta_key_the_server_writes_follows_the_rules() -> None:
    server = Server("unit", "1", emits_logs=True)
    server.tool(name="echo")(lambda text="": text)
    server.resource("memo://a", mime_type="text/plain")(lambda: "a")
    server.prompt(name="hello")(lambda: "hi")
    results = [call(server, m) for m in ("server/discover", "tools/list", "resources/list", "prompts/list")]
    results += [call(server, "tools/call", {"name": "echo", "arguments": {"text": "x"}})]
    keys = [k for result in results for k in meta_keys({"result": result})]
    assert "io.modelcontextprotocol/serverInfo" in keys
    assert [k for k in keys if not KEY.fullmatch(k)] == []


def test_unknown_meta_keys_are_carried_without_assumptions() -> None:
    server = Server("unit", "1")
    server.tool(name="echo")(lambda text="": text)
    odd = {**META, "io.modelcontextprotocol/fromTheFuture": [1, {"x": None}], "com.example/trace": "anything"}
    params = {"name": "echo", "arguments": {"text": "still served"}, "_meta": odd}
    result = asyncio.run(server.handle(Request(1, "tools/call", params)))
    assert result["content"][0]["text"] == "still served"
