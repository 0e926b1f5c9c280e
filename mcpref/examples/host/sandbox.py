"""The sandbox proxy a web host puts between its page and a view (MCP Apps §Sandbox proxy).

A page that renders a view must not run it on its own origin: the view would be able to read the
page, its storage and its cookies. So the page embeds this proxy from *another* origin (here: the
other loopback name, `localhost` for a page on `127.0.0.1` and the reverse), and the proxy loads
the view's HTML into an inner iframe sandboxed with `allow-scripts` alone: an opaque origin that
can reach nothing but the proxy, by `postMessage`.

`GET /apps/sandbox?host=<the page's origin>&csp=<the view's _meta.ui.csp, as JSON>` answers the
proxy page with a `Content-Security-Policy` header built by `mcpref.apps.content_security_policy`.
The inner iframe is an `about:srcdoc` document, which inherits that policy, so the view runs
under it whatever its HTML says. The proxy relays every message between host and view, except
the reserved `ui/notifications/sandbox-*` ones, and only to and from the host it was made for.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs

from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from mcpref.apps import ViewCsp, content_security_policy

PATH = "/apps/sandbox"
_ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(?::\d{1,5})?|http://\[::1\](?::\d{1,5})?")

PROXY_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>MCP Apps sandbox proxy</title>
<style>
  html, body { margin: 0; height: 100%; overflow: hidden; }
  iframe { border: 0; width: 100%; height: 100%; display: block; }
</style>
</head>
<body>
<script>
"use strict";
const HOST = __HOST__;  // the only origin this proxy talks to
const CSP = __CSP__;    // the policy this page was served under, from its URL
const KEYS = ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"];
const reserved = (m) => typeof m?.method === "string" && m.method.startsWith("ui/notifications/sandbox-");
const same = (csp) => KEYS.every((k) => JSON.stringify(csp?.[k] || []) === JSON.stringify(CSP[k] || []));
let inner = null;

function load(params) {
  if (inner || typeof params?.html !== "string") return;
  if (!same(params.csp)) {
    console.error("sandbox proxy: the csp sent with the view is not the one this proxy runs under; not loaded");
    return;
  }
  inner = document.createElement("iframe");
  inner.setAttribute("sandbox", "allow-scripts");  // no allow-same-origin: the view's origin is opaque
  inner.setAttribute("title", "MCP App view");
  inner.srcdoc = params.html;  // an about:srcdoc document inherits this page's Content-Security-Policy
  document.body.append(inner);
}

window.addEventListener("message", (event) => {
  const message = event.data;
  if (event.source === window.parent && event.origin === HOST) {
    if (message?.method === "ui/notifications/sandbox-resource-ready") load(message.params);
    else if (inner && !reserved(message)) inner.contentWindow.postMessage(message, "*");
  } else if (inner && event.source === inner.contentWindow && !reserved(message)) {
    window.parent.postMessage(message, HOST);
  }
});
window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, HOST);
</script>
</body>
</html>
"""


def _script_json(value: object) -> str:
    """JSON that is safe inside a <script>: no `</script>` or `<!--` can be formed from it."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """The proxy page, or 400 when its host or csp is not one a proxy may be made for."""
    response = _respond(scope)
    await response(scope, receive, send)


def _respond(scope: Scope) -> Response:
    if scope.get("method") not in ("GET", "HEAD"):
        return PlainTextResponse("Method Not Allowed", 405, headers={"Allow": "GET, HEAD"})
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    host = query.get("host", [""])[0]
    own = f"{scope.get('scheme', 'http')}://{dict(scope['headers']).get(b'host', b'').decode('latin-1')}"
    if not _ORIGIN.fullmatch(host):
        return PlainTextResponse("host must be the origin of the page that embeds the proxy", 400)
    if host == own:
        # MCP Apps §Sandbox proxy: the host and the sandbox MUST have different origins.
        return PlainTextResponse("the sandbox proxy must be on another origin than its host", 400)
    try:
        csp = ViewCsp.of(json.loads(query.get("csp", ["{}"])[0]))
    except ValueError as problem:  # json's errors are ValueErrors too
        return PlainTextResponse(f"csp: {problem}", 400)
    page = PROXY_PAGE.replace("__HOST__", _script_json(host)).replace("__CSP__", _script_json(csp.to_meta()))
    headers = {
        "Content-Security-Policy": content_security_policy(csp),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }
    return Response(page, 200, headers=headers, media_type="text/html")
