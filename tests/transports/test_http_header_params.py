"""`Mcp-Param-*` headers on the server side, row by row of the table in
basic/transports/streamable-http.mdx §Server Behavior for Custom Headers."""

from __future__ import annotations

from tests.conftest import MCPClient
from tests.transports.test_http import app  # noqa: F401 - test_http's server, which conftest's base_url serves


def test_a_null_or_absent_argument_is_not_expected_as_a_header(client: MCPClient) -> None:
    arguments = {"region": "eu", "priority": None}  # priority null, dry_run absent: no headers
    headers = client.headers("tools/call", "deploy", **{"Mcp-Param-Region": "eu"})
    answer = client.post("tools/call", {"name": "deploy", "arguments": arguments}, headers=headers).messages[-1]
    # The headers pass; what the tool's schema says about a null priority is another matter.
    assert answer.get("error", {}).get("code") != -32020, answer
    absent = client.result("tools/call", {"name": "deploy", "arguments": {"region": "eu"}}, headers=headers)
    assert absent["content"][0]["text"] == "eu:0:False"


def test_a_value_in_the_body_without_its_header_is_refused(client: MCPClient) -> None:
    arguments = {"region": "eu", "priority": 3}
    headers = client.headers("tools/call", "deploy", **{"Mcp-Param-Region": "eu"})
    error = client.error("tools/call", {"name": "deploy", "arguments": arguments}, headers=headers, status=400)
    assert error["code"] == -32020 and "Mcp-Param-Priority" in error["message"]
