"""The bugs an attacker found (issue 10), each against a real uvicorn; each failed before its fix."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import httpx
import pytest

from examples import site
from tests.hostile.conftest import body, headers

LEGACY = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


# -- the site app: what a static site answers, never a 500 --------------------------------------


@pytest.fixture
def site_http(serve, tmp_path: Path) -> httpx.Client:
    (tmp_path / "index.html").write_text("<h1>home</h1>")
    return serve(site.make_app(tmp_path))


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


@pytest.mark.parametrize("path", ["/mcp/", "/MCP", "/Dual/MCP/"])
def test_a_near_miss_of_an_mcp_endpoint_gets_a_json_rpc_404_naming_it(site_http, path) -> None:
    response = site_http.post(path, json=body("tools/list"), headers=headers("tools/list"))
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == -32600
    assert site._meant_endpoint(path) in error["message"]


def test_options_star_is_not_a_500(site_http) -> None:
    host, port = site_http.base_url.host, site_http.base_url.port
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(b"OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 405 "), answer[:200]


def test_the_site_still_serves_its_pages_and_endpoints(site_http) -> None:
    assert site_http.get("/").text == "<h1>home</h1>"
    assert site_http.get("/mcp").status_code == 405  # the endpoint's own JSON-RPC 405
    assert site_http.get("/mcp").json()["error"]["code"] == -32600


