"""One test per core bug the fuzzer (or the probing around it) found, each against a real uvicorn.

Each names what used to happen, so a failure here says which fix came undone.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from mcpref.examples.reference_server import create_app as create_reference_app
from mcpref.jsonrpc import MAX_NESTING_DEPTH, PARSE_ERROR, MCPError, decode_json
from mcpref.validation import check_message
from tests.conftest import ACCEPT, META, error_answer, mcp_body, mcp_headers
from tests.robustness.conftest import ErrorLog

ELICITING = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


def post(http: httpx.Client, body: bytes, headers: dict[str, str] | None = None, path: str = "/mcp") -> httpx.Response:
    return http.post(
        path, content=body, headers={"Content-Type": "application/json", "Accept": ACCEPT, **(headers or {})}
    )


def call(method: str, params: dict[str, Any], request_id: Any = 1, meta: dict[str, Any] = META) -> bytes:
    """A request body with ASCII escapes, so a lone surrogate travels as `\\ud800`."""
    return json.dumps(mcp_body(method, params, request_id, meta)).encode()


@pytest.fixture(autouse=True)
def no_server_errors(server_errors: ErrorLog):
    server_errors.take()
    yield
    logged = server_errors.take()
    assert not logged, "the server logged errors:\n" + "\n".join(logged)


# -- 1. a lone surrogate could not be written: 500 and a traceback -------------------------------
# -- 2. a lone surrogate in an MRTR request could not be digested or sealed: 500 -----------------
# Both were fixed by writing and digesting lone surrogates as escapes. Issue 25 found the next
# place (a prompt hashing its argument: a 500 and a traceback per request), and one after another
# would follow; the codec now refuses them (-32700), so no handler ever holds one.

LONE_SURROGATES = [
    (b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/list"}', {}),
    (call("tools/call", {"name": "echo", "arguments": {"message": "a\udfffb"}}), mcp_headers("tools/call", "echo")),
    (call("tools/call", {"name": "book", "arguments": {"seat": "\ud800"}}, meta=ELICITING), {}),
    (b'{"jsonrpc":"2.0","id":2,"method":"\\ud800"}', {"MCP-Protocol-Version": "2025-11-25"}),
]


@pytest.mark.parametrize(("body", "headers"), LONE_SURROGATES)
def test_a_lone_surrogate_anywhere_is_a_parse_error(
    fuzz_http: httpx.Client, body: bytes, headers: dict[str, str]
) -> None:
    response = post(fuzz_http, body, headers)
    error = error_answer(response, 400)
    assert error["code"] == PARSE_ERROR and "lone surrogate" in error["message"], error
    assert "id" not in response.json()


def test_a_lone_surrogate_in_a_prompt_argument_is_refused_not_a_500(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 25: the reference server's `briefing` prompt digests its argument; `"\\ud800"` made
    that raise, a 500 and a full traceback per request."""
    http = serve(create_reference_app())
    body = call("prompts/get", {"name": "briefing", "arguments": {"city": "\ud800"}})
    with caplog.at_level("ERROR"):
        response = http.post("/mcp", content=body, headers=mcp_headers("prompts/get", "briefing"))
    assert error_answer(response, 400)["code"] == PARSE_ERROR
    assert [record for record in caplog.records if record.levelname == "ERROR"] == []


# -- 3. U+0085/U+2028/U+2029 raw in an SSE data line: splitlines-based readers cut the event ------


def test_sse_events_survive_a_reader_that_splits_lines_with_splitlines(fuzz_http: httpx.Client) -> None:
    message = "a\x85b\u2028c\u2029d"
    body = call("tools/call", {"name": "echo", "arguments": {"message": message}}, meta={**META, "progressToken": 1})
    headers = mcp_headers("tools/call", "echo")
    with fuzz_http.stream("POST", "/mcp", content=body, headers=headers) as response:
        assert response.headers["content-type"] == "text/event-stream"
        # httpx's iter_lines splits like str.splitlines, as several SSE client libraries do.
        data = [json.loads(line[5:]) for line in response.iter_lines() if line.startswith("data:")]
    assert data[-1]["result"]["content"][0]["text"] == message


# -- 4. -32021 came inside a 200 SSE stream when the request asked for progress -------------------


def test_a_missing_capability_is_400_even_when_the_request_asks_for_a_stream(fuzz_http: httpx.Client) -> None:
    body = call("tools/call", {"name": "book", "arguments": {"seat": "1A"}}, meta={**META, "progressToken": "p"})
    response = post(fuzz_http, body, mcp_headers("tools/call", "book"))
    assert error_answer(response, 400)["code"] == -32021
    assert response.headers["content-type"] == "application/json"
    check_message(response.json())


# -- 5. NaN, Infinity and 1e999 were read, and written back as invalid JSON -------------------


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"])
def test_numbers_json_has_not_are_parse_errors(fuzz_http: httpx.Client, literal: str) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%s}}' % literal.encode()
    # The modern-only server used to quote the version back: {"requested":NaN}.
    response = post(fuzz_http, body, path="/modern/mcp")
    error = error_answer(response, 400)
    assert error["code"] == PARSE_ERROR
    assert literal.lstrip("-") in error["message"]


def test_tiny_numbers_are_still_numbers() -> None:
    assert decode_json(b"[1e-999, 2.5, -0.0]") == [0.0, 2.5, 0.0]


# -- 6. the nesting check walked every character in Python: seconds of CPU per 4 MB body ----------


def test_a_4mb_body_of_brackets_is_refused_in_well_under_a_second() -> None:
    started = time.perf_counter()
    with pytest.raises(MCPError) as caught:
        decode_json(b"[" * 4_000_000)
    assert time.perf_counter() - started < 0.5  # it took 1.5-4.5 s on two cores before
    assert caught.value.code == PARSE_ERROR
    assert "deeper than" in caught.value.message


@pytest.mark.parametrize("depth, refused", [(MAX_NESTING_DEPTH, False), (MAX_NESTING_DEPTH + 1, True)])
def test_nesting_is_counted_outside_strings_only(depth: int, refused: bool) -> None:
    # Brackets, escaped quotes and escaped backslashes inside strings must not confuse the count.
    noise = '"[{\\\\\\"[", "\\\\", "{\\"}"'
    body = ("[" * (depth - 1) + noise + "]" * (depth - 1)).join(['{"a":', "}"]).encode()
    if refused:
        with pytest.raises(MCPError):
            decode_json(body)
    else:
        assert decode_json(body)["a"]


# -- 7. the validator held every error to the generic shape, so a -32022 without a string
#       `requested` (or a -32021 without `requiredCapabilities`) passed as well-formed ------------


@pytest.mark.parametrize(
    "error",
    [
        {"code": -32022, "message": "m", "data": {"supported": ["2026-07-28"], "requested": 7}},
        {"code": -32022, "message": "m"},
        {"code": -32021, "message": "m", "data": {}},
    ],
)
def test_typed_errors_are_held_to_their_own_definition(error: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="Error at /error"):
        check_message({"jsonrpc": "2.0", "id": 1, "error": error})


def test_well_formed_typed_errors_pass() -> None:
    data = {"supported": ["2026-07-28"], "requested": "1999-01-01"}
    check_message({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "m", "data": data}})
    check_message({"jsonrpc": "2.0", "error": {"code": -32020, "message": "m"}})


# -- 8. an argument the schema allows but the function lacks: a TypeError, a logged traceback
#       and "failed with an unexpected error" for a request that was valid -----------------------


def test_arguments_a_schema_allows_but_the_function_lacks_are_not_passed(fuzz_http: httpx.Client) -> None:
    params = {"name": "echo", "arguments": {"message": "hi", "shout": True}}
    response = post(fuzz_http, call("tools/call", params), mcp_headers("tools/call", "echo"))
    assert response.json()["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert "isError" not in response.json()["result"]
    # `ctx` is the server's to give, never the client's.
    params = {"name": "whoami", "arguments": {"ctx": "mine"}}
    response = post(fuzz_http, call("tools/call", params), mcp_headers("tools/call", "whoami"))
    assert response.json()["result"]["content"][0]["text"].isdigit()


# -- 9. the modern-only server echoed initialize's protocolVersion whatever it was: null, a
#       number or an object as -32022 `requested`, which the schema types as a string --------------


@pytest.mark.parametrize(
    "params", [{}, {"protocolVersion": 7}, {"protocolVersion": {"v": 1}}, {"protocolVersion": "1.0"}]
)
def test_an_unsupported_version_error_names_the_request_as_a_string(fuzz_http: httpx.Client, params: dict) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode()
    response = post(fuzz_http, body, path="/modern/mcp")
    error = error_answer(response, 400)
    assert error["code"] == -32022
    version = params.get("protocolVersion")
    assert error["data"]["requested"] == (version if isinstance(version, str) else "")
    check_message(response.json())
