"""Server-minted handles: state that spans requests, carried by the client as an ordinary argument.

There is no session in 2026-07-28 (basic/index.mdx §Statelessness): anything that must outlive
one request travels as an identifier the client sends back. `draft_alert` writes nothing down; it
signs the draft into an opaque handle and returns it. `issue_alert` takes the handle as an
argument, checks it, and acts on what it holds. Any instance with the deployment's
`MCP_STATE_KEY` can check it, so the two calls may reach different instances.

The handle is bound to the caller (a digest of its credentials) and to the server that minted it,
and expires. It is sealed as `requestState` is (mcpref/sealing.py), under a key of its own. It
is signed, not encrypted: a client can read what it holds, so nothing secret goes in. What a
signed handle cannot do (revoke early, be used only once) needs a store; see
docs/patterns/serverless-state.md.
"""

from __future__ import annotations

from typing import Any

from mcpref import RequestContext, Server, ToolError
from mcpref.sealing import EXPIRES, ISSUER, MALFORMED, PRINCIPAL, SIGNATURE, Refused, Sealer

from .data import STATIONS


class HandleRefused(Exception):
    """The handle was not minted here, was minted for someone else, or has expired."""


class HandleSigner:
    """Mints and checks handles for one purpose: a `Sealer` for `handle:<purpose>`, so a handle
    for one purpose is never accepted for another, nor as a `requestState`.

    The payload holds the content (`c`), the issuing server (`i`), the principal (`p`) and the
    expiry (`exp`): a handle another server of the deployment minted is refused here.
    """

    def __init__(self, purpose: str, key: bytes | None = None, ttl_seconds: int = 3600, issuer: str = "") -> None:
        self._sealer = Sealer(f"handle:{purpose}", key, ttl_seconds)
        self.issuer = issuer

    def mint(self, content: Any, principal: str | None) -> str:
        payload = {"c": content, ISSUER: self.issuer, PRINCIPAL: principal, EXPIRES: self._sealer.expiry()}
        return self._sealer.seal(payload)

    def redeem(self, handle: Any, principal: str | None) -> Any:
        try:
            return self._sealer.open(handle, {ISSUER: self.issuer, PRINCIPAL: principal})["c"]
        except Refused as refused:
            raise HandleRefused(_REFUSALS[refused.reason]) from None


#: Why a handle is refused, by the check it failed (`Refused.reason`).
_REFUSALS = {
    MALFORMED: "it is not a handle this desk issued",
    SIGNATURE: "its signature does not match",
    ISSUER: "it was issued by another server",
    PRINCIPAL: "it was issued to someone else",
    EXPIRES: "it has expired",
}


def register_handle_tools(server: Server) -> None:
    drafts = HandleSigner("alert-draft", issuer=server.info["name"])

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
