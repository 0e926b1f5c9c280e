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

from .jsonrpc import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    URL_ELICITATION_REQUIRED,
)

#: Error responses the schema defines per code, e.g. -32022 must say `requested` and `supported`.
_TYPED_ERRORS = {
    HEADER_MISMATCH: "HeaderMismatchError",
    MISSING_REQUIRED_CLIENT_CAPABILITY: "MissingRequiredClientCapabilityError",
    UNSUPPORTED_PROTOCOL_VERSION: "UnsupportedProtocolVersionError",
    URL_ELICITATION_REQUIRED: "URLElicitationRequiredError",
}


@cache
def _schema(revision: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(files("mcpref.schemas").joinpath(f"{revision}.json").read_text("utf-8"))
    return schema


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
        # The codes the spec gives a typed error (with required `data`) are held to that type.
        error = message["error"]
        code = error.get("code") if isinstance(error, dict) else None
        typed = _TYPED_ERRORS.get(code) if isinstance(code, int) else None
        return typed if typed is not None and typed in _schema(revision)["$defs"] else "JSONRPCErrorResponse"
    if "method" in message:
        return _method_defs(revision).get(
            message["method"], "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
        )
    request = _method_defs(revision).get(method or "")
    if request is None or not request.endswith("Request"):
        return "JSONRPCResultResponse"
    response = request.removesuffix("Request") + "ResultResponse"
    return response if response in _schema(revision)["$defs"] else "JSONRPCResultResponse"


def result_definition_for(result: Any, method: str | None, revision: str = "2026-07-28") -> str | None:
    """The one result definition a result must meet, chosen by its `resultType`.

    The schema's response types accept `InputRequiredResult | CallToolResult`, and an
    `InputRequiredResult` allows any extra field, so a broken complete result would slip
    through the union. Choosing by `resultType` closes that gap.
    """
    if not isinstance(result, dict) or result.get("resultType") == "input_required":
        return "InputRequiredResult" if isinstance(result, dict) else None
    if result.get("resultType", "complete") != "complete":
        # An extension's result (the tasks extension's "task"): the core schema does not define
        # it; the conformance suite and the extension's own tests check its shape.
        return None
    request = _method_defs(revision).get(method or "")
    if request is None or not request.endswith("Request"):
        return None
    name = request.removesuffix("Request") + "Result"
    return name if name in _schema(revision)["$defs"] else None


def schema_errors(message: dict[str, Any], method: str | None = None, revision: str = "2026-07-28") -> list[str]:
    """Every way `message` breaks the schema, as readable lines; empty when it conforms."""
    checks = [(definition_for(message, method, revision), message, "")]
    if "result" in message:
        result_definition = result_definition_for(message["result"], method, revision)
        if result_definition is not None:
            checks.append((result_definition, message["result"], "/result"))
    lines = []
    for definition, instance, prefix in checks:
        errors = sorted(_validator(revision, definition).iter_errors(instance), key=lambda e: list(e.absolute_path))
        lines += [f"{definition} at {prefix}/{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]
    return lines


def check_message(message: dict[str, Any], method: str | None = None, revision: str = "2026-07-28") -> None:
    """Raise `ValueError` listing the schema violations of `message`, if any."""
    errors = schema_errors(message, method, revision)
    if errors:
        raise ValueError("message breaks the official schema:\n" + "\n".join(errors))
