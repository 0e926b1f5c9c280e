"""Server-minted handles: state that spans requests, carried by the client as an ordinary argument.

There is no session in 2026-07-28 (basic/index.mdx §Statelessness): anything that must outlive
one request travels as an identifier the client sends back. `draft_alert` writes nothing down; it
signs the draft into an opaque handle and returns it. `issue_alert` takes the handle as an
argument, checks it, and acts on what it holds. Any instance with the deployment's
`MCP_STATE_KEY` can check it, so the two calls may reach different instances.

The handle is bound to the caller (a digest of its credentials) and expires. It is signed, not
encrypted: a client can read what it holds, so nothing secret goes in. What a signed handle
cannot do (revoke early, be used only once) needs a store; see docs/patterns/serverless-state.md.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import time
from typing import Any

from mcpref import RequestContext, Server, ToolError
from mcpref.mrtr import KEY_ENV_VAR, b64url_decode, b64url_encode

from .data import STATIONS


class HandleRefused(Exception):
    """The handle was not minted here, was minted for someone else, or has expired."""


class HandleSigner:
    """Mints and checks handles for one purpose: `base64url(payload) "." base64url(HMAC-SHA256)`.

    The signing key is derived from the deployment key and the purpose, so a handle for one
    purpose is never accepted for another, nor as a `requestState`.
    """

    def __init__(self, purpose: str, key: bytes | None = None, ttl_seconds: int = 3600) -> None:
        base = key or os.environ.get(KEY_ENV_VAR, "").encode() or os.urandom(32)
        self._key = hmac.new(base, f"handle:{purpose}".encode(), hashlib.sha256).digest()
        self.ttl_seconds = ttl_seconds

    def mint(self, content: Any, principal: str | None) -> str:
        payload = json.dumps(
            {"c": content, "p": principal, "exp": int(time.time()) + self.ttl_seconds}, separators=(",", ":")
        ).encode()
        return f"{b64url_encode(payload)}.{b64url_encode(self._mac(payload))}"

    def redeem(self, handle: str, principal: str | None) -> Any:
        body, _, mac = handle.partition(".")
        try:
            payload, signature = b64url_decode(body), b64url_decode(mac)
        except ValueError:
            raise HandleRefused("it is not a handle this desk issued") from None
        if not hmac.compare_digest(signature, self._mac(payload)):
            raise HandleRefused("its signature does not match")
        sealed = json.loads(payload)
        if sealed["p"] != principal:
            raise HandleRefused("it was issued to someone else")
        if sealed["exp"] < time.time():
            raise HandleRefused("it has expired")
        return sealed["c"]

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()


def register_handle_tools(server: Server) -> None:
    drafts = HandleSigner("alert-draft")

    @server.tool(
        title="Draft a weather alert",
        input_schema={
            "type": "object",
            "properties": {"station": {"type": "string", "enum": list(STATIONS)}, "message": {"type": "string"}},
            "required": ["station", "message"],
        },
        output_schema={
            "type": "object",
            "properties": {"handle": {"type": "string"}, "preview": {"type": "string"}},
            "required": ["handle", "preview"],
        },
    )
    def draft_alert(station: str, message: str, ctx: RequestContext) -> dict[str, str]:
        """Prepare an alert without issuing it. Returns a handle for issue_alert, valid for one hour."""
        handle = drafts.mint({"station": station, "message": message}, ctx.principal)
        return {"handle": handle, "preview": f"[{station}] {message}"}

    @server.tool(
        title="Issue a drafted alert",
        input_schema={"type": "object", "properties": {"handle": {"type": "string"}}, "required": ["handle"]},
    )
    def issue_alert(handle: str, ctx: RequestContext) -> str:
        """Issue the alert a draft_alert handle stands for."""
        try:
            draft = drafts.redeem(handle, ctx.principal)
        except HandleRefused as refused:
            raise ToolError(f"This handle cannot be used: {refused}. Draft the alert again.") from None
        return f"Alert issued for {draft['station']}: {draft['message']}"

