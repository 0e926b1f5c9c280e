"""Check any JSON-RPC message against the official JSON schema of its revision.

The tests and the docs harness run every message the server sends (and every request a page
shows) through here, so a frame that the schema forbids cannot pass, whoever wrote it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema
from referencing import Registry, Resource


@cache
def _schema(revision: str) -> dict[str, Any]:
    return json.loads(files("mcpref.schemas").joinpath(f"{revision}.json").read_text("utf-8"))


@cache
def _method_defs(revision: str) -> dict[str, str]:
    """The schema definition of each method's request or notification, by method name."""
    found: dict[str, str] = {}
    for name, definition in _schema(revision)["$defs"].items():
        method = definition.get("properties", {}).get("method", {}).get("const")
        if (
            method
            and (name.endswith("Request") or name.endswith("Notification"))
            and not name.startswith(("Client", "Server"))
        ):
            found.setdefault(method, name)
    return found


@cache
def _validator(revision: str, definition: str) -> jsonschema.Draft202012Validator:
    schema = _schema(revision)
    registry: Registry = Registry().with_resource("urn:mcp", Resource.from_contents(schema))
    return jsonschema.Draft202012Validator({"$ref": f"urn:mcp#/$defs/{definition}"}, registry=registry)


def definition_for(message: dict[str, Any], method: str | None = None, revision: str = "2026-07-28") -> str:
    """The name of the schema definition `message` must satisfy.

    A response needs `method`, the method of the request it answers: the schema types each
    result by its request (`tools/call` → `CallToolResultResponse`).
    """
    if "error" in message:
        return "JSONRPCErrorResponse"
    if "method" in message:
        return _method_defs(revision).get(
            message["method"], "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
        )
    request = _method_defs(revision).get(method or "")
    if request is None or not request.endswith("Request"):
        return "JSONRPCResultResponse"
    response = request.removesuffix("Request") + "ResultResponse"
    return response if response in _schema(revision)["$defs"] else "JSONRPCResultResponse"


def schema_errors(message: dict[str, Any], method: str | None = None, revision: str = "2026-07-28") -> list[str]:
    """Every way `message` breaks the schema, as readable lines; empty when it conforms."""
    definition = definition_for(message, method, revision)
    errors = sorted(_validator(revision, definition).iter_errors(message), key=lambda e: list(e.absolute_path))
    return [f"{definition} at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


def check_message(message: dict[str, Any], method: str | None = None, revision: str = "2026-07-28") -> None:
    """Raise `ValueError` listing the schema violations of `message`, if any."""
    errors = schema_errors(message, method, revision)
    if errors:
        raise ValueError("message breaks the official schema:\n" + "\n".join(errors))
