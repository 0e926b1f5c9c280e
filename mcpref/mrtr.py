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
change it, so it is sealed (HMAC-SHA256, by a `Sealer` from sealing.py) and bound to the issuing
server, the method, a digest of the other parameters, the principal and an expiry: a tampered,
expired or replayed-elsewhere state is refused with -32602. It is signed, not encrypted: never put
secrets in it. Set `MCP_STATE_KEY` so that every instance of a deployment can open the states the
others sealed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .jsonrpc import INVALID_PARAMS, MCPError
from .sealing import EXPIRES, ISSUER, MALFORMED, PRINCIPAL, SIGNATURE, Refused, Sealer

#: Methods that may answer `input_required` and take `inputResponses`/`requestState` (mrtr.mdx).
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
#: Parameters that change between rounds, and so are left out of the digest that binds a state.
ROUND_PARAMS = frozenset({"_meta", "inputResponses", "requestState"})


@dataclass
class InputRequired:
    """Return this from a tool, prompt or resource handler to ask the client for input.

    The client answers each input request and retries the same request with the answers; the
    handler runs again and finds them in `ctx.input_responses`
    ([`basic/patterns/mrtr.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).

    Args:
        requests: Keys of your choosing mapped to input requests (`elicit_form`, `elicit_url`,
            `create_message`, `list_roots`). Each is sent only to a client that declared the
            capability it needs; another gets -32021.
        state: Any JSON value you want back on the retry, as `ctx.state`. The server seals it into
            `requestState`, bound to this request and principal, so the client cannot change it.
    """

    requests: dict[str, dict[str, Any]]
    state: Any = None


def elicit_form(message: str, properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """Ask the user to fill in a flat form ([`client/elicitation.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation)).

    Args:
        message: What the user is asked, shown with the form.
        properties: The form's fields: names mapped to primitive JSON Schema definitions
            (string, number, integer, boolean, enum).
        required: The fields the user must fill in; None makes every field optional.

    Returns:
        An `elicitation/create` input request (form mode), for `InputRequired`.
    """
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def elicit_url(message: str, url: str) -> dict[str, Any]:
    """Send the user to a URL (a sign-in, a payment) outside the client. The URL must be absolute
    ([`client/elicitation.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation):
    it must be a valid URL); keep user data and credentials out of it.

    Args:
        message: Why the user is sent there.
        url: The absolute URL to open.

    Returns:
        An `elicitation/create` input request (URL mode), for `InputRequired`; only clients that
            declare `elicitation.url` get it.

    Raises:
        ValueError: `url` has no scheme or no host.
    """
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
    call, only for clients that declare `sampling.tools`
    ([`client/sampling.mdx` §Tools in Sampling](https://modelcontextprotocol.io/specification/2026-07-28/client/sampling#tools-in-sampling)).

    Args:
        prompt: The user message's text.
        max_tokens: The most tokens the completion may take (`maxTokens`).
        system_prompt: A system prompt the client may use; None sends none.
        tools: Tools the model may call, as `tools/list` describes tools.
        tool_choice: How the model chooses among `tools` (`{"mode": "auto"}`, ...).

    Returns:
        A `sampling/createMessage` input request, for `InputRequired`.
    """
    params: dict[str, Any] = {
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens,
    }
    optional = {"systemPrompt": system_prompt, "tools": tools, "toolChoice": tool_choice}
    params.update((name, value) for name, value in optional.items() if value is not None)
    return {"method": "sampling/createMessage", "params": params}


def list_roots() -> dict[str, Any]:
    """Ask for the client's roots (the folders or repositories it lets the server work on)
    ([`client/roots.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/client/roots)).

    Returns:
        A `roots/list` input request, for `InputRequired`.
    """
    return {"method": "roots/list"}


def required_capability(input_request: dict[str, Any]) -> dict[str, Any]:
    """The client capability an input request needs; servers must not send it otherwise."""
    method = input_request.get("method")
    if method == "elicitation/create":
        url_mode = (input_request.get("params") or {}).get("mode") == "url"  # absent: form mode
        return {"elicitation": {"url": {}}} if url_mode else {"elicitation": {}}
    if method == "sampling/createMessage":
        return {"sampling": _sampling_features(input_request.get("params") or {})}
    if method == "roots/list":
        return {"roots": {}}
    raise ValueError(f"not an input request method: {method!r}")


#: The client capabilities input requests depend on, and the features of each `required_capability` asks for.
INPUT_CAPABILITIES = {"elicitation": ("form", "url"), "sampling": ("tools", "context"), "roots": ()}


def input_capabilities(declared: dict[str, Any]) -> dict[str, Any]:
    """What of a client's declared capabilities decides which input requests it can answer: for
    work that asks long after the request (a task), which need not keep the rest (the rest may
    be most of a megabyte)."""
    kept: dict[str, Any] = {}
    for name, features in INPUT_CAPABILITIES.items():
        value = declared.get(name)
        if isinstance(value, dict):
            kept[name] = {feature: {} for feature in features if feature in value}
            if value and not kept[name]:
                kept[name] = {"other": {}}  # not bare: a bare `elicitation: {}` means form mode
    return kept


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
    """Seals `requestState` so the server can trust what comes back (a `Sealer` for "requestState").

    Format: `base64url(payload) "." base64url(HMAC-SHA256(key, payload))`, where the payload is
    JSON holding the issuing server, the method, the parameter digest, the principal, the expiry
    and the state. Only the canonical base64url spelling is accepted.
    """

    def __init__(self, key: bytes | None = None, ttl_seconds: int = 600) -> None:
        self._sealer = Sealer("requestState", key, ttl_seconds)

    @property
    def ttl_seconds(self) -> int:
        return self._sealer.ttl_seconds

    def seal(
        self, state: Any, *, method: str, digest: str, principal: str | None, issuer: str = "", now: float | None = None
    ) -> str:
        bound = _bound(method, digest, principal, issuer)
        return self._sealer.seal({**bound, EXPIRES: self._sealer.expiry(now), "s": state})

    def open(
        self, token: Any, *, method: str, digest: str, principal: str | None, issuer: str = "", now: float | None = None
    ) -> Any:
        """The state sealed in `token`, or -32602 saying why it cannot be trusted.

        `issuer` names the server: two servers of one deployment share `MCP_STATE_KEY`, and a
        state one of them sealed is refused by the other."""
        try:
            return self._sealer.open(token, _bound(method, digest, principal, issuer), now=now)["s"]
        except Refused as refused:
            reason = _REFUSALS[refused.reason]
            raise MCPError(INVALID_PARAMS, f"Invalid params: requestState refused: {reason}") from None


def _bound(method: str, digest: str, principal: str | None, issuer: str) -> dict[str, Any]:
    """What a state is bound to, in the order it is sealed and checked."""
    return {ISSUER: issuer, "m": method, "d": digest, PRINCIPAL: principal}


#: Why a state is refused, by the check it failed (`Refused.reason`).
_REFUSALS = {
    MALFORMED: "it is not a requestState this server issued",
    SIGNATURE: "its signature does not match (tampered, or sealed with another key)",
    ISSUER: "it was issued by another server",
    "m": "it was issued for a different request",
    "d": "it was issued for a different request",
    PRINCIPAL: "it was issued to a different principal",
    EXPIRES: "it has expired; start the request again without it",
}
