"""Every JSON-RPC message on a page, client and server side, against the official schema.

`mcpref.validation` picks the definition by method (a request's own `*Request`, a result's
`*ResultResponse`); on top of that a request must also be a `JSONRPCRequest`, and an error
response must match the definition of its code (`HeaderMismatchError` for -32020, ...).
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema
from referencing import Registry, Resource

from mcpref.validation import schema_errors

REVISION = "2026-07-28"


@cache
def _defs() -> dict[str, Any]:
    return json.loads(files("mcpref.schemas").joinpath(f"{REVISION}.json").read_text("utf-8"))


@cache
def _validator(definition: str) -> jsonschema.Draft202012Validator:
    registry: Registry = Registry().with_resource("urn:mcp", Resource.from_contents(_defs()))
    return jsonschema.Draft202012Validator({"$ref": f"urn:mcp#/$defs/{definition}"}, registry=registry)


@cache
def error_definitions() -> dict[int, str]:
    """Each error code the schema gives its own definition, e.g. -32020 → HeaderMismatchError."""
    found = {}
    for name, definition in _defs()["$defs"].items():
        for part in definition.get("properties", {}).get("error", {}).get("allOf", []):
            code = part.get("properties", {}).get("code", {}).get("const")
            if isinstance(code, int):
                found[code] = name
    return found


def _against(message: Any, definition: str) -> list[str]:
    errors = sorted(_validator(definition).iter_errors(message), key=lambda e: list(e.absolute_path))
    return [f"{definition} at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


def problems(message: Any, method: str | None = None) -> list[str]:
    """Every way `message` breaks the schema; `method` is the request's, for a response."""
    if not isinstance(message, dict):
        return [f"a JSON-RPC message is an object, not {type(message).__name__}"]
    found = schema_errors(message, method, REVISION)
    if "method" in message and "id" in message:
        found += _against(message, "JSONRPCRequest")
    if "error" in message:
        code = (message.get("error") or {}).get("code")
        if code in error_definitions():
            found += _against(message, error_definitions()[code])
    result = message.get("result")
    if method is None and isinstance(result, dict) and result.get("resultType") == "input_required":
        # A result shown without its request (an illustration): check what can be checked.
        found += _against(message["result"], "InputRequiredResult")
    return sorted(set(found))


def is_jsonrpc(value: Any) -> bool:
    return isinstance(value, dict) and value.get("jsonrpc") == "2.0"
