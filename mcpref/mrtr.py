"""Multi-round-trip requests (MRTR): how a server asks the client for input without a session.

In 2026-07-28 a server never sends a request of its own (basic/patterns/mrtr.mdx). When a tool,
a prompt or a resource read needs something from the client (a form filled in by the user, an
LLM completion, the client's roots), it answers with an `input_required` result:

    {"resultType": "input_required",
     "inputRequests": {"<key>": {"method": "elicitation/create", "params": {...}}},
     "requestState": "<opaque>"}

The client fulfils each input request and sends the same request again, with a new id, adding
`inputResponses` (the same keys) and `requestState` (echoed exactly) to `params`.

`requestState` is the server's memory between rounds, carried by the client. The client could
change it, so it is sealed here with HMAC-SHA256 and bound to the method, a digest of the other
parameters, the principal and an expiry: a tampered, expired or replayed-elsewhere state is
refused with -32602. It is signed, not encrypted: never put secrets in it. Set `MCP_STATE_KEY`
so that every instance of a deployment can open the states the others sealed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .jsonrpc import INVALID_PARAMS, MCPError

logger = logging.getLogger("mcpref.mrtr")

KEY_ENV_VAR = "MCP_STATE_KEY"
#: Methods that may answer `input_required` and take `inputResponses`/`requestState` (mrtr.mdx).
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
#: Parameters that change between rounds, and so are left out of the digest that binds a state.
ROUND_PARAMS = frozenset({"_meta", "inputResponses", "requestState"})


@dataclass
class InputRequired:
    """Return this from a tool, prompt or resource handler to ask the client for input.

    `requests` maps keys of your choosing to input requests (`elicit_form`, `elicit_url`,
    `create_message`, `list_roots`); `state` is any JSON value you want back on the retry, as
    `ctx.state`.
    """

    requests: dict[str, dict[str, Any]]
    state: Any = None


def elicit_form(message: str, properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """Ask the user to fill in a flat form; `properties` are primitive JSON Schema definitions."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def elicit_url(message: str, url: str) -> dict[str, Any]:
    """Send the user to a URL (a sign-in, a payment) outside the client. The URL must be absolute
    (client/elicitation.mdx: it must be a valid URL); keep user data and credentials out of it."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"elicit_url needs an absolute URL with a scheme and a host, got {url!r}")
    return {"method": "elicitation/create", "params": {"mode": "url", "message": message, "url": url}}


def create_message(
    prompt: str,
    max_tokens: int = 256,
    system_prompt: str | None = None,
    *,
    tools: list[dict[str, Any]] | None = None,
    tool_choice: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Ask the client's LLM for a completion of one user message, optionally with `tools` it may
    call (client/sampling.mdx §Tools in Sampling: only for clients that declare `sampling.tools`)."""
    params: dict[str, Any] = {
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens,
    }
    if system_prompt is not None:
        params["systemPrompt"] = system_prompt
    if tools is not None:
        params["tools"] = tools
    if tool_choice is not None:
        params["toolChoice"] = tool_choice
    return {"method": "sampling/createMessage", "params": params}


def list_roots() -> dict[str, Any]:
    """Ask for the client's roots (the folders or repositories it lets the server work on)."""
    return {"method": "roots/list"}


def required_capability(input_request: dict[str, Any]) -> dict[str, Any]:
    """The client capability an input request needs; servers must not send it otherwise."""
    method = input_request.get("method")
    if method == "elicitation/create":
        mode = (input_request.get("params") or {}).get("mode", "form")
        return {"elicitation": {"url": {}}} if mode == "url" else {"elicitation": {}}
    if method == "sampling/createMessage":
        return {"sampling": _sampling_features(input_request.get("params") or {})}
    if method == "roots/list":
        return {"roots": {}}
    raise ValueError(f"not an input request method: {method!r}")


def _sampling_features(params: dict[str, Any]) -> dict[str, Any]:
    """What a sampling request needs beyond `sampling` (client/sampling.mdx): `tools` to offer the
    model tools (MUST NOT otherwise), `context` for the deprecated `includeContext` values."""
    needed: dict[str, Any] = {}
    if "tools" in params or "toolChoice" in params:  # provided at all, says the schema
        needed["tools"] = {}
    if params.get("includeContext", "none") != "none":
        needed["context"] = {}
    return needed


def read_input_responses(params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """`params.inputResponses`, checked: an object whose every value is a result object."""
    if "inputResponses" not in params:
        return {}
    responses = params["inputResponses"]
    if not isinstance(responses, dict) or not all(isinstance(value, dict) for value in responses.values()):
        raise MCPError(INVALID_PARAMS, "Invalid params: inputResponses must be an object of result objects")
    return responses


def params_digest(method: str, params: dict[str, Any]) -> str:
    """A digest of what the request asks for, the same in every round of it."""
    stable = {key: value for key, value in params.items() if key not in ROUND_PARAMS}
    # ASCII escapes: a lone surrogate from the client ("\ud800") has no UTF-8 form.
    canonical = json.dumps([method, stable], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class StateSealer:
    """Seals `requestState` so the server can trust what comes back.

    Format: `base64url(payload) "." base64url(HMAC-SHA256(key, payload))`, where the payload is
    JSON holding the issuing server, the state, the method, the parameter digest, the principal
    and the expiry. Only the canonical base64url spelling is accepted.
    """

    def __init__(self, key: bytes | None = None, ttl_seconds: int = 600) -> None:
        if key is None:
            configured = os.environ.get(KEY_ENV_VAR)
            if configured:
                key = configured.encode()
            else:
                logger.info("%s is not set: requestState is sealed with a per-process key", KEY_ENV_VAR)
                key = os.urandom(32)
        self._key = key
        self.ttl_seconds = ttl_seconds

    def seal(
        self,
        state: Any,
        *,
        method: str,
        digest: str,
        principal: str | None,
        issuer: str = "",
        now: float | None = None,
    ) -> str:
        expires = int((time.time() if now is None else now) + self.ttl_seconds)
        payload = json.dumps(
            {"i": issuer, "m": method, "d": digest, "p": principal, "exp": expires, "s": state},
            separators=(",", ":"),  # and ASCII escapes, so a state holding client text always encodes
        ).encode()
        return f"{b64url_encode(payload)}.{b64url_encode(self._mac(payload))}"

    def open(
        self,
        token: Any,
        *,
        method: str,
        digest: str,
        principal: str | None,
        issuer: str = "",
        now: float | None = None,
    ) -> Any:
        """The state sealed in `token`, or -32602 saying why it cannot be trusted.

        `issuer` names the server: two servers of one deployment share `MCP_STATE_KEY`, and a
        state one of them sealed is refused by the other."""
        if not isinstance(token, str) or token.count(".") != 1:
            raise _refused("it is not a requestState this server issued")
        body, mac = token.split(".")
        try:
            payload, signature = b64url_decode(body), b64url_decode(mac)
        except ValueError:
            raise _refused("it is not a requestState this server issued") from None
        if not hmac.compare_digest(signature, self._mac(payload)):
            raise _refused("its signature does not match (tampered, or sealed with another key)")
        sealed = json.loads(payload)
        if sealed.get("i", "") != issuer:
            raise _refused("it was issued by another server")
        if sealed["m"] != method or sealed["d"] != digest:
            raise _refused("it was issued for a different request")
        if sealed["p"] != principal:
            raise _refused("it was issued to a different principal")
        if sealed["exp"] < (time.time() if now is None else now):
            raise _refused("it has expired; start the request again without it")
        return sealed["s"]

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()


def _refused(reason: str) -> MCPError:
    return MCPError(INVALID_PARAMS, f"Invalid params: requestState refused: {reason}")


_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


def b64url_encode(data: bytes) -> str:
    """base64url without padding (RFC 4648 §5), the one form sealed tokens are written in."""
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64url_decode(text: str) -> bytes:
    """The bytes `b64url_encode` wrote as `text`, or ValueError for any other spelling: padding,
    the standard alphabet, stray characters or non-zero trailing bits. One token, one spelling,
    so a token cannot be varied to slip past a check that compares tokens."""
    if not _BASE64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url_encode(data) != text:
        raise ValueError("not the canonical base64url spelling")
    return data
