"""The harness itself: a correct page passes, and any change to a documented answer fails.

Each test writes a small page to a temporary folder, runs it through the same sybil parser the
site's pages go through, and looks at the outcome. The mutations are the ones a stale page
would carry: a status, a header, a field's value, a field too many or too few, an SSE event.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from sybil.example import Example, SybilFailure

from tests.docs import compare, pages, update, variance
from tests.docs.messages import Response, parse_sse

REQUEST = """```http
POST /mcp HTTP/1.1
Content-Type: application/json
Accept: application/json, text/event-stream
MCP-Protocol-Version: 2026-07-28
Mcp-Method: tools/call
Mcp-Name: convert_temperature

{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
  "name": "convert_temperature", "arguments": {"value": 0, "from": "C", "to": "K"},
  "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}}
```
"""


def server_info() -> str:
    """The `_meta` every answer of the reference server carries, read from the server itself, so a
    deliberate change of its version or title needs no edit here."""
    from mcpref.examples.reference_server import build_server

    return '"_meta": ' + json.dumps({"io.modelcontextprotocol/serverInfo": build_server().info}, ensure_ascii=False)


SERVER_INFO = server_info()
VERSION = json.loads("{" + SERVER_INFO + "}")["_meta"]["io.modelcontextprotocol/serverInfo"]["version"]

RESPONSE = (
    """```http
HTTP/1.1 200 OK
Content-Type: application/json
Content-Length: 250

{"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete",
  "content": [{"type": "text", "text": "0 °C = 273.1 K"}],
  """
    + SERVER_INFO
    + """}}
```
"""
)

PAGE = "# A page\n\n" + REQUEST + "\n" + RESPONSE
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def compare_not_refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests check what a failing frame reports, even under ./scripts/docs --update-frames,
    and what they schedule for rewriting stays theirs: the run's own pending rewrites are untouched."""
    monkeypatch.setitem(pages.settings, "update", False)
    monkeypatch.setattr(update, "PENDING", defaultdict(list))


def evaluated(examples: list[Example]) -> list[str | None]:
    """Evaluate the examples in order; None for a pass, the failure report otherwise."""
    results: list[str | None] = []
    for example in examples:
        try:
            example.evaluate()
        except SybilFailure as failure:
            results.append(str(failure))
        else:
            if example.region.evaluator is not pages.check_rendered:  # the page-wide check: silent on a pass
                results.append(None)
    return results


def outcomes(tmp_path: Path, text: str, name: str = "page.md", **namespace: object) -> list[str | None]:
    """Evaluate every example on the page; None for a pass, the failure report otherwise."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return evaluated(pages.examples_of(path, dict(namespace)))


def only_failure(tmp_path: Path, text: str) -> str:
    results = outcomes(tmp_path, text)
    assert len(results) == 1 and results[0] is not None, results
    return results[0]


def test_a_correct_page_passes(tmp_path: Path) -> None:
    assert outcomes(tmp_path, PAGE) == [None]


@pytest.mark.parametrize(
    ("old", "new", "expected_in_report"),
    [
        ("HTTP/1.1 200 OK", "HTTP/1.1 201 Created", "status: the page says 201, the server sent 200"),
        ("HTTP/1.1 200 OK", "HTTP/1.1 200 Fine", "the reason for 200 is 'OK'"),
        (
            "Content-Type: application/json\nContent-Length",
            "Content-Type: text/plain\nContent-Length",
            "header Content-Type",
        ),
        ("Content-Length: 250", "Content-Length: 251", "header Content-Length"),
        (
            "Content-Length: 250",
            "Content-Length: 250\nX-Extra: 1",
            "header X-Extra: on the page, but the server did not send it",
        ),
        ('"id": 1, "result"', '"id": 2, "result"', "$.id: the page says 2, the server sent 1"),
        ('"id": 1, "result"', '"id": "1", "result"', '$.id: the page says "1", the server sent 1'),
        ("273.1 K", "273.2 K", "$.result.content[0].text"),
        ('"resultType": "complete",', '"resultType": "complete", "isError": false,', "$.result.isError: missing"),
        ('"resultType": "complete",', "", "$.result.resultType: not on the page"),
        (f'"version": "{VERSION}"', '"version": 1.4', "$.result._meta"),
    ],
)
def test_any_change_to_a_documented_answer_fails(tmp_path: Path, old: str, new: str, expected_in_report: str) -> None:
    response = RESPONSE.replace(old, new, 1)
    assert response != RESPONSE
    report = only_failure(tmp_path, "# A page\n\n" + REQUEST + "\n" + response)
    assert expected_in_report in report
    assert "page.md, line 17" in report  # the page and the line of the response block


def test_sse_events_are_compared_one_by_one(tmp_path: Path) -> None:
    request = (
        REQUEST.replace("convert_temperature", "survey_stations")
        .replace('"arguments": {"value": 0, "from": "C", "to": "K"}', '"arguments": {}')
        .replace('clientCapabilities": {}}}}', 'clientCapabilities": {}, "progressToken": 7}}}')
    )
    events = [
        'data: {"jsonrpc":"2.0","method":"notifications/progress","params":'
        f'{{"progressToken":7,"progress":{n},"total":5,"message":"polled {s}"}}}}'
        for n, s in enumerate(["lisbon", "nairobi", "oslo", "osaka", "zurich"], start=1)
    ]
    final = (
        'data: {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text",'
        '"text":"All 5 stations answered."}],'
        + json.dumps(json.loads("{" + SERVER_INFO + "}"), separators=(",", ":"))[1:-1]
        + "}}"
    )
    body = "\n\n".join(f"event: message\n{line}" for line in [*events, final])
    good = f"{request}\n```http\nHTTP/1.1 200 OK\nContent-Type: text/event-stream\n\n{body}\n```\n"
    assert outcomes(tmp_path, good) == [None]
    assert "SSE event 3 $.params.message" in only_failure(tmp_path, good.replace("polled oslo", "polled bergen"))
    assert "the page shows 5 events, the server sent 6" in only_failure(
        tmp_path, good.replace(f"event: message\n{events[0]}\n\n", "")
    )
    assert "the page says event 'update'" in only_failure(tmp_path, good.replace("event: message", "event: update", 1))


def test_placeholders_check_type_and_shape(tmp_path: Path) -> None:
    request = (
        REQUEST.replace("convert_temperature", "get_forecast")
        .replace('"arguments": {"value": 0, "from": "C", "to": "K"}', '"arguments": {"city": "Oslo", "days": 1}')
        .replace("Mcp-Name: get_forecast\n", "Mcp-Name: get_forecast\nMcp-Param-City: Oslo\n")
    )
    path = tmp_path / "probe.md"
    path.write_text(request + "\n```http\nHTTP/1.1 200 OK\n\n```\n", encoding="utf-8")
    example, _page = pages.examples_of(path)
    status, headers, body = pages.send(pages.app_for("/mcp", {}), example.parsed.request)
    page_answer = update.render_response(pages.parse("HTTP/1.1 200 OK\nContent-Type: x\n"), status, headers, body)
    import re

    stamp = re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", page_answer)
    assert stamp is not None
    with_placeholder = page_answer.replace(stamp.group(0), "<<iso-datetime>>")
    assert outcomes(tmp_path, request + "\n```http\n" + with_placeholder + "```\n") == [None]
    for wrong, why in [("<<int>>", "<<int>> needs a JSON integer"), ("<<when>>", "unknown placeholder <<when>>")]:
        text = request + "\n```http\n" + with_placeholder.replace("<<iso-datetime>>", wrong) + "```\n"
        assert why in only_failure(tmp_path, text)
    # The real timestamp written literally is a frame that only passes within the same second.
    assert "issuedAt" in only_failure(
        tmp_path, request + "\n```http\n" + page_answer.replace(stamp.group(0), "2020-01-01T00:00:00Z") + "```\n"
    )


def test_a_request_must_conform_to_the_schema_unless_the_page_says_otherwise(tmp_path: Path) -> None:
    broken = REQUEST.replace('"name": "convert_temperature", ', '"name": 5, ')
    assert "schema: CallToolRequest at /params/name" in only_failure(tmp_path, broken + "\n" + RESPONSE)
    marked = "<!-- expect-schema-violation: shows a bad name -->\n" + REQUEST
    assert "but it conforms" in only_failure(tmp_path, marked + "\n" + RESPONSE)


def test_every_block_is_executed_or_marked(tmp_path: Path) -> None:
    unmarked = '```json\n{"a": 1}\n```\n'
    assert "nothing executes and nothing marks" in only_failure(tmp_path, unmarked)
    assert "nothing executes" in only_failure(tmp_path, "```\nplain\n```\n")
    marked = '```json title="Illustration — a shape from the spec, not sent anywhere"\n{"a": 1}\n```\n'
    assert outcomes(tmp_path, marked) == [None]
    no_reason = '```json title="Illustration"\n{"a": 1}\n```\n'
    assert "says why" in only_failure(tmp_path, no_reason)
    bad_jsonrpc = '```json title="Illustration — an old frame"\n{"jsonrpc": "2.0", "id": null, "method": "x"}\n```\n'
    assert "schema" in only_failure(tmp_path, bad_jsonrpc)
    assert "followed by the response block" in only_failure(tmp_path, REQUEST)
    assert outcomes(tmp_path, "```mermaid\nsequenceDiagram\n  A->>B: hi\n```\n") == [None]
    assert "diagram type" in only_failure(tmp_path, "```mermaid\nhello\n```\n")


def test_python_output_is_compared(tmp_path: Path) -> None:
    page = '```python\nprint("hello", 1 + 1)\n```\n\n```text title="Output"\nhello 2\n```\n'
    assert outcomes(tmp_path, page) == [None]
    assert "printed output differs" in only_failure(tmp_path, page.replace("hello 2", "hello 3"))


def test_update_frames_rewrites_a_stale_answer(tmp_path: Path) -> None:
    stale = (
        "# A page\n\n"
        + REQUEST
        + "\n"
        + RESPONSE.replace("273.1 K", "0 K").replace("Content-Length: 250", "Content-Length: 1")
    )
    pages.settings["update"] = True
    try:
        assert outcomes(tmp_path, stale) == [None]
        update.apply_pending()
    finally:
        pages.settings["update"] = False
    refreshed = (tmp_path / "page.md").read_text(encoding="utf-8")
    assert "273.1 K" in refreshed and "Content-Length: 250" in refreshed
    assert outcomes(tmp_path, refreshed) == [None]


def _call(tool: str, arguments: str, request_id: int, extra: str = "", capabilities: str = "{}") -> str:
    return (
        f"```http\nPOST /mcp HTTP/1.1\nContent-Type: application/json\nAccept: application/json, text/event-stream\n"
        f"MCP-Protocol-Version: 2026-07-28\nMcp-Method: tools/call\nMcp-Name: {tool}\n\n"
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", "params": {{"name": "{tool}", '
        f'"arguments": {arguments},{extra} "_meta": {{"io.modelcontextprotocol/protocolVersion": "2026-07-28", '
        f'"io.modelcontextprotocol/clientCapabilities": {capabilities}}}}}}}\n```\n'
    )


FORM = '{"elicitation": {"form": {}}}'
REPORT = '{"station": "oslo", "note": "n"}'


def _answer(tmp_path: Path, request: str) -> str:
    """The server's answer to a one-request page, as the update mode would write it."""
    path = tmp_path / "probe.md"
    path.write_text(request + "\n```http\nHTTP/1.1 200 OK\nContent-Type: x\n\n```\n", encoding="utf-8")
    example, _page = pages.examples_of(path)
    status, headers, body = pages.send(pages.app_for("/mcp", {}), example.parsed.request)
    page = pages.parse("HTTP/1.1 200 OK\nContent-Type: x\n")
    return "```http\n" + update.render_response(page, status, headers, body) + "```\n"


def test_a_captured_value_carries_a_sealed_state_into_the_retry(tmp_path: Path) -> None:
    import re

    first = _call("file_report", REPORT, 1, capabilities=FORM)
    asked = re.sub(r'"requestState": "[^"]+"', '"requestState": "<<sealed-state:state>>"', _answer(tmp_path, first))
    retry = _call(
        "file_report",
        REPORT,
        2,
        extra=' "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}, '
        '"requestState": "{{state}}",',
        capabilities=FORM,
    )
    done = (
        '```http\nHTTP/1.1 200 OK\nContent-Type: application/json\n\n{"jsonrpc": "2.0", "id": 2, "result": '
        '{"resultType": "complete", "content": [{"type": "text", "text": "Report for oslo queued: n"}], '
        + SERVER_INFO
        + "}}\n```\n"
    )
    # Each request goes to its own fresh app; the shared state key lets the second open the state.
    assert outcomes(tmp_path, first + asked + retry + done) == [None, None]
    # Without the capture the retry cannot be sent at all, and says why.
    uncaptured = asked.replace("<<sealed-state:state>>", "<<sealed-state>>")
    assert outcomes(tmp_path, first + uncaptured + retry + done)[1] is not None
    assert "used before any response captured it" in str(outcomes(tmp_path, first + uncaptured + retry + done)[1])


def test_an_open_stream_must_be_shown_as_open(tmp_path: Path) -> None:
    listen = (
        "```http\nPOST /mcp HTTP/1.1\nContent-Type: application/json\nAccept: application/json, text/event-stream\n"
        "MCP-Protocol-Version: 2026-07-28\nMcp-Method: subscriptions/listen\n\n"
        '{"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": {"notifications": '
        '{"toolsListChanged": true}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", '
        '"io.modelcontextprotocol/clientCapabilities": {}}}}\n```\n'
    )
    ack = (
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":'
        '{"_meta":{"io.modelcontextprotocol/subscriptionId":9},"notifications":{"toolsListChanged":true}}}'
    )
    shown = f"```http\nHTTP/1.1 200 OK\nContent-Type: text/event-stream\n\n{ack}\n: (stream still open)\n```\n"
    assert outcomes(tmp_path, listen + shown) == [None]
    assert "kept the stream open" in only_failure(tmp_path, listen + shown.replace(": (stream still open)\n", ""))
    assert "subscriptionId" in only_failure(tmp_path, listen + shown.replace('Id":9', 'Id":10'))


def test_requests_go_to_a_fresh_app_unless_the_page_asks_to_share(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(PAGE)
    example, _page = pages.examples_of(tmp_path / "a.md")
    assert pages.app_for("/mcp", example.namespace) is not pages.app_for("/mcp", example.namespace)
    shared_page = "<!-- frames: shared-server — one flow needs one instance -->\n\n" + PAGE
    (tmp_path / "b.md").write_text(shared_page)
    example, _page = pages.examples_of(tmp_path / "b.md")
    assert pages.app_for("/mcp", example.namespace) is pages.app_for("/mcp", example.namespace)
    # A directive shown inside a code block does not act.
    quoted = '```markdown title="Illustration — the directive, as source"\n' + shared_page.split("\n")[0] + "\n```\n"
    (tmp_path / "c.md").write_text(quoted + PAGE)
    examples = pages.examples_of(tmp_path / "c.md")
    assert examples[1].namespace["_frames_shared"] is False


LISTEN = (
    "```http\nPOST /mcp HTTP/1.1\nContent-Type: application/json\nAccept: application/json, text/event-stream\n"
    "MCP-Protocol-Version: 2026-07-28\nMcp-Method: subscriptions/listen\n\n"
    '{"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": {"notifications": '
    '{"toolsListChanged": true}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", '
    '"io.modelcontextprotocol/clientCapabilities": {}}}}\n```\n'
)
ACK = (
    'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":'
    '{"_meta":{"io.modelcontextprotocol/subscriptionId":9},"notifications":{"toolsListChanged":true}}}'
)
CHANGED = (
    'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":'
    '{"_meta":{"io.modelcontextprotocol/subscriptionId":9}}}'
)
KEPT = (
    f"```http\nHTTP/1.1 200 OK\nContent-Type: text/event-stream\n\n{ACK}\n: (stream still open, continued below)\n```\n"
)
CHANGE = '```python\nshared_server("/mcp").notify_list_changed("tools")\n```\n'


def page_outcomes(tmp_path: Path, text: str) -> tuple[list[str | None], str | None]:
    """Like `outcomes`, plus what the page's teardown reported (None when it had nothing to say)."""
    from tests.docs import shared

    path = tmp_path / "page.md"
    path.write_text(text, encoding="utf-8")
    examples = pages.examples_of(path)
    results = evaluated(examples)
    try:
        shared.teardown(examples[0].namespace)
    except AssertionError as problem:
        return results, str(problem)
    return results, None


def test_a_stream_continued_below_shows_what_arrives_after_a_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.docs import exchange

    monkeypatch.setattr(exchange, "TIMEOUT_SECONDS", 0.5)  # how long to wait for an event that never comes
    continued = f"```sse\n{CHANGED}\n: (stream still open)\n```\n"
    page = "<!-- shared-server: the change must reach this stream -->\n" + LISTEN + KEPT + CHANGE + continued
    assert page_outcomes(tmp_path, page) == ([None, None, None], None)
    # Without the change nothing arrives, and the continued block says what it missed.
    results, _ = page_outcomes(tmp_path, page.replace(CHANGE, ""))
    assert results[1] is not None and "the page shows 1 events, the server sent 0" in results[1]
    # A stream can be continued more than once, and ended by the server (here: a shutdown).
    twice = (
        f"```sse\n{CHANGED}\n: (stream still open, continued below)\n```\n"
        '```python\nshared_server("/mcp").subscriptions.end_all()\n```\n'
        '```sse\nevent: message\ndata: {"jsonrpc":"2.0","id":9,"result":{"resultType":"complete","_meta":'
        '{"io.modelcontextprotocol/subscriptionId":9,'
        + json.dumps(json.loads("{" + SERVER_INFO + "}")["_meta"], separators=(",", ":"))[1:]
        + "}}\n```\n"
    )
    page_twice = page.replace(continued, twice)
    assert page_outcomes(tmp_path, page_twice) == ([None, None, None, None, None], None)
    # A continuation may show that nothing more arrived before the client left.
    quiet = f"```sse\n{CHANGED}\n: (stream still open, continued below)\n```\n```sse\n: (stream still open)\n```\n"
    assert page_outcomes(tmp_path, page.replace(continued, quiet)) == ([None, None, None, None], None)
    # Saying the stream is still open after the server ended it fails.
    assert page_twice.endswith("}}}}\n```\n")
    still_open = page_twice.removesuffix("```\n") + ": (stream still open)\n```\n"
    assert "but the stream ended" in str(page_outcomes(tmp_path, still_open)[0][4])


def test_a_stream_continued_below_needs_a_shared_server_and_a_continuation(tmp_path: Path) -> None:
    results, _ = page_outcomes(tmp_path, LISTEN + KEPT)
    assert results[0] is not None and "must come from a shared server" in results[0]
    results, left = page_outcomes(tmp_path, "<!-- shared-server: kept for later -->\n" + LISTEN + KEPT)
    assert results == [None]
    assert left is not None and "no ```sse block continues it" in left
    results, _ = page_outcomes(tmp_path, f"```sse\n{CHANGED}\n```\n")
    assert results[0] is not None and "no earlier block left one open" in results[0]


def test_one_request_can_go_to_the_shared_server_while_the_others_stay_fresh(tmp_path: Path) -> None:
    from tests.docs import shared

    first = "<!-- shared-server: one flow needs one instance -->\n" + REQUEST
    (tmp_path / "d.md").write_text(first + "\n" + RESPONSE + "\n" + REQUEST + "\n" + RESPONSE)
    examples = pages.examples_of(tmp_path / "d.md")
    assert [example.parsed.shared for example in examples[:-1]] == [True, False]
    namespace = examples[0].namespace
    assert pages.app_for("/mcp", namespace, True) is pages.app_for("/mcp", namespace, True)
    assert pages.app_for("/mcp", namespace) is not pages.app_for("/mcp", namespace, True)
    assert namespace["shared_server"]("/mcp") is pages.app_for("/mcp", namespace, True).server
    shared.teardown(namespace)
    # Stacked directives both count, in either order.
    stacked = "<!-- shared-server: one instance -->\n<!-- expect-schema-violation: a bad name -->\n" + REQUEST
    (tmp_path / "e.md").write_text(stacked.replace('"name": "convert_temperature", ', '"name": 5, ') + RESPONSE)
    example, _page = pages.examples_of(tmp_path / "e.md")
    assert example.parsed.shared and example.parsed.expected_violation == "a bad name"


def test_legacy_frames_are_checked_against_the_2025_schema(tmp_path: Path) -> None:
    from tests.docs import schema
    from tests.docs.messages import parse

    initialize = parse(
        "POST /dual/mcp HTTP/1.1\nContent-Type: application/json\n\n"
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", '
        '"capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}}'
    )
    assert schema.revision_of(initialize) == "2025-11-25"
    legacy_list = parse(
        'POST /mcp HTTP/1.1\nMCP-Protocol-Version: 2025-11-25\n\n{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}'
    )
    assert schema.revision_of(legacy_list) == "2025-11-25"
    modern = parse(
        "POST /mcp HTTP/1.1\nMCP-Protocol-Version: 2025-11-25\n\n"
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": '
        '{"io.modelcontextprotocol/protocolVersion": "2025-11-25", "io.modelcontextprotocol/clientCapabilities": {}}}}'
    )
    assert schema.revision_of(modern) == "2026-07-28"
    # A legacy list result has no resultType or cache hints: right for 2025-11-25, wrong for 2026-07-28.
    legacy_result = {"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}
    assert schema.problems(legacy_result, "tools/list", "2025-11-25") == []
    assert schema.problems(legacy_result, "tools/list") != []
    # ...and an InitializeResult without serverInfo is caught by the 2025 schema.
    broken = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {}}}
    assert any("serverInfo" in p for p in schema.problems(broken, "initialize", "2025-11-25"))


def test_update_frames_keeps_an_indented_block_indented(tmp_path: Path) -> None:
    def indented(text: str) -> str:
        return "".join("    " + line if line.strip() else line for line in text.splitlines(keepends=True))

    stale = RESPONSE.replace("273.1 K", "0 K")
    page = '# A page\n\n=== "A tab"\n\n' + indented(REQUEST) + "\n" + indented(stale)
    pages.settings["update"] = True
    try:
        assert outcomes(tmp_path, page) == [None]
        update.apply_pending()
    finally:
        pages.settings["update"] = False
    refreshed = (tmp_path / "page.md").read_text(encoding="utf-8")
    assert "    HTTP/1.1 200 OK\n" in refreshed
    assert '        "content": [{"type": "text", "text": "0 °C = 273.1 K"}]' in refreshed
    assert outcomes(tmp_path, refreshed) == [None]


# -- --update-frames: what it writes passes the next normal run, or it says why not ----------

FORECAST = (
    REQUEST.replace("convert_temperature", "get_forecast")
    .replace('"arguments": {"value": 0, "from": "C", "to": "K"}', '"arguments": {"city": "Oslo", "days": 1}')
    .replace("Mcp-Name: get_forecast\n", "Mcp-Name: get_forecast\nMcp-Param-City: Oslo\n")
)
BARE = "\n```http\nHTTP/1.1 200 OK\n```\n"


def refreshed(tmp_path: Path, text: str) -> str:
    """The page run under --update-frames, its rewrites written: the run must pass, and so must a
    recheck of the rewritten page as it stands. The new text."""
    pages.settings["update"] = True
    try:
        results = outcomes(tmp_path, text)
        update.apply_pending()
    finally:
        pages.settings["update"] = False
    assert results == [None]
    assert pages.recheck([tmp_path / "page.md"]) == []
    return (tmp_path / "page.md").read_text(encoding="utf-8")


def test_update_frames_completes_a_new_frame_with_its_content_type(tmp_path: Path) -> None:
    assert "HTTP/1.1 200 OK\nContent-Type: application/json\n\n{" in refreshed(
        tmp_path, "# A page\n\n" + REQUEST + BARE
    )


def test_update_frames_writes_a_placeholder_for_a_value_that_differs_between_runs(tmp_path: Path) -> None:
    page = refreshed(tmp_path, FORECAST + BARE)
    # issuedAt, both as a field and inside the text block that repeats it as JSON.
    assert '"issuedAt": "<<iso-datetime>>"' in page
    assert '\\"issuedAt\\": \\"<<iso-datetime>>\\"' in page


def test_update_frames_refuses_a_varying_value_that_no_placeholder_fits() -> None:
    refused: list[str] = []
    variance.merge(None, {"a": ["same", "left", 1.5]}, {"a": ["same", "right", 2.5]}, "$", refused)
    assert [r.split(":")[0] for r in refused] == ["$.a[1]", "$.a[2]"]
    assert variance.tokenized('{"at": "2026-01-02T03:04:05Z"}', '{"at": "2026-01-01T03:03:58Z"}') == (
        '{"at": "<<iso-datetime>>"}'
    )
    assert variance.tokenized("ticket 12 of 3", "ticket 13 of 4") == "ticket <<int>> of <<int>>"


def test_a_placeholder_must_stand_for_a_value_that_varies(tmp_path: Path) -> None:
    constant = PAGE.replace('"id": 1, "result"', '"id": "<<int>>", "result"')
    assert "$.id: <<int>> stood for 1 in both runs" in only_failure(tmp_path, constant)
    # Refreshing writes the constant back as it is.
    page = refreshed(tmp_path, constant)
    assert '"id": 1,' in page and "<<int>>" not in page


def test_an_error_code_cannot_hide_behind_a_placeholder(tmp_path: Path) -> None:
    unknown = REQUEST.replace("Mcp-Name: convert_temperature", "Mcp-Name: nope").replace(
        '"name": "convert_temperature"', '"name": "nope"'
    )
    page = refreshed(tmp_path, unknown + BARE)
    assert '"code": -326' in page
    code = re.search(r'"code": (-\d+)', page)
    assert code is not None
    hidden = page.replace(f'"code": {code[1]}', '"code": "<<int>>"')
    assert f"$.error.code: <<int>> stood for {code[1]} in both runs" in only_failure(tmp_path, hidden)


def test_recheck_lists_what_still_fails(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text(PAGE.replace("273.1 K", "0 K"), encoding="utf-8")
    (failure,) = pages.recheck([tmp_path / "page.md"])
    assert "page.md, line 17" in failure and "$.result.content[0].text" in failure


def test_the_self_tests_and_a_refresh_follow_a_new_server_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpref import Server
    from mcpref.examples import reference_server

    def bumped(name: str, version: str, **options: object) -> Server:
        return Server(name, "9.9.9", **options)  # type: ignore[arg-type]

    monkeypatch.setattr(reference_server, "Server", bumped)
    assert '"version": "9.9.9"' in server_info()
    assert outcomes(tmp_path, "# A page\n\n" + REQUEST + "\n" + RESPONSE.replace(SERVER_INFO, server_info())) == [None]
    assert '"version": "9.9.9"' in refreshed(tmp_path, PAGE)


# -- what the harness cannot see is a failure, not a pass ------------------------------------


def test_a_python_block_that_prints_must_show_what_it_printed(tmp_path: Path) -> None:
    page = '# A page\n\n```python\nprint("hello", 1 + 1)\n```\n'
    assert 'no ```text title="Output" block follows' in only_failure(tmp_path, page)
    assert outcomes(tmp_path, "```python\nx = 1 + 1\n```\n") == [None]
    assert '```\n\n```text title="Output"\nhello 2\n```' in refreshed(tmp_path, page)


def test_a_placeholder_that_cannot_be_replayed_is_refused(tmp_path: Path) -> None:
    python = '```python\nprint(7)\n```\n\n```text title="Output"\n<<int>>\n```\n'
    assert "cannot be proved to stand for a value that varies" in only_failure(tmp_path, python)
    console = "```console\n$ curl -s http://127.0.0.1:8000/nothing\n<<int>>\n```\n"
    assert "cannot be proved" in only_failure(tmp_path, console)


@pytest.mark.parametrize(
    "hidden",
    [
        "Some prose.\n\n    POST /mcp HTTP/1.1\n    Content-Type: application/json\n",
        "Some prose.\n\n<pre>POST /mcp HTTP/1.1</pre>\n",
    ],
)
def test_code_that_no_fence_marks_fails(tmp_path: Path, hidden: str) -> None:
    report = only_failure(tmp_path, "# A page\n\n" + hidden)
    assert "page.md, line 5: code readers see that no fence marks" in report
    assert "POST /mcp HTTP/1.1" in report
    # Indented text inside an admonition, a tab or a list is prose, not code.
    fine = '# A page\n\n!!! note\n    Indented prose.\n\n=== "Tab"\n\n    More prose.\n\n- item\n\n    continued\n'
    assert outcomes(tmp_path, fine) == []


def _update_run(folder: Path, sabotage: str = "") -> subprocess.CompletedProcess[str]:
    """`pytest --update-frames` on a folder set up as docs/ is (its conftest copied), in a subprocess."""
    conftest = (ROOT / "docs" / "conftest.py").read_text(encoding="utf-8")
    (folder / "conftest.py").write_text(conftest + sabotage, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(folder),
        "--update-frames",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:hypothesispytest",
    ]
    return subprocess.run(
        [*command, "-c", os.devnull, "--rootdir", str(folder)], env=env, capture_output=True, text=True
    )


#: A block that needs `ServerLimits` (uvicorn alone answers a 20 KB head without closing the
#: connection): the recheck after a refresh must run the server the normal run does.
SERVER_LIMITS_PAGE = """# A page

```python
import httpx

response = httpx.get("http://127.0.0.1:8000/", headers={"X-Padding": "a" * 20_000})
print(response.status_code, response.headers["connection"])
```

```text title="Output"
431 close
```
"""


def test_update_frames_says_what_it_refreshed_and_fails_if_a_rewritten_page_still_fails(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text(SERVER_LIMITS_PAGE + "\n" + REQUEST + BARE, encoding="utf-8")
    run = _update_run(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "page.md: 1 frame(s) refreshed from the reference server" in run.stdout
    assert "every rewritten page passes a normal run" in run.stdout
    # A refresh that writes a block the next run rejects (here: made to drop Content-Type, as it
    # once did) fails the run and shows why, instead of saying it is done.
    (tmp_path / "page.md").write_text("# A page\n\n" + REQUEST + BARE, encoding="utf-8")
    sabotage = (
        "\n_render = update.render_response\n"
        "update.render_response = lambda *a, **k: _render(*a, **k).replace('Content-Type: application/json\\n', '')\n"
    )
    run = _update_run(tmp_path, sabotage)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 block(s) still fail after the refresh" in run.stdout
    assert "must show its Content-Type" in run.stdout


def test_every_frame_on_the_site_is_in_the_layout_a_refresh_writes() -> None:
    """A refresh of a clean tree changes nothing: each response block (and each ```sse block) is
    already what `--update-frames` would write for that same answer, so its diff shows only what
    the server changed. Key order is the page's to choose (`update.in_page_order`); the layout,
    one-line containers up to the width and `data:` lines in the wire's compact form, is not."""
    failures = []
    for path in sorted((ROOT / "docs").rglob("*.md")):
        document = pages.make_sybil(path=str(path.parent), patterns=(path.name,)).parse(path)
        for block in pages.blocks(document):
            if (block.title or "").startswith("Illustration") or block.language not in ("http", "sse"):
                continue
            marker = compare.marker_in(block.source)
            if block.language == "sse":
                shown = parse_sse(block.source)
                written = update.render_events(shown, block.source, marker is not None, marker)
            elif block.source.startswith("HTTP/"):
                page = pages.parse(block.source)
                assert isinstance(page, Response)
                written = update.render_response(page, page.status, page.headers, page.body, marker is not None)
            else:
                continue
            if written.rstrip("\n") != block.source.rstrip("\n"):
                diff = difflib.unified_diff(block.source.splitlines(), written.splitlines(), "page", "refresh", n=1)
                shown = "\n".join(line.rstrip("\n") for line in diff)
                failures.append(f"{block.where}: not in the layout a refresh writes\n{shown}")
    assert not failures, "\n\n".join(failures) + "\n\nBring them to it: ./scripts/docs --update-frames"


def test_a_refresh_keeps_the_key_order_the_page_chose() -> None:
    page = pages.parse('HTTP/1.1 200 OK\nContent-Type: application/json\n\n{"b": 1, "a": {"y": 2, "x": 3}}\n')
    assert isinstance(page, Response)
    headers = [("content-type", "application/json")]
    server = '{"a": {"x": 3, "y": 2, "z": 4}, "b": 1, "c": 5}'
    for second in (None, (headers, server)):
        written = update.render_response(page, 200, headers, server, second=second)
        assert written.endswith('\n{"b": 1, "a": {"y": 2, "x": 3, "z": 4}, "c": 5}\n'), written


def test_a_recheck_names_the_page_the_line_and_the_exception(tmp_path: Path) -> None:
    page = '# A page\n\n```python\nheaders = {}\n\nprint(headers["connection"])\n```\n'
    page += '\n```text title="Output"\nclose\n```\n'
    (tmp_path / "page.md").write_text(page, encoding="utf-8")
    (failure,) = pages.recheck([tmp_path / "page.md"])
    assert failure == f"{tmp_path / 'page.md'}, line 3 (raised at line 6): KeyError: 'connection'"


def test_a_shown_file_is_compared_with_the_file_and_is_no_illustration(tmp_path: Path) -> None:
    """Was: real, byte-compared files were titled "Illustration —", the word for blocks nothing runs."""
    path = "mcpref/examples/minimal_server/__init__.py"
    text = (ROOT / path).read_text(encoding="utf-8")
    page = f'```python title="File — {path}, the whole server"\n{text}```\n'
    assert outcomes(tmp_path, "# P\n\n" + page) == [None]
    (report,) = outcomes(tmp_path, "# P\n\n" + page.replace("Return the message", "Send the message"))
    assert report is not None and f"the block is not {path}" in report
    (missing,) = outcomes(tmp_path, "# P\n\n" + page.replace("minimal_server/__init__.py", "nowhere.py"))
    assert missing is not None and "does not exist" in missing
    shown = [line for page in (ROOT / "docs").rglob("*.md") for line in page.read_text().splitlines()]
    assert not [line for line in shown if 'title="Illustration — mcpref/examples/' in line]
