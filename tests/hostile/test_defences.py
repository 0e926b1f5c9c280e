"""Defence in depth: Host on a loopback bind, CORS answered on purpose, nosniff, one uniform 500,
sealed tokens in one spelling and bound to their server, errors that never echo large inputs."""

from __future__ import annotations

import logging

import pytest

from mcpref import Server, StreamableHTTP, catchall
from mcpref.mrtr import StateSealer
from mcpref.origins import HostPolicy
from tests.conftest import error_answer, mcp_body, mcp_headers
from tests.hostile.conftest import hostile_server

PAGE = "http://localhost:3000"


def test_a_foreign_host_on_a_loopback_bind_is_421(serve) -> None:
    http = serve(StreamableHTTP(hostile_server()))
    port = http.base_url.port
    # Read whole (issue 25): a loopback name followed by anything but a port is not a loopback name.
    tails = ("@evil.example", "@evil.example:1", ".evil.example", ":1@evil.example", "/evil", "#x", "\\evil", " x")
    for host in (
        "evil.example",
        f"evil.example:{port}",
        "127.0.0.1.evil.example",
        *(f"127.0.0.1:{port}{t}" for t in tails),
    ):
        response = http.post("/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list", Host=host))
        assert error_answer(response, 421)["code"] == -32600, host
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
        response = http.post("/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list", Host=host))
        assert response.status_code == 200, host


def test_allowed_hosts_extend_the_loopback_names(serve) -> None:
    http = serve(StreamableHTTP(hostile_server(), hosts=HostPolicy(["mcp.internal"])))
    response = http.post(
        "/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list", Host="mcp.internal:8000")
    )
    assert response.status_code == 200


def test_the_host_check_is_off_when_not_bound_to_loopback() -> None:
    policy = HostPolicy()
    assert policy.allows("anything.example", ("10.0.0.5", 8000))
    assert not policy.allows("anything.example", ("127.0.0.1", 8000))
    assert not policy.allows("anything.example", ("::1", 8000))


def test_a_preflight_from_an_allowed_origin_is_answered(serve) -> None:
    http = serve(StreamableHTTP(hostile_server()))
    response = http.options(
        "/mcp",
        headers={
            "Origin": PAGE,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, mcp-method, mcp-param-city, x-evil",
        },
    )
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == PAGE
    assert response.headers["access-control-allow-methods"] == "GET, POST, DELETE"
    assert response.headers["access-control-allow-headers"] == "content-type, mcp-method, mcp-param-city"
    assert response.headers["vary"] == "Origin"


def test_a_2025_clients_delete_and_session_header_pass_an_allowed_pages_preflight(serve) -> None:
    """Issue 24: the preflight allowed POST alone and dropped `Mcp-Session-Id`, so a page never
    saw the 405 a 2025 client falls back on, nor the answer to a request carrying the old header."""
    http = serve(StreamableHTTP(hostile_server()))
    asked = {"Origin": PAGE, "Access-Control-Request-Headers": "mcp-session-id, last-event-id"}
    for method in ("DELETE", "GET", "POST"):
        response = http.options("/mcp", headers={**asked, "Access-Control-Request-Method": method})
        assert response.status_code == 204
        assert method in response.headers["access-control-allow-methods"].split(", ")
        assert response.headers["access-control-allow-headers"] == "mcp-session-id, last-event-id"


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_a_405_is_readable_by_an_allowed_page_and_a_foreign_origin_is_403_first(serve, method: str) -> None:
    """Was: GET and DELETE were 405 before the Origin was looked at, without CORS headers: an
    allowed page could not read the 405, and a foreign Origin was not refused (the spec's Origin
    check covers every incoming connection)."""
    http = serve(StreamableHTTP(hostile_server()))
    allowed = http.request(method, "/mcp", headers={"Origin": PAGE, "Mcp-Session-Id": "x"})
    assert allowed.status_code == 405 and allowed.headers["allow"] == "POST"
    assert allowed.headers["access-control-allow-origin"] == PAGE
    foreign = http.request(method, "/mcp", headers={"Origin": "https://evil.example"})
    assert error_answer(foreign, 403)["message"] == "Forbidden: Origin 'https://evil.example' is not allowed"
    assert "access-control-allow-origin" not in foreign.headers


def test_a_preflight_from_another_origin_is_403_without_cors_headers(serve) -> None:
    http = serve(StreamableHTTP(hostile_server()))
    response = http.options("/mcp", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers


def test_an_allowed_page_can_read_answers_and_errors(serve) -> None:
    http = serve(StreamableHTTP(hostile_server()))
    ok = http.post("/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list", Origin=PAGE))
    wrong = http.post("/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/call", Origin=PAGE))
    assert (ok.status_code, wrong.status_code) == (200, 400)
    for response in (ok, wrong):
        assert response.headers["access-control-allow-origin"] == PAGE
    plain = http.post("/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list"))
    assert "access-control-allow-origin" not in plain.headers


def test_every_answer_says_nosniff(serve) -> None:
    http = serve(StreamableHTTP(hostile_server(), stream_responses=True))
    answers = [
        http.post("/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list")),  # SSE
        http.post("/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/call")),  # JSON error
        http.get("/mcp"),  # 405
        http.post("/elsewhere", json={}),  # plain 404
    ]
    assert [answer.headers.get("x-content-type-options") for answer in answers] == ["nosniff"] * 4


class BrokenServer(Server):
    async def answer(self, incoming, notify=None):  # type: ignore[no-untyped-def, override]
        raise RuntimeError("secret detail: db password is hunter2")


def test_a_bug_is_one_uniform_500_and_one_log_line(serve, caplog, monkeypatch) -> None:
    # A fresh log budget: the process-wide one may still count lines dropped by an earlier test in
    # the same second, and then this line says "(N more not logged)" (seen in the mutation run).
    monkeypatch.setattr(catchall, "_budget", catchall.LogBudget(catchall.LINES_PER_SECOND))
    http = serve(StreamableHTTP(BrokenServer("broken", "1")))
    with caplog.at_level(logging.INFO, logger="mcpref.errors"):
        response = http.post("/mcp", json=mcp_body("server/discover"), headers=mcp_headers("server/discover"))
    assert response.status_code == 500
    assert response.json() == {"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"}}
    lines = [record for record in caplog.records if record.name == "mcpref.errors"]
    assert [record.getMessage() for record in lines] == ["POST /mcp failed: RuntimeError"]


def test_a_crash_loop_does_not_flood_the_log(serve, caplog) -> None:
    http = serve(StreamableHTTP(BrokenServer("broken", "1")))
    with caplog.at_level(logging.ERROR, logger="mcpref.errors"):
        for _ in range(30):
            http.post("/mcp", json=mcp_body("server/discover"), headers=mcp_headers("server/discover"))
    assert len([record for record in caplog.records if record.name == "mcpref.errors"]) <= 12


# One spelling per sealed token (padding, the standard alphabet, other trailing bits refused):
# tests/test_sealing.py::test_a_token_has_one_spelling, for requestState and handles alike.


def test_a_state_sealed_by_one_server_is_refused_by_another_with_the_same_key() -> None:
    sealer = StateSealer(b"k" * 32)
    token = sealer.seal(1, method="tools/call", digest="d", principal=None, issuer="weather-desk")
    with pytest.raises(Exception, match="another server"):
        sealer.open(token, method="tools/call", digest="d", principal=None, issuer="tides")


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "x" * 100_000}),
        ("resources/read", {"uri": "memo://" + "x" * 100_000}),
        ("prompts/get", {"name": "x" * 100_000}),
        ("x" * 100_000, {}),
    ],
)
def test_errors_never_echo_large_inputs(serve, method, params) -> None:
    http = serve(StreamableHTTP(hostile_server()))
    sent = mcp_headers(method[:50], Host="127.0.0.1")
    sent.pop("Mcp-Name", None)
    response = http.post("/mcp", json=mcp_body(method, params), headers=sent)
    assert len(response.content) < 2048, response.content[:200]
