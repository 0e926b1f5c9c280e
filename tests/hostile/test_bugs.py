"""The bugs an attacker found (issue 10), each against a real uvicorn; each failed before its fix."""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import httpx
import pytest

import docsite
from mcpref import StreamableHTTP
from mcpref.demo import meant_endpoint
from mcpref.examples.reference_server import create_dual_app
from tests.conftest import error_answer, mcp_body, mcp_headers
from tests.hostile.conftest import Record, hostile_server

LEGACY = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def test_completion_with_a_context_that_is_not_an_object_is_invalid_params(serve) -> None:
    http = serve(StreamableHTTP(hostile_server()))
    for context in (1, "x", [], {"arguments": 1}, {"arguments": {"tone": 2}}):
        params = {"ref": {"type": "ref/prompt", "name": "brief"}, "argument": {"name": "city", "value": ""}}
        response = http.post(
            "/mcp",
            json=mcp_body("completion/complete", {**params, "context": context}),
            headers=mcp_headers("completion/complete"),
        )
        assert response.status_code == 200, (context, response.text)
        assert response.json()["error"]["code"] == -32602


# -- the site app: what a static site answers, never a 500 --------------------------------------


@pytest.fixture
def site_http(serve, tmp_path: Path) -> httpx.Client:
    (tmp_path / "index.html").write_text("<h1>home</h1>")
    return serve(docsite.make_app(tmp_path))


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/nope", 405),
        ("DELETE", "/", 405),
        ("GET", "/nope", 404),
        ("GET", "/%00", 404),
        ("GET", "/" + "a" * 5000, 404),
    ],
)
def test_the_site_answers_paths_it_does_not_serve_as_a_static_site(site_http, method, path, status, caplog) -> None:
    with caplog.at_level(logging.ERROR):
        response = site_http.request(method, path, content=b"{}", headers={"Content-Type": "application/json"})
    assert response.status_code == status
    assert response.headers["content-type"].startswith("text/plain")
    assert "Traceback" not in response.text
    assert response.headers["x-content-type-options"] == "nosniff"
    if status == 405:
        assert response.headers["allow"] == "GET, HEAD"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("path", ["/mcp/", "/MCP", "/Dual/MCP/", "/secure/mcp/"])
def test_a_near_miss_of_an_mcp_endpoint_gets_a_json_rpc_404_naming_it(site_http, path) -> None:
    response = site_http.post(path, json=mcp_body("tools/list"), headers=mcp_headers("tools/list"))
    error = error_answer(response, 404)
    assert error["code"] == -32600
    assert meant_endpoint(path) in error["message"]


def test_options_star_is_not_a_500(site_http) -> None:
    host, port = site_http.base_url.host, site_http.base_url.port
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(b"OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 405 "), answer[:200]


@pytest.mark.parametrize(
    ("target", "location"),
    [("/guides", "/guides/"), ("//guides", "/guides/"), ("/guides?x=1", "/guides/?x=1"), ("/a%20b", "/a%20b/")],
)
def test_a_directory_redirect_names_no_host_the_client_chose(site_http, tmp_path: Path, target, location) -> None:
    for directory in ("guides", "a b"):
        (tmp_path / directory).mkdir()
        (tmp_path / directory / "index.html").write_text("<h1>a page</h1>")
    host, port = site_http.base_url.host, site_http.base_url.port
    with socket.create_connection((host, port), timeout=5) as sock:  # a raw target: httpx would tidy `//guides`
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    status, *lines = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    assert status.split(" ")[1] == "307", status
    assert headers["location"] == location
    followed = site_http.get(location, headers={"Host": "evil.example"})
    assert followed.status_code == 200 and followed.text == "<h1>a page</h1>"


def test_the_site_still_serves_its_pages_and_endpoints(site_http) -> None:
    assert site_http.get("/").text == "<h1>home</h1>"
    assert error_answer(site_http.get("/mcp"), 405)["code"] == -32600  # the endpoint's own JSON-RPC 405


@pytest.mark.parametrize(
    "path",
    ["/.well-known/oauth-authorization-server/auth", "/.well-known/oauth-protected-resource/secure/mcp", "/auth/jwks"],
)
def test_the_sites_authorization_demo_writes_no_host_but_a_loopback_name_and_a_port(site_http, path) -> None:
    """Issue 25: `Host: 127.0.0.1:PORT@evil.example` reached the metadata as the issuer's host."""
    port = site_http.base_url.port
    for host in (f"127.0.0.1:{port}@evil.example", f"localhost:{port}:1", f"[::1]:{port}@x"):
        response = site_http.get(path, headers={"Host": host})
        assert response.status_code == 421 and "evil" not in response.text, host
    assert site_http.get(path).status_code == 200


# -- the legacy path keeps the caller --------------------------------------------------------------


def legacy_call(http: httpx.Client, name: str, arguments: dict, authorization: str | None) -> dict:
    sent = {**LEGACY, "MCP-Protocol-Version": "2025-11-25"}
    if authorization is not None:
        sent["Authorization"] = authorization
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    response = http.post("/dual/mcp", json=message, headers=sent)
    assert response.status_code == 200, response.text
    return response.json()["result"]


def test_a_handle_minted_on_a_legacy_request_belongs_to_its_caller(serve) -> None:
    http = serve(create_dual_app())
    drafted = legacy_call(http, "draft_alert", {"station": "oslo", "message": "Gale"}, "Bearer alice")
    handle = drafted["structuredContent"]["handle"]
    assert legacy_call(http, "issue_alert", {"handle": handle}, "Bearer alice").get("isError") is not True
    for someone_else in ("Bearer mallory", None):
        refused = legacy_call(http, "issue_alert", {"handle": handle}, someone_else)
        assert refused["isError"] is True, someone_else
        assert "someone else" in refused["content"][0]["text"]


# -- closing a plain-JSON response cancels the tool ----------------------------------------------


def test_a_client_closing_a_json_response_cancels_the_tool(serve) -> None:
    record = Record()
    http = serve(StreamableHTTP(hostile_server(record)))
    calls = 5
    for request_id in range(calls):
        message = mcp_body("tools/call", {"name": "slow", "arguments": {"seconds": 2}}, request_id)
        with pytest.raises(httpx.ReadTimeout):
            http.post("/mcp", json=message, headers=mcp_headers("tools/call", "slow"), timeout=0.3)
    deadline = time.monotonic() + 3
    while record.cancelled < calls and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (record.started, record.cancelled, record.finished) == (calls, calls, 0)


# -- a sync handler that blocks does not stall the loop -----------------------------------------


def test_a_blocking_sync_tool_runs_in_a_thread_and_others_are_answered_meanwhile(serve) -> None:
    import threading

    http = serve(StreamableHTTP(hostile_server()))
    blocked: list[httpx.Response] = []
    message = mcp_body("tools/call", {"name": "block", "arguments": {"seconds": 3}})
    thread = threading.Thread(
        target=lambda: blocked.append(http.post("/mcp", json=message, headers=mcp_headers("tools/call", "block")))
    )
    thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    listed = http.post("/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list"))
    waited = time.monotonic() - started
    thread.join()
    assert listed.status_code == 200
    assert waited < 2.0, f"tools/list waited {waited:.2f} s behind a blocking tool"
    assert blocked[0].json()["result"]["content"][0]["text"] == "unblocked"
