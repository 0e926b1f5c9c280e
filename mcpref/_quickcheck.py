"""A plain-Python check for the simple JSON Schemas most tools declare.

jsonschema is general, and a call pays for that generality (about a fifth of a `tools/call`).
`quick_check(schema)` understands a few keywords (`type`, `properties`, `required`,
`additionalProperties: true|false`, `items`, an `enum` of strings) and the annotations; for
any other schema it returns None and the caller uses jsonschema alone.

The check it builds only ever says True when jsonschema would say valid. When it says False the
caller asks jsonschema, which has the final word and writes the error message. So it may be
stricter than the spec (it leaves `1.0` as an integer to jsonschema), never looser. It also
accepts only well-formed schemas, so a schema it takes needs no check against the metaschema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

#: The Python types `json.loads` produces for each JSON Schema type (exact types: no subclasses).
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "object": (dict,),
    "array": (list,),
}
_JSON_TYPES = frozenset(kind for kinds in _TYPES.values() for kind in kinds)
#: Keywords with no effect on validity, and the type their value must have.
_ANNOTATIONS: dict[str, type] = {
    "title": str,
    "description": str,
    "$comment": str,
    "examples": list,
    "deprecated": bool,
    "readOnly": bool,
    "writeOnly": bool,
    "default": object,
    "x-mcp-header": object,
}
_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum"})


def _always(value: Any) -> bool:
    return True


def quick_check(schema: Any) -> Check | None:
    """A check for `schema`, or None when the schema uses anything beyond the keywords above."""
    if schema is True:
        return _always
    if not isinstance(schema, dict):
        return None
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            if not isinstance(value, _ANNOTATIONS[key]):
                return None
        elif key not in _KEYWORDS:
            return None
    allowed = _allowed_types(schema["type"]) if "type" in schema else _JSON_TYPES
    required = schema.get("required", [])
    additional = schema.get("additionalProperties", True)
    enum = schema.get("enum")
    properties = schema.get("properties", {})
    if (
        allowed is None
        or not _unique_strings(required)
        or not isinstance(additional, bool)
        or (enum is not None and not (isinstance(enum, list) and all(isinstance(item, str) for item in enum)))
        or not isinstance(properties, dict)
    ):
        return None
    checks = {name: quick_check(sub) for name, sub in properties.items()}
    items = quick_check(schema["items"]) if "items" in schema else _always
    if items is None or any(check is None for check in checks.values()):
        return None
    members = frozenset(enum) if enum is not None else None

    def check(value: Any) -> bool:
        kind = type(value)
        if kind not in allowed:
            return False
        if kind is dict:
            if any(name not in value for name in required):
                return False
            if not additional and not value.keys() <= checks.keys():
                return False
            for name, item in value.items():
                sub = checks.get(name)
                if sub is not None and not sub(item):
                    return False
        elif kind is list and items is not _always and not all(items(item) for item in value):
            return False
        return members is None or (kind is str and value in members)

    return check


def _allowed_types(kind: Any) -> frozenset[type] | None:
    names = [kind] if isinstance(kind, str) else kind
    if not isinstance(names, list) or not names or not _unique_strings(names) or not set(names) <= _TYPES.keys():
        return None
    return frozenset(python for name in names for python in _TYPES[name])


def _unique_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value) and len(set(value)) == len(value)
