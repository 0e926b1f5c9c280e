"""Every JSON-RPC message on a page, client and server side, against the official schema.

`mcpref.validation` picks the definition by method (a request's own `*Request`, a result's
`*ResultResponse`); on top of that a request must also be a `JSONRPCRequest`, and an error
response must match the definition of its code (`HeaderMismatchError` for -32020, ...).

Frames of the legacy era (an `initialize`, or a request that names 2025-06-18 or 2025-11-25 in its
`MCP-Protocol-Version` header and carries no modern `_meta`) are checked against the 2025-11-25
schema, the revision they speak; error codes are still checked against 2026-07-28's definitions,
which is where -32020 to -32022 are defined.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema
from referencing import Registry, Resource

from mcpref.legacy import LEGACY_VERSIONS  # the revisions a legacy frame may name; all checked as 2025-11-25
from mcpref.meta import PROTOCOL_VERSION_KEY
from mcpref.validation import schema_errors

REVISION = "2026-07-28"
LEGACY_REVISION = "2025-11-25"


@cache
def _defs(revision: str = REVISION) -> dict[str, Any]:
    return json.loads(files("mcpref.schemas").joinpath(f"{revision}.json").read_text("utf-8"))


@cache
def _validator(definition: str, revision: str = REVISION) -> jsonschema.Draft202012Validator:
    registry: Registry = Registry().with_resource("urn:mcp", Resource.from_contents(_defs(revision)))
    return jsonschema.Draft202012Validator({"$ref": f"urn:mcp#/$defs/{definition}"}, registry=registry)


def revision_of(request: Any) -> str:
    """The revision a page's request speaks: legacy when it has no modern `_meta` version and is
    either `initialize` or names one of `LEGACY_VERSIONS` in `MCP-Protocol-Version` (as mcpref.legacy
    decides)."""
    try:
        body = request.json()
    except ValueError:
        return REVISION
    if not isinstance(body, dict):
        return REVISION
    params = body.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta:
        return REVISION
    if body.get("method") == "initialize" or request.header("mcp-protocol-version") in LEGACY_VERSIONS:
        return LEGACY_REVISION
    return REVISION


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


def _against(message: Any, definition: str, revision: str = REVISION) -> list[str]:
    errors = sorted(_validator(definition, revision).iter_errors(message), key=lambda e: list(e.absolute_path))
    label = definition if revision == REVISION else f"{definition} ({revision})"
    return [f"{label} at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


def problems(message: Any, method: str | None = None, revision: str = REVISION) -> list[str]:
    """Every way `message` breaks the schema of `revision`; `method` is the request's, for a response."""
    if not isinstance(message, dict):
        return [f"a JSON-RPC message is an object, not {type(message).__name__}"]
    found = schema_errors(message, method, revision)
    if revision != REVISION:
        found = [f"({revision}) {line}" for line in found]
    if "method" in message and "id" in message:
        found += _against(message, "JSONRPCRequest", revision)
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
