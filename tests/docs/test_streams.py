"""SSE streams shown one event per block (tests/docs/streams.py, frames_hook.py): where a stream
starts and how it splits, and that this is presentation only: a stream is still compared event by
event, and the built page still holds every byte of it, hidden, for Copy and the console."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sybil import Document

from tests.docs import frames_hook, pages, streams
from tests.docs.folds import REQUEST_HEADERS
from tests.docs.test_docs_harness import compare_not_refresh, outcomes  # noqa: F401 - the fixture
from tests.docs.test_folds import server_info

ROOT = Path(__file__).resolve().parents[2]
STATIONS = ("lisbon", "nairobi", "oslo", "osaka", "zurich")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/logLevel": "info",
}
REQUEST = "\n".join(
    [
        "POST /mcp HTTP/1.1",
        *REQUEST_HEADERS,
        "Mcp-Method: tools/call",
        "Mcp-Name: survey_stations",
        "",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "tools/call",
                "params": {"name": "survey_stations", "arguments": {}, "_meta": META},
            },
            indent=2,
        ),
    ]
)


def event(data: object) -> str:
    return "event: message\ndata: " + json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n"


def response() -> str:
    logs = [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": {"station": city, "status": "ok"}, "logger": "survey"},
        }
        for city in STATIONS
    ]
    result = {
        "jsonrpc": "2.0",
        "id": 6,
        "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "All 5 stations answered."}],
            "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
        },
    }
    head = "HTTP/1.1 200 OK\nContent-Type: text/event-stream\nX-Accel-Buffering: no\n\n"
    return head + "\n".join(event(data) for data in [*logs, result]).rstrip("\n")


def page(request: str, answer: str) -> str:
    return f"# A page\n\n```http\n{request}\n```\n\n```http\n{answer}\n```\n"


def test_a_stream_splits_into_its_events() -> None:
    text = response()
    assert streams.stream_start(text) == 4
    found = streams.events(text)
    assert [e.fields for e in found] == [[("event", "message")]] * 6
    assert [json.loads(e.data[0])["params"]["data"]["station"] for e in found[:5]] == list(STATIONS)
    lines = text.split("\n")
    assert [(lines[e.first], lines[e.last][:7]) for e in found] == [("event: message", "data: {")] * 6
    pretty = found[-1].json
    assert pretty is not None and json.loads(pretty) == json.loads(found[-1].data[0])
    assert '\n      {"type": "text", "text": "All 5 stations answered."}\n' in pretty, "small objects stay on one line"


def test_what_is_not_a_stream_is_left_alone() -> None:
    assert streams.stream_start(REQUEST) is None
    assert streams.stream_start("HTTP/1.1 200 OK\nContent-Type: application/json\n\n{}") is None
    assert streams.stream_start("event: message\ndata: {}\nnot a field") is None
    continued = "event: message\ndata: {}\n: (stream still open)"
    assert streams.stream_start(continued) == 0
    (alone,) = streams.events(continued)
    assert alone.comments == [": (stream still open)"] and alone.json == "{}"


def test_a_changed_event_still_fails(tmp_path: Path) -> None:
    """A stream is shown event by event, pretty-printed; what the harness compares is the wire."""
    answer = response()
    assert outcomes(tmp_path, page(REQUEST, answer)) == [None]
    found = streams.events(answer)
    lines = answer.split("\n")
    for index, old, new in ((1, '"nairobi"', '"nakuru"'), (5, server_info()["version"], "9.9.9")):
        data = found[index].last
        changed = "\n".join(line.replace(old, new) if n == data else line for n, line in enumerate(lines))
        assert changed != answer and len(streams.events(changed)) == 6, "still a stream of six events"
        (report,) = outcomes(tmp_path, page(REQUEST, changed))
        assert report is not None, (old, new)


def test_the_built_pages_hold_each_stream_whole_and_show_each_event(built_site: Path) -> None:
    """Every stream on the site: its wire lines are the block's code, whole (one of its page's
    fenced blocks), hidden; each of its events is shown after it, once."""
    checked = 0
    for html_file in sorted(built_site.rglob("index.html")):
        relative = html_file.parent.relative_to(built_site)
        source = ROOT / "docs" / (f"{relative}.md" if str(relative) != "." else "index.md")
        if not source.is_file():
            continue
        fenced = {
            b.source.rstrip("\n") for b in pages.blocks(Document(source.read_text(encoding="utf-8"), str(source)))
        }
        built = html_file.read_text(encoding="utf-8")
        for match in re.finditer('<div class="mcpref-sse">', built):
            at = match.start()
            code = built[built.rindex("<pre><span></span><code>", 0, at) + len("<pre><span></span><code>") : at]
            code = code[: code.rindex("</code></pre>")]
            ends = [built.find(mark, at + 1) for mark in ('<div class="mcpref-sse">', "<pre><span></span><code>")]
            shown = built[at : min([end for end in ends if end > 0] or [len(built)])]
            wire = frames_hook.plain(code)
            assert 'class="mcpref-sse__wire' in code and wire.rstrip("\n") in fenced, (source, wire[:200])
            assert shown.count('class="mcpref-sse__event"') == len(streams.events(wire)) > 0, (source, wire[:200])
            checked += 1
    assert checked >= 10, "the site's streams"
