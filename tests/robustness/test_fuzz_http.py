"""Property-based fuzzing of the Streamable HTTP endpoint, against a real uvicorn on loopback.

Every test sends what hypothesis draws and asserts the invariant of `invariant.check_answer`
(a well-formed JSON-RPC answer with the spec's status; never a 5xx, a traceback or a hang), and
that the server logged no error while answering. One server serves the whole module.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import META, MCPClient
from tests.robustness import strategies as s
from tests.robustness.conftest import FUZZ, MODERN_ONLY, PATHS, ErrorLog
from tests.robustness.invariant import check_answer, exchange, exchange_raw


def send(
    http: httpx.Client, errors: ErrorLog, data: Any, body: Any, headers: s.Headers, sent: bytes | None = None
) -> None:
    """POST to one of the two server configurations and hold the answer to the invariant."""
    path = data.draw(st.sampled_from(PATHS), label="path")
    answer = exchange(http, body, headers, path=path)
    logged = errors.take()
    check_answer(answer, body if sent is None else sent, headers, serves_legacy=path != MODERN_ONLY)
    assert not logged, "the server logged errors:\n" + "\n".join(logged)


@FUZZ
@given(value=s.json_values, ascii_only=st.booleans(), data=st.data())
def test_any_json_value(
    fuzz_http: httpx.Client, server_errors: ErrorLog, value: Any, ascii_only: bool, data: Any
) -> None:
    """Random JSON of any shape, with headers made for it when it looks like a request."""
    body = s.to_json(value, ascii_only=ascii_only)
    send(fuzz_http, server_errors, data, body, s.correct_headers(value))


@FUZZ
@given(data=st.data())
def test_valid_requests_are_answered_well(fuzz_http: httpx.Client, server_errors: ErrorLog, data: Any) -> None:
    """The baseline: correct requests (with nasty strings inside) get results or method errors."""
    request = data.draw(s.valid_requests())
    body = data.draw(s.rendered(request))
    send(fuzz_http, server_errors, data, body, s.correct_headers(request))


@FUZZ
@given(data=st.data())
def test_mutated_requests(fuzz_http: httpx.Client, server_errors: ErrorLog, data: Any) -> None:
    """Valid requests with wrong types or values anywhere: envelope, params, `_meta`, arguments.
    The headers follow the body, so the damage reaches past the header check."""
    request = data.draw(s.mutated(data.draw(s.valid_requests())))
    body = data.draw(s.rendered(request))
    send(fuzz_http, server_errors, data, body, s.correct_headers(request))


@FUZZ
@given(data=st.data())
def test_any_value_in_any_field(fuzz_http: httpx.Client, server_errors: ErrorLog, data: Any) -> None:
    """One known field (envelope, params, `_meta`, arguments, filter) set to any JSON value,
    and the headers a client would build from that body."""
    request = data.draw(s.with_any_field(data.draw(s.valid_requests())))
    body = data.draw(s.rendered(request))
    send(fuzz_http, server_errors, data, body, s.correct_headers(request))


@FUZZ
@given(data=st.data())
def test_textual_attacks(fuzz_http: httpx.Client, server_errors: ErrorLog, data: Any) -> None:
    """What only JSON text can carry: duplicate keys, deep nesting, NaN, huge numbers, bad UTF-8."""
    request = data.draw(s.valid_requests())
    body = data.draw(s.textual_attacks(request))
    send(fuzz_http, server_errors, data, body, s.correct_headers(request))


@FUZZ
@given(data=st.data())
def test_mutated_headers(fuzz_http: httpx.Client, server_errors: ErrorLog, data: Any) -> None:
    """Missing, duplicated and garbled Mcp-* headers, base64 sentinel edge cases, odd
    Content-Type and Accept, stray Origin, session and auth headers."""
    request = data.draw(s.valid_requests())
    body = s.to_json(request)
    send(fuzz_http, server_errors, data, body, data.draw(s.mutated_headers(s.correct_headers(request))))


@FUZZ
@given(data=st.data())
def test_other_encodings(fuzz_http: httpx.Client, server_errors: ErrorLog, data: Any) -> None:
    """The same request in UTF-16/32 or latin-1, behind a BOM, gzipped, or chunked in pieces."""
    request = data.draw(s.valid_requests())
    body = s.to_json(request, ascii_only=False)
    pieces, headers = data.draw(s.encoded(body, s.correct_headers(request)))
    # Several pieces go out with chunked transfer encoding; the server must join them.
    payload = iter(pieces) if len(pieces) > 1 else pieces[0]
    send(fuzz_http, server_errors, data, payload, headers, sent=b"".join(pieces))


@pytest.fixture(scope="module")
def issued(fuzz_http: httpx.Client) -> dict[str, str]:
    """A real requestState (round one of `book`) and a real cursor (page one of tools/list)."""
    client = MCPClient(fuzz_http)
    headers = client.headers("tools/call", "book")
    round_one = client.result(
        "tools/call", {"name": "book", "arguments": {"seat": "1A"}}, meta=s.ELICITING, headers=headers
    )
    page_one = client.result("tools/list", headers=client.headers("tools/list"))
    return {"requestState": round_one["requestState"], "cursor": page_one["nextCursor"]}


@FUZZ
@given(data=st.data())
def test_mutated_round_trips(
    fuzz_http: httpx.Client, server_errors: ErrorLog, issued: dict[str, str], data: Any
) -> None:
    """Second rounds built on tokens the server really issued: an MRTR retry with its sealed
    requestState, and page two of tools/list, each garbled or mutated."""
    retry = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "book",
            "arguments": {"seat": "1A"},
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
            "requestState": data.draw(
                st.one_of(st.just(issued["requestState"]), s.garbled_token(issued["requestState"]))
            ),
            "_meta": s.ELICITING,
        },
    }
    page_two = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/list",
        "params": {
            "cursor": data.draw(st.one_of(st.just(issued["cursor"]), s.garbled_token(issued["cursor"]))),
            "_meta": META,
        },
    }
    request = data.draw(st.sampled_from([retry, page_two]))
    if data.draw(st.booleans()):
        request = data.draw(s.mutated(request))
    body = data.draw(s.rendered(request))
    send(fuzz_http, server_errors, data, body, s.correct_headers(request))


@FUZZ
@given(data=st.data())
def test_raw_http_bytes(fuzz_http: httpx.Client, server_errors: ErrorLog, data: Any) -> None:
    """Bytes no HTTP library would send (bad request lines, Content-Length and framing, control
    characters and obs-folds in headers): a 4xx or a closed connection, never a 5xx or a hang,
    and the server still answers the next request."""
    request = data.draw(s.valid_requests())
    raw = data.draw(s.raw_http(s.to_json(request), s.correct_headers(request)))
    answer = exchange_raw(fuzz_http.base_url, raw)
    status_line = answer.split(b"\r\n", 1)[0]
    if status_line:
        assert status_line.startswith(b"HTTP/1.1 "), answer[:300]
        status = int(status_line.split()[1])
        assert status < 500, answer[:1000]
        if status == 200:
            assert b"Traceback" not in answer
    logged = server_errors.take()
    assert not logged, "the server logged errors:\n" + "\n".join(logged)
    assert fuzz_http.post("/mcp", content=b"{}", headers={"Content-Type": "application/json"}).status_code == 406
