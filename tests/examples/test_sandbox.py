"""The sandbox proxy (mcpref/examples/host/sandbox.py): served only for another origin than its host,
with the CSP built from the view's declaration; the browser side is tests/browser/test_apps.py."""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest

from mcpref.apps import ViewCsp, content_security_policy
from mcpref.examples.host import sandbox

OWN = "http://localhost:8000"
PAGE = "http://127.0.0.1:8000"


def get(host: str, csp: object = None, method: str = "GET") -> httpx.Response:
    transport = httpx.ASGITransport(app=sandbox.app)
    params = {"host": host, **({"csp": json.dumps(csp)} if csp is not None else {})}

    async def send() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url=OWN) as client:
            return await client.request(method, sandbox.PATH, params=params)

    return asyncio.run(send())


def test_the_proxy_is_served_under_the_views_declared_policy() -> None:
    declared = {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]}
    response = get(PAGE, declared)
    assert response.status_code == 200
    assert response.headers["content-security-policy"] == content_security_policy(ViewCsp.of(declared))
    assert 'const HOST = "http://127.0.0.1:8000";' in response.text
    assert response.headers["x-content-type-options"] == "nosniff"


def test_without_a_declaration_the_proxy_gets_the_restrictive_default() -> None:
    assert get(PAGE).headers["content-security-policy"] == content_security_policy(None)


def test_a_proxy_on_its_hosts_own_origin_is_refused() -> None:
    refused = get(OWN)
    assert (refused.status_code, refused.text) == (400, "the sandbox proxy must be on another origin than its host")


@pytest.mark.parametrize(
    ("host", "csp", "why"),
    [
        (PAGE, {"connectDomains": ["https://a.example; script-src *"]}, "csp: csp connectDomains"),
        (PAGE, ["not", "an", "object"], "csp: csp must be an object"),
        ("javascript:alert(1)", None, "host must be the origin"),
        ('http://127.0.0.1:8000"</script>', None, "host must be the origin"),
    ],
)
def test_a_forged_host_or_policy_is_refused(host: str, csp: object, why: str) -> None:
    refused = get(host, csp)
    assert refused.status_code == 400 and refused.text.startswith(why)


def test_the_proxy_only_answers_get() -> None:
    assert get(PAGE, method="POST").status_code == 405


def test_the_proxy_creates_no_request_of_its_own() -> None:
    """Its one message of its own is the ready notification; everything else it sends is relayed."""
    script = sandbox.PROXY_PAGE
    assert re.findall(r"method: \"([^\"]+)\"", script) == ["ui/notifications/sandbox-proxy-ready"]
    assert "id:" not in script
