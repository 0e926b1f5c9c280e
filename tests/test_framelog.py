"""The frame log reports each message as it passes and changes nothing the client receives."""

import asyncio

import httpx

from mcpref import StreamableHTTP
from mcpref.examples.guide_server import step7_cache_and_pages
from mcpref.framelog import Frame, FrameLog

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28"}
TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def meta(**more):
    version = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    return {**version, "io.modelcontextprotocol/clientCapabilities": {}, **more}


def post(app, body, **headers):
    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
            return await http.post("/mcp", json=body, headers={**HEADERS, **headers})

    return asyncio.run(go())


def logged(body, *, max_body_bytes=1 << 20, **headers):
    frames: list[Frame] = []
    endpoint = StreamableHTTP(step7_cache_and_pages.build())
    answer = post(FrameLog(endpoint, frames.append, max_body_bytes=max_body_bytes), body, **headers)
    return frames, answer, post(endpoint, body, **headers)


def test_a_json_answer_is_one_frame_each_way_with_the_trace_id():
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta(traceparent=TRACE)}}
    frames, answer, plain = logged(body, **{"Mcp-Method": "tools/list"})
    assert [(f.direction, f.kind, f.method, f.id, f.status, f.detail) for f in frames] == [
        ("in", "request", "tools/list", 7, None, None),
        ("out", "result", "tools/list", 7, 200, "complete"),
    ]
    assert {f.trace_id for f in frames} == {"4bf92f3577b34da6a3ce929d0e0e4736"}
    assert answer.content == plain.content


def test_a_stream_is_one_frame_per_event():
    params = {"name": "check_conditions", "arguments": {"region": "south"}, "_meta": meta(progressToken="p")}
    body = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": params}
    frames, answer, _ = logged(body, **{"Mcp-Method": "tools/call", "Mcp-Name": "check_conditions"})
    assert [(f.direction, f.kind, f.method) for f in frames] == [
        ("in", "request", "tools/call"),
        ("out", "notification", "notifications/progress"),
        ("out", "notification", "notifications/progress"),
        ("out", "result", "tools/call"),
    ]
    assert answer.headers["content-type"].startswith("text/event-stream")


def test_an_error_names_its_code_and_a_large_body_is_not_buffered():
    body = {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": meta()}}
    frames, answer, _ = logged(body, **{"Mcp-Method": "tools/call"})
    assert (frames[-1].kind, frames[-1].detail, frames[-1].status) == ("error", "-32020", 400)
    frames, _, _ = logged(body, max_body_bytes=10, **{"Mcp-Method": "tools/list"})
    assert [f.kind for f in frames] == ["oversized", "oversized"]


def test_the_line_says_it_all():
    frame = Frame("out", "result", "tools/call", 7, 200, 1.25, "abc", "complete")
    assert frame.line() == "<- 7 tools/call result complete 200 +1.2ms trace=abc"
