"""Per-request `_meta`: the protocol version and client capabilities every request carries.

The 2026-07-28 revision has no handshake (basic/versioning.mdx): each request names its
protocol version and the client's capabilities in `params._meta`, and the server accepts or
refuses that request on its own. This module reads those keys and checks them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .jsonrpc import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    MCPError,
)

LATEST_VERSION = "2026-07-28"
"""The newest protocol revision mcpref speaks, and the one its client asks for first."""
MODERN_VERSIONS = ("2026-07-28",)
"""Revisions served with per-request `_meta` (the "modern" era); `Server(supported_versions=...)` defaults to it."""

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
PROGRESS_TOKEN_KEY = "progressToken"

#: Syslog severities, least to most severe (server/utilities/logging.mdx).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@dataclass(frozen=True, init=False)
class RequestMeta:
    """What a request says about its sender, read from `params._meta`."""

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None = None
    log_level: str | None = None
    progress_token: str | int | None = None
    raw: dict[str, Any] | None = None

    def __init__(
        self,
        protocol_version: str,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any] | None = None,
        log_level: str | None = None,
        progress_token: str | int | None = None,
        raw: dict[str, Any] | None = None,
    ) -> None:
        # Frozen all the same: the fields are set once, into the instance's dict. The generated
        # __init__ of a frozen dataclass makes one `object.__setattr__` call per field, which
        # cost every request about a microsecond.
        fields = self.__dict__
        fields["protocol_version"] = protocol_version
        fields["client_capabilities"] = client_capabilities
        fields["client_info"] = client_info
        fields["log_level"] = log_level
        fields["progress_token"] = progress_token
        fields["raw"] = raw


def read_request_meta(params: dict[str, Any], supported: tuple[str, ...] | None = MODERN_VERSIONS) -> RequestMeta:
    """Read and check `params._meta`.

    A missing or mistyped required key is a malformed request: -32602, HTTP 400
    (basic/index.mdx §_meta). A well-formed but unsupported version is -32022 with the
    versions this server does support (basic/versioning.mdx). `supported=None` reads without
    judging the version, for a transport that must check something else first.
    """
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise _missing_meta("params._meta is required and must be an object")
    version = meta.get(PROTOCOL_VERSION_KEY)
    if not isinstance(version, str):
        raise _missing_meta(f'params._meta["{PROTOCOL_VERSION_KEY}"] is required and must be a string')
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
    if not isinstance(capabilities, dict):
        raise _missing_meta(f'params._meta["{CLIENT_CAPABILITIES_KEY}"] is required and must be an object')
    if supported is not None and version not in supported:
        raise unsupported_version(version, supported)
    log_level = meta.get(LOG_LEVEL_KEY)
    if log_level is not None and log_level not in LOG_LEVELS:
        raise MCPError(
            INVALID_PARAMS, f"Invalid params: unknown log level {log_level!r}; use one of {', '.join(LOG_LEVELS)}"
        )
    client_info = meta.get(CLIENT_INFO_KEY)
    return RequestMeta(
        version,
        capabilities,
        client_info if isinstance(client_info, dict) else None,
        log_level,
        read_progress_token(meta),
        meta,
    )


def read_progress_token(meta: dict[str, Any]) -> str | int | None:
    """The `progressToken` a request's `_meta` carries, or None when it asks for no progress.

    A token MUST be a string or an integer (basic/patterns/progress.mdx; both schemas say
    `["string", "integer"]`), in either era. Anything else (`true`, `1.5`, `null`, an object)
    is -32602 rather than silently no progress: the client asked for something it will never
    get. Like a request id it is matched by JSON type and value, so `1.0` is refused too.
    """
    if PROGRESS_TOKEN_KEY not in meta:
        return None
    token = meta[PROGRESS_TOKEN_KEY]
    if type(token) is str or type(token) is int:
        return token
    raise MCPError(
        INVALID_PARAMS,
        f"Invalid params: params._meta.{PROGRESS_TOKEN_KEY} must be a string or an integer, not {_json_type(token)}",
    )


def _json_type(value: Any) -> str:
    """What a JSON value is, in the words of JSON Schema's types, for an error message."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return f"the number {value!r}"  # never NaN or infinite: the codec refuses those
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "null"


def _missing_meta(reason: str) -> MCPError:
    return MCPError(INVALID_PARAMS, f"Invalid params: {reason}", http_status=400)


def unsupported_version(requested: Any, supported: tuple[str, ...]) -> MCPError:
    # The schema types `requested` as a string: an `initialize` that names no version, or not
    # a string, is answered with "" there (echoing it could also echo anything at all), and the
    # message says so in words rather than in Python's spelling of the value (`None`, `{'v': 1}`).
    # The message names the supported versions too: a legacy client may show its user the
    # message alone (basic/versioning.mdx asks a modern-only server to name them to `initialize`).
    named = requested if isinstance(requested, str) else ""
    shown = named if isinstance(requested, str) else "none named as a string"
    return MCPError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"Unsupported protocol version: {shown} (this server supports {', '.join(supported)})",
        {"supported": list(supported), "requested": named},
    )


def missing_capabilities(required: dict[str, Any], declared: dict[str, Any]) -> dict[str, Any]:
    """The part of `required` that `declared` lacks, compared key by key, one level of nesting.

    `{"elicitation": {"form": {}}}` is met by a client that declares `elicitation.form`; a
    capability required as `{}` is met by the key alone. Elicitation is the exception: a bare
    `"elicitation": {}` means form mode only (client/elicitation.mdx §Capabilities), on either
    side, so it is met by `form` and not by `url` alone, and it is reported as the server wrote it.
    """
    missing: dict[str, Any] = {}
    for name, sub in required.items():
        have = declared.get(name)
        wanted = sub
        if name == "elicitation":
            have, wanted = _form_if_bare(have), _form_if_bare(sub)
        if not isinstance(have, dict):
            missing[name] = sub
        elif isinstance(wanted, dict):
            lacking = {key: value for key, value in wanted.items() if key not in have}
            if lacking:
                missing[name] = sub if sub == {} else lacking
    return missing


def _form_if_bare(elicitation: Any) -> Any:
    return {"form": {}} if elicitation == {} else elicitation


def require_capabilities(required: dict[str, Any], declared: dict[str, Any]) -> None:
    """Raise -32021 naming what the client must declare for this request to be served."""
    missing = missing_capabilities(required, declared)
    if missing:
        names = ", ".join(sorted(missing))
        raise MCPError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            f"Missing required client capability: {names}",
            {"requiredCapabilities": missing},
        )
