"""The requests the load generator sends, with every header a 2026-07-28 client sends."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PROTOCOL_VERSION = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
#: What `echo` is asked to send back; a response counts only if it carries this text.
ECHO_TEXT = "hello from the mcpref bench"

META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "mcpref-bench", "version": "1.0.0"},
}


@dataclass(frozen=True)
class Call:
    """One request as bytes and headers, and the text that proves its response is right."""

    name: str
    body: bytes
    headers: dict[str, str]
    expect: str


def standard_headers(method: str, mcp_name: str | None = None) -> dict[str, str]:
    """The headers a correct client sends beside every body, written out literally (the tests use
    them too, as the headers mcpref's own builder must agree with): `Mcp-Name` when the request
    names a tool, prompt or resource."""
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        "Mcp-Method": method,
    }
    if mcp_name is not None:
        headers["Mcp-Name"] = mcp_name
    return headers


def request(
    name: str, method: str, params: dict[str, Any], expect: str, mcp_name: str | None = None, request_id: int = 1
) -> Call:
    """A request as a correct client sends it: `_meta` in the body, the standard headers beside it."""
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": META}}
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    return Call(name, body, standard_headers(method, mcp_name), expect)


TOOLS_CALL = request(
    "tools/call", "tools/call", {"name": "echo", "arguments": {"message": ECHO_TEXT}}, ECHO_TEXT, "echo"
)
DISCOVER = request("server/discover", "server/discover", {}, '"supportedVersions":["2026-07-28"]')
TOOLS_LIST = request("tools/list", "tools/list", {}, '"name":"echo"')
LISTEN = request(
    "subscriptions/listen",
    "subscriptions/listen",
    {"notifications": {"toolsListChanged": True}},
    "notifications/subscriptions/acknowledged",
)
