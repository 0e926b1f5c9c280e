"""The official suite's `authorization` scenarios against mcpref/examples/authorization_server, under uvicorn.

`conformance authorization --url ISSUER --client-id ID --resource URI --port P` checks the
authorization server metadata (RFC 8414: the fields, `issuer` equal to the URL, client ID metadata
document support), then runs an authorization code grant with PKCE: it prints the authorization
URL for a person to open and waits for the redirect on http://127.0.0.1:P/callback. Here the
person is this test: it opens the URL with httpx, the server (auto-approving as "alice") redirects
to the callback, and the suite exchanges the code at the token endpoint and checks the answer
(`iss` in the redirect, `Cache-Control: no-store`, the token fields).

The MCP requirement sets have no authorization-server section (the spec leaves the authorization
server out of scope), so there is no baseline file: every check must pass.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx

from bench.procs import free_port
from mcpref.examples.authorization_server import RegisteredClient, create_app
from tests.conftest import running

from .cli import ROOT, conformance_command

RESOURCE = "http://127.0.0.1:8000/secure/mcp"


class Deferred:
    """An ASGI app made once the server's URL (its issuer) is known."""

    app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def test_authorization_server_passes_the_suite(tmp_path: Path, terminal_report) -> None:  # type: ignore[no-untyped-def]
    """A public client (PKCE, no secret). The suite cannot drive a confidential client here: it
    sends no secret whenever the metadata lists `none`, and this server rightly refuses that."""
    port = free_port()
    client = RegisteredClient("conformance", [f"http://127.0.0.1:{port}/callback"])
    deferred = Deferred()
    with running(deferred) as issuer:
        deferred.app = create_app(issuer, clients=[client], auto_approve="alice", resources=[RESOURCE])
        command, env = conformance_command()
        arguments = ["--url", issuer, "--client-id", client.client_id, "--resource", RESOURCE, "--port", str(port)]
        output = []
        with subprocess.Popen(
            [command, "authorization", *arguments, "-o", str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=ROOT,
        ) as suite:
            assert suite.stdout is not None
            for line in suite.stdout:
                output.append(line)
                if line.startswith(f"{issuer}/authorize?"):
                    # The user's browser: follow the redirect to the suite's callback server.
                    response = httpx.get(line.strip(), follow_redirects=True, timeout=10)
                    assert response.status_code == 200, response.text
            code = suite.wait(timeout=60)
    checks = [check for path in sorted(tmp_path.rglob("checks.json")) for check in json.loads(path.read_text())]
    terminal_report(
        "MCP conformance, authorization side (mcpref/examples/authorization_server, a public client)",
        [f"{check['status']:8} {check['id']}: {check.get('errorMessage') or check['description']}" for check in checks],
    )
    assert {check["id"] for check in checks} >= {
        "authorization-server-metadata",
        "authorization-server-metadata-cimd",
        "authorization-code-grant",
    }, "".join(output)
    failed = [check for check in checks if check["status"] not in ("SUCCESS", "INFO")]
    assert not failed, f"{failed}\n{''.join(output)}"
    assert code == 0, "".join(output)
