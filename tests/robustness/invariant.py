"""The one rule every answer to every POST must keep, whatever was sent.

`exchange` sends raw bytes with raw headers and reads the answer under a deadline;
`check_answer` then asserts the invariant of issue 5:

- no 5xx, no hang, no traceback in the body;
- 202 only for a notification, with an empty body;
- anything else is one well-formed JSON-RPC message (or, for a streamed answer, SSE events that
  end with the response), strict JSON in UTF-8, valid against the official schema
  (`mcpref.validation.check_message`);
- a result comes with 200; an error comes with the status the spec gives its code: 4xx for
  what is found before dispatch (framing, `_meta`, headers, version, unknown method), 200 only
  for what the method itself refuses (an unknown tool, a bad cursor, a refused `requestState`);
- the response names the id of the request when the request had a usable one.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from mcpref.legacy import LEGACY_VERSIONS
from mcpref.validation import check_message

#: No single answer may take longer than this; a listen stream counts as answered at its ack.
DEADLINE_SECONDS = 5.0

#: The statuses each error code may come with. Legacy-era requests (2025-era header, no modern
#: `_meta`) keep 200 for method errors, as mcpref.legacy explains; that is added below.
STATUSES_FOR_CODE = {
    -32700: {400},
    -32600: {400, 403, 405, 406, 413, 415},
    -32601: {404},
    -32602: {200, 400},
    -32020: {400},
    -32021: {400},
    -32022: {400},
}
LEGACY_OK_CODES = {-32600, -32601, -32602, -32002}  # -32002: resource not found, before 2026
#: Errors that may arrive inside a 200 SSE stream: the status is sent before the handler runs, so
#: only what the handler itself refuses (a bad argument, input the client cannot give) belongs here.
IN_STREAM_CODES = {-32602, -32021}


#: How many requests `exchange` has sent in this process (scripts/fuzz prints it).
sent_count = 0


@dataclass
class Answer:
    status: int
    content_type: str
    body: bytes
    messages: list[dict[str, Any]] = field(default_factory=list)


def exchange(
    http: httpx.Client, body: bytes | Any, headers: list[tuple[bytes, bytes]], *, path: str = "/mcp"
) -> Answer:
    """POST `body` (bytes, or an iterator of chunks for chunked encoding) and read the answer.

    An SSE answer is read event by event and closed at the response, or at the acknowledgement
    of a `subscriptions/listen` stream (which would otherwise stay open by design).
    """
    global sent_count
    sent_count += 1
    started = time.monotonic()
    with http.stream("POST", path, content=body, headers=headers) as response:
        content_type = response.headers.get("content-type", "")
        if not content_type.startswith("text/event-stream"):
            return Answer(response.status_code, content_type, response.read())
        raw = bytearray()
        messages: list[dict[str, Any]] = []
        for chunk in response.iter_bytes():
            raw += chunk
            messages = sse_data(bytes(raw))
            if messages and _ends_stream(messages[-1]):
                break
            assert time.monotonic() - started < DEADLINE_SECONDS, f"stream still open after {DEADLINE_SECONDS}s"
        return Answer(response.status_code, content_type, bytes(raw), messages)


def exchange_raw(base_url: httpx.URL, raw: bytes) -> bytes:
    """Write `raw` to a fresh connection, half-close it, and read until the server closes."""
    global sent_count
    sent_count += 1
    with socket.create_connection((base_url.host, base_url.port), timeout=DEADLINE_SECONDS) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def sse_data(raw: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of the complete events in `raw`, split as the SSE spec says (CR, LF
    or CRLF end a line; a blank line ends an event). Not `str.splitlines`, which also splits at
    U+0085, U+2028 and U+2029: see `check_answer` for why those must not appear anyway."""
    text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    complete = text[: text.rfind("\n\n") + 1] if "\n\n" in text else ""
    messages = []
    for block in complete.split("\n\n"):
        data = [line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")]
        if data:
            messages.append(strict_json("\n".join(data).encode()))
    return messages


def _ends_stream(message: dict[str, Any]) -> bool:
    return "id" in message or message.get("method") == "notifications/subscriptions/acknowledged"


def strict_json(data: bytes) -> Any:
    """JSON as RFC 8259 has it: UTF-8, and no NaN or Infinity literals."""

    def refuse(literal: str) -> Any:
        raise AssertionError(f"the server wrote the non-JSON literal {literal}")

    return json.loads(data.decode("utf-8"), parse_constant=refuse)


def check_answer(
    answer: Answer, sent: bytes, headers: list[tuple[bytes, bytes]], *, serves_legacy: bool = True
) -> None:
    """Assert the invariant for `answer` to a POST of `sent` with `headers` (see the module doc).

    `serves_legacy` says whether the server answers 2025-era requests in their own era
    (the default configuration) or, modern-only, refuses them with modern errors.
    """
    request = _readable(sent)
    assert answer.status < 500, f"{answer.status}: {answer.body[:500]!r}"
    assert b"Traceback" not in answer.body, answer.body[:2000]
    if answer.status == 202:
        assert answer.body == b"", answer.body[:500]
        assert not (isinstance(request, dict) and "id" in request), "a request with an id was answered 202"
        return
    if answer.content_type.startswith("text/event-stream"):
        assert answer.status == 200, answer.status
        assert answer.messages, "an SSE answer without a single event"
        # Legal in SSE, but httpx's `iter_lines` (under httpx-sse, so under most Python MCP
        # clients) splits lines with `str.splitlines`, which also breaks at these.
        text = answer.body.decode("utf-8")
        assert not any(char in text for char in "\x85\u2028\u2029"), "a line separator httpx splits at"
        messages = answer.messages
    else:
        assert answer.content_type == "application/json", (
            f"{answer.status} {answer.content_type}: {answer.body[:300]!r}"
        )
        messages = [strict_json(answer.body)]
    method = request.get("method") if isinstance(request, dict) else None
    method = method if isinstance(method, str) else None
    legacy = serves_legacy and _legacy(request, headers)
    for message in messages:
        # Errors are checked against 2026-07-28 whatever the era: the envelope is the same, and
        # only that revision types -32020/-32021/-32022 (which a modern-only server sends to
        # 2025-era clients too).
        revision = "2025-11-25" if legacy and "error" not in message else "2026-07-28"
        check_message(message, method if "id" in message else None, revision)
    final = messages[-1]
    if final.get("method") == "notifications/subscriptions/acknowledged":
        assert method == "subscriptions/listen", final
        return
    for notification in messages[:-1]:
        assert notification.get("method") in ("notifications/progress", "notifications/message"), notification
    request_id = request.get("id") if isinstance(request, dict) else None
    if _usable_id(request_id) and "id" in final:
        assert final["id"] == request_id and type(final["id"]) is type(request_id), (final, request_id)
    if "result" in final:
        assert answer.status == 200, (answer.status, final)
        assert _usable_id(request_id), f"a result for a request without a usable id: {final}"
        return
    code = final["error"]["code"]
    allowed = set(STATUSES_FOR_CODE.get(code, ()))
    if code in LEGACY_OK_CODES and legacy:
        allowed.add(200)
    if answer.content_type.startswith("text/event-stream"):
        allowed = {200} if code in IN_STREAM_CODES or (legacy and code in LEGACY_OK_CODES) else set()
    assert answer.status in allowed, f"error {code} came with HTTP {answer.status}: {final}"


def _readable(sent: bytes) -> Any:
    """What the client meant to send, as a lenient parser sees it (None when it is not JSON)."""
    try:
        return json.loads(sent.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


def _usable_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _legacy(request: Any, headers: list[tuple[bytes, bytes]]) -> bool:
    """Is this a 2025-era request, by the dual-era rule (basic/versioning.mdx): no modern `_meta`
    version, and either `initialize` or a 2025-era `MCP-Protocol-Version` header?"""
    if not isinstance(request, dict):
        return False
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta:
        return False
    # Repeated headers reach the server joined, as HTTP allows.
    version = ", ".join(v.decode("latin-1") for n, v in headers if n.lower() == b"mcp-protocol-version")
    return request.get("method") == "initialize" or version in LEGACY_VERSIONS
