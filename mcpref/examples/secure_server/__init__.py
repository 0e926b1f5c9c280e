"""A protected MCP server: every request needs an access token from the trusted authorization server.

`mcpref.auth.ProtectedResource` in front of an ordinary `StreamableHTTP` endpoint does the OAuth
part (metadata, 401/403 challenges, token validation); the tools only see who is asking
(`ctx.principal`: the token's issuer and subject) and never the token.

- `whoami` (scope `mcp:tools`): the principal, as the server binds state to it.
- `open_notebook` / `read_notebook` (`mcp:tools`): a server-minted handle bound to the principal:
  a handle another user stole is refused.
- `delete_notebook` (`mcp:tools` and `mcp:admin`, annotated destructive): asks the user to confirm
  through an MRTR elicitation, with the notebook in a sealed `requestState` bound to the
  principal. A token without `mcp:admin` gets 403 `insufficient_scope` (step-up); the round
  survives a token refresh (same user) and refuses another user's retry.
- `audit_log` (`mcp:tools`): seen only by the admins (by user, not by scope). Everyone else gets a
  `tools/list` without it, and calling it fails exactly as for a tool that does not exist. Since
  the list depends on who asks, it is answered with `cacheScope: "private"`.

Served by `./scripts/serve` at http://127.0.0.1:8000/secure/mcp, with the local authorization
server (mcpref/examples/authorization_server) at http://127.0.0.1:8000/auth.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from joserfc.jwk import KeySet

from mcpref import InputRequired, RequestContext, Server, StreamableHTTP, ToolError, elicit_form
from mcpref.auth import JWTValidator, ProtectedResource
from mcpref.examples.reference_server.handles import HandleRefused, HandleSigner

BASIC = "mcp:tools"
ADMIN = "mcp:admin"
NOTEBOOK = {"type": "object", "properties": {"notebook": {"type": "string"}}, "required": ["notebook"]}


def create_server(admins: Collection[str] = ()) -> Server:
    """The tools; `admins` are the principals (`issuer#subject`) who see `audit_log`."""
    server = Server(
        "secure-server",
        "1.0.0",
        instructions="Every request needs a bearer token; deleting needs the mcp:admin scope.",
        serve_legacy=False,
    )
    handles = HandleSigner("notebook", issuer=server.info["name"])
    opened: list[str] = []

    @server.tool(input_schema={"type": "object", "properties": {}})
    def whoami(ctx: RequestContext) -> str:
        """Who this server thinks is asking: the token's issuer and subject."""
        return str(ctx.principal)

    @server.tool(input_schema={"type": "object", "properties": {}})
    def open_notebook(ctx: RequestContext) -> str:
        """A handle to the caller's notebook; only the caller can use it."""
        opened.append(str(ctx.principal))
        return handles.mint({"owner": ctx.principal}, ctx.principal)

    @server.tool(input_schema=NOTEBOOK)
    def read_notebook(notebook: str, ctx: RequestContext) -> str:
        """What the notebook holds (one line, for the example)."""
        content = _redeem(handles, notebook, ctx)
        return f"notebook of {content['owner']}: 3 notes"

    @server.tool(input_schema=NOTEBOOK, annotations={"destructiveHint": True, "readOnlyHint": False})
    def delete_notebook(notebook: str, ctx: RequestContext) -> str | InputRequired:
        """Delete the notebook, once the user confirms."""
        _redeem(handles, notebook, ctx)
        answer = ctx.input_response("confirm")
        if answer is None:
            ask = elicit_form("Delete this notebook for good?", {"confirm": {"type": "boolean"}}, ["confirm"])
            return InputRequired({"confirm": ask}, state={"notebook": notebook})
        if ctx.state != {"notebook": notebook}:
            raise ToolError("The confirmation was for another notebook.")
        confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm") is True
        return "deleted" if confirmed else "kept"

    @server.tool(input_schema={"type": "object", "properties": {}}, visible=lambda principal: principal in admins)
    def audit_log() -> str:
        """Who opened a notebook, oldest first (admins only)."""
        return "\n".join(f"opened by {who}" for who in opened) or "nothing yet"

    return server


def _redeem(handles: HandleSigner, notebook: str, ctx: RequestContext) -> Any:
    """What the notebook handle was minted with (`open_notebook`'s `{"owner": ...}`)."""
    try:
        return handles.redeem(notebook, ctx.principal)
    except HandleRefused as refused:
        raise ToolError(f"That notebook handle is refused: {refused}.") from None


def required_scopes(method: str | None, name: str | None) -> Collection[str]:
    """The scopes each operation needs: `mcp:tools` for all, `mcp:admin` too to delete."""
    if method == "tools/call" and name == "delete_notebook":
        return (BASIC, ADMIN)
    return (BASIC,)


def create_app(
    resource: str, issuer: str, keys: KeySet | str, admins: Collection[str] = ("alice",)
) -> ProtectedResource:
    """The protected endpoint at `resource`, trusting tokens from `issuer` signed by `keys`
    (a `KeySet`, or the issuer's JWKS URL); `admins` are the subjects who see `audit_log`."""
    return ProtectedResource(
        StreamableHTTP(create_server(admins={f"{issuer}#{subject}" for subject in admins}), path=None),
        resource=resource,
        authorization_servers=[issuer],
        validator=JWTValidator({issuer: keys}, audience=resource),
        scopes_supported=[BASIC],
        required_scopes=required_scopes,
        all_scopes=[BASIC, ADMIN],
        resource_name="mcpref secure example",
    )
