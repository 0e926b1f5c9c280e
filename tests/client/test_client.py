"""The client's methods against our real server: discover, every list (all pages), calls with
mirrored headers, prompts, resources, completion, progress and log notifications over SSE."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import mcpref.client
from mcpref import Server, StreamableHTTP, ToolError
from mcpref.client import (
    Client,
    EraCache,
    HeaderMismatch,
    InvalidParams,
    ProtocolError,
    StdioTransport,
    TaskCancelled,
    TransportError,
)
from mcpref.client._cache import CACHE_PARAMS
from mcpref.examples.everything_server import build_server
from mcpref.examples.minimal_server import app as minimal_app
from mcpref.tasks import TASKS_EXTENSION, SQLiteTaskStore, TasksExtension
from tests.client.conftest import connect, endpoint

pytestmark = pytest.mark.anyio

server = Server("client-test-server", "2.0.0", instructions="Be nice.", page_size=2)


@server.tool(input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
def echo(message: str) -> str:
    return message


@server.tool(
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            "target": {
                "type": "object",
                "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
            },
        },
        "required": ["region"],
    }
)
def deploy(region: str, priority: int = 0, dry_run: bool = False, target: dict | None = None) -> str:
    return json.dumps([region, priority, dry_run, (target or {}).get("zone")], ensure_ascii=False)


@server.tool()
def broken() -> str:
    raise ToolError("the disk is full")


@server.tool()
async def slow(ctx) -> str:  # type: ignore[no-untyped-def]
    await ctx.report_progress(1, 2, "halfway")
    await ctx.log("info", "still going")
    await ctx.log("debug", "too chatty for info")
    await ctx.report_progress(2, 2)
    return "done"


@server.tool(input_schema={"type": "object", "properties": {"city": {"type": "string", "x-mcp-header": "City"}}})
def weather(city: str = "") -> str:
    return f"sunny in {city}"


cancelled = threading.Event()


@server.tool()
async def forever(ctx) -> str:  # type: ignore[no-untyped-def]
    await ctx.report_progress(0)
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        cancelled.set()
        raise
    return "never"


@server.resource("memo://greeting", mime_type="text/plain")
def greeting() -> str:
    return "hello"


@server.resource("memo://logo", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG"


@server.resource_template("users://{user}/profile", complete={"user": lambda value: ["alice", "bob", "bert"]})
def profile(user: str) -> str:
    return f"profile of {user}"


@server.prompt(arguments={"topic": "What to write about"}, complete={"topic": lambda value: ["tea", "tennis"]})
def essay(topic: str) -> str:
    """Write an essay."""
    return f"Write an essay about {topic}."


@server.prompt()
def mystery() -> dict:
    """A prompt whose result claims a resultType no extension defines."""
    return {"resultType": "mystery", "messages": []}


app = StreamableHTTP(server)
streaming_app = StreamableHTTP(server, stream_responses=True)


async def test_minimal_server_end_to_end():
    with endpoint(minimal_app) as url:
        async with connect(url) as (client, traffic):
            tools = await client.list_tools()
            assert [tool["name"] for tool in tools] == ["echo"]
            result = await client.call_tool("echo", {"message": "hi"})
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert not result.get("isError")
    assert traffic.methods == ["server/discover", "tools/list", "tools/call"]


async def test_every_request_carries_meta_and_mirrored_headers(url):
    async with connect(url, client_info={"name": "probe", "version": "9"}) as (client, traffic):
        await client.call_tool("echo", {"message": "hi"})
    for request, body in zip(traffic.requests, traffic.bodies, strict=True):
        meta = body["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
        assert meta["io.modelcontextprotocol/clientInfo"] == {"name": "probe", "version": "9"}
        assert request.headers["mcp-protocol-version"] == "2026-07-28"
        assert request.headers["mcp-method"] == body["method"]
        assert request.headers["accept"] == "application/json, text/event-stream"
        assert request.headers["content-type"] == "application/json"
    call = traffic.requests[-1]
    assert call.headers["mcp-name"] == "echo"
    assert len({body["id"] for body in traffic.bodies}) == len(traffic.bodies)


async def test_discover_reports_the_server(url):
    async with connect(url) as (client, traffic):
        result = await client.discover()
        assert traffic.methods == ["server/discover"]  # the probe's answer serves the first call
        await client.discover()
        assert traffic.methods == ["server/discover"] * 2
        assert result["supportedVersions"] == ["2026-07-28"]
        assert client.server_info == {"name": "client-test-server", "version": "2.0.0"}
        assert client.instructions == "Be nice."
        assert set(client.server_capabilities) >= {"tools", "resources", "prompts", "completions"}


async def test_list_tools_follows_every_page(url):
    async with connect(url) as (client, traffic):
        tools = await client.list_tools()
    assert [tool["name"] for tool in tools] == ["echo", "deploy", "broken", "slow", "weather", "forever"]
    pages = [body for body in traffic.bodies if body["method"] == "tools/list"]
    assert len(pages) == 3
    assert "cursor" not in pages[0]["params"]
    assert all(isinstance(page["params"]["cursor"], str) for page in pages[1:])


async def test_all_lists_and_reads(url):
    async with connect(url) as (client, _):
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()
        text = await client.read_resource("memo://greeting")
        blob = await client.read_resource("memo://logo")
        templated = await client.read_resource("users://alice/profile")
    assert [r["uri"] for r in resources] == ["memo://greeting", "memo://logo"]
    assert [t["uriTemplate"] for t in templates] == ["users://{user}/profile"]
    assert [p["name"] for p in prompts] == ["essay", "mystery"]
    assert text["contents"] == [{"uri": "memo://greeting", "mimeType": "text/plain", "text": "hello"}]
    assert base64.b64decode(blob["contents"][0]["blob"]) == b"\x89PNG"
    assert templated["contents"][0]["text"] == "profile of alice"


async def test_get_prompt_and_complete(url):
    async with connect(url) as (client, _):
        prompt = await client.get_prompt("essay", {"topic": "tea"})
        by_prompt = await client.complete({"type": "ref/prompt", "name": "essay"}, {"name": "topic", "value": "t"})
        by_template = await client.complete(
            {"type": "ref/resource", "uri": "users://{user}/profile"}, {"name": "user", "value": "b"}, context={}
        )
    assert prompt["messages"][0]["content"]["text"] == "Write an essay about tea."
    assert by_prompt["completion"]["values"] == ["tea", "tennis"]
    assert by_template["completion"]["values"] == ["alice", "bob", "bert"]


async def test_tool_failure_stays_a_result(url):
    async with connect(url) as (client, _):
        result = await client.call_tool("broken")
    assert result["isError"] is True
    assert result["content"][0]["text"] == "the disk is full"


@pytest.mark.parametrize(
    ("arguments", "expected_headers"),
    [
        ({"region": "eu-west-1"}, {"mcp-param-region": "eu-west-1"}),
        (
            {"region": "Zürich", "priority": 3, "dry_run": True},
            {"mcp-param-region": "=?base64?WsO8cmljaA==?=", "mcp-param-priority": "3", "mcp-param-dry-run": "true"},
        ),
        ({"region": " padded "}, {"mcp-param-region": "=?base64?IHBhZGRlZCA=?="}),
        # A literal that looks like the sentinel must itself be wrapped, or the server would decode it.
        ({"region": "=?base64?abc?="}, {"mcp-param-region": "=?base64?PT9iYXNlNjQ/YWJjPz0=?="}),
        ({"region": "r", "target": {"zone": "北京"}}, {"mcp-param-zone": "=?base64?5YyX5Lqs?="}),
        # JSON has one number type: an integer held as 42.0 is mirrored as 42, and the server agrees.
        ({"region": "r", "priority": 42.0}, {"mcp-param-priority": "42"}),
    ],
)
async def test_call_mirrors_x_mcp_header_arguments(url, arguments, expected_headers):
    async with connect(url) as (client, traffic):
        result = await client.call_tool("deploy", arguments)
    call = traffic.requests[-1]
    for name, value in expected_headers.items():
        assert call.headers[name] == value
    # The server checked every header against the body; a wrong one would have been -32020.
    sent = json.loads(result["content"][0]["text"])
    assert sent[0] == arguments["region"]


async def test_absent_header_arguments_send_no_header(url):
    async with connect(url) as (client, traffic):
        await client.call_tool("deploy", {"region": "eu"})
    assert "mcp-param-priority" not in traffic.requests[-1].headers
    assert "mcp-param-dry-run" not in traffic.requests[-1].headers


async def test_call_learns_header_params_from_tools_list_once(url):
    async with connect(url) as (client, traffic):
        await client.call_tool("weather", {"city": "Malmö"})
        await client.call_tool("weather", {"city": "Oslo"})
    assert traffic.methods == ["server/discover", *["tools/list"] * 3, "tools/call", "tools/call"]
    assert traffic.requests[-1].headers["mcp-param-city"] == "Oslo"


async def test_tools_breaking_x_mcp_header_rules_are_dropped(caplog):
    rogue = Server("rogue", "1.0.0")

    @rogue.tool(input_schema={"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}})
    def fine(n: int = 0) -> str:
        return str(n)

    @rogue.tool(input_schema={"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}})
    def bad(x: float = 0, y: float = 0) -> str:
        return str(x)

    # The server refuses to register a tool whose annotations break the rules, so mimic a
    # third-party server by breaking the registered schema afterwards: tools/list shows it as is.
    @rogue.tool()
    def after() -> str:
        return "listed after the dropped one"

    rogue.tools.get("bad").input_schema["properties"]["x"]["x-mcp-header"] = "X"
    rogue.tools.get("bad").input_schema["properties"]["y"]["x-mcp-header"] = "Y"
    with endpoint(StreamableHTTP(rogue)) as url:
        async with connect(url) as (client, traffic):
            tools = await client.list_tools()
            assert [tool["name"] for tool in tools] == ["fine", "after"]
            assert "bad" in client.dropped_tools
            problems = client.dropped_tools["bad"]
            assert len(problems) == 2 and all("number" in problem for problem in problems)
            warning = next(r for r in caplog.records if r.name == "mcpref.client" and r.levelname == "WARNING")
            assert warning.getMessage() == f"dropping tool 'bad': {problems[0]}; {problems[1]}"
            with pytest.raises(ProtocolError, match="dropped"):
                await client.call_tool("bad", {"x": 1.5})
            assert "tools/call" not in traffic.methods
            # Listed once: a name the listing did not have is the server's to refuse, not a
            # reason to list again before every call.
            with pytest.raises(InvalidParams):
                await client.call_tool("unknown")
    assert traffic.methods == ["server/discover", "tools/list", "tools/call"]


async def test_a_listed_entry_that_is_no_tool_is_skipped_and_the_rest_kept() -> None:
    """A tool needs a string name and an inputSchema object; anything else in the list is
    passed over, and the entries after it are still read."""
    entries = [
        "a string",
        {"name": 7, "inputSchema": {"type": "object"}},
        {"name": "no-schema"},
        {"name": "list-schema", "inputSchema": []},
        {"inputSchema": {"type": "object"}},
        {"name": "fine", "inputSchema": {"type": "object"}},
    ]

    async def mcp(request: Request) -> Response:
        message = await request.json()
        result = {"resultType": "complete", "tools": entries}
        return Response(
            json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), media_type="application/json"
        )

    with endpoint(Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])) as url:
        async with connect(url, version="2026-07-28") as (client, _):
            tools = await client.list_tools()
    assert tools == [{"name": "fine", "inputSchema": {"type": "object"}}]
    assert client.dropped_tools == {}


async def test_sse_responses_are_parsed():
    with endpoint(streaming_app) as url:
        async with connect(url) as (client, _):
            tools = await client.list_tools()
            result = await client.call_tool("echo", {"message": "über SSE"})
    assert len(tools) == 6
    assert result["content"][0]["text"] == "über SSE"


async def test_progress_and_log_notifications_reach_callbacks(url):
    progress: list[dict] = []
    logs: list[dict] = []

    async def on_log(params: dict) -> None:
        logs.append(params)

    async with connect(url, on_log=on_log, log_level="info") as (client, traffic):
        result = await client.call_tool("slow", on_progress=progress.append)
    assert result["content"][0]["text"] == "done"
    assert [(p["progress"], p.get("total"), p.get("message")) for p in progress] == [(1, 2, "halfway"), (2, 2, None)]
    assert logs == [{"level": "info", "data": "still going"}]
    meta = traffic.bodies[-1]["params"]["_meta"]
    assert meta["io.modelcontextprotocol/logLevel"] == "info"
    assert meta["progressToken"] == progress[0]["progressToken"]


def foreign_progress_app(tokens: list[object], others: list[dict] | None = None) -> Starlette:
    """A server that answers `tools/call` over SSE with a progress notification for each of
    `tokens` (`None` stands for the request's own), then the notifications `others`, then the result."""

    async def mcp(request: Request) -> Response:
        message = await request.json()
        if message["method"] == "tools/list":  # what the client asks first, for the tool's headers
            tools = {"resultType": "complete", "tools": [{"name": "anything", "inputSchema": {"type": "object"}}]}
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": tools}
            return Response(json.dumps(answer), media_type="application/json")
        own = message["params"]["_meta"]["progressToken"]
        events = []
        for index, token in enumerate(tokens, start=1):
            params = {"progressToken": own if token is None else token, "progress": index}
            events.append({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
        events.extend(others or [])
        result = {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}
        events.append({"jsonrpc": "2.0", "id": message["id"], "result": result})
        body = "".join(f"event: message\ndata: {json.dumps(event)}\n\n" for event in events)
        return Response(body, media_type="text/event-stream")

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])


async def test_progress_reaches_the_callback_only_with_the_requests_own_token() -> None:
    """basic/utilities/progress.mdx: a progress notification names the token of the request it is
    about. One with another request's token, a number that equals none, or none at all, is not
    this call's progress, and must not reach its callback."""
    progress: list[dict] = []
    with endpoint(foreign_progress_app(["progress-999", 1, "", None])) as url:
        async with connect(url, version="2026-07-28") as (client, traffic):
            result = await client.call_tool("anything", on_progress=progress.append)
    assert result["content"][0]["text"] == "done"
    own = traffic.bodies[-1]["params"]["_meta"]["progressToken"]
    assert progress == [{"progressToken": own, "progress": 4}]


async def test_only_log_messages_reach_on_log_and_params_that_are_no_object_read_as_empty() -> None:
    """A notification on a response stream goes where its method says: `notifications/message` to
    `on_log`, progress to the progress callback, any other kind to neither. Params that are no
    object are read as none, and break nothing."""
    logs: list[object] = []
    progress: list[object] = []
    others = [
        {"jsonrpc": "2.0", "method": "notifications/resources/list_changed", "params": {"level": "info"}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": ["not", "an", "object"]},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": ["not", "an", "object"]},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}},
    ]
    with endpoint(foreign_progress_app([], others)) as url:
        async with connect(url, version="2026-07-28", on_log=logs.append) as (client, _):
            result = await client.call_tool("anything", on_progress=progress.append)
    assert result["content"][0]["text"] == "done"
    assert logs == [{}, {"level": "info", "data": "hi"}]
    assert progress == []


async def test_no_progress_token_without_a_callback(url):
    async with connect(url) as (client, traffic):
        await client.call_tool("slow")
    meta = traffic.bodies[-1]["params"]["_meta"]
    assert "progressToken" not in meta
    assert "io.modelcontextprotocol/logLevel" not in meta


async def test_giving_up_on_a_call_closes_the_stream_and_cancels_it(url):
    cancelled.clear()
    async with connect(url) as (client, _):
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(client.call_tool("forever", on_progress=lambda params: None), 0.3)
        deadline = time.monotonic() + 5
        while not cancelled.is_set():
            assert time.monotonic() < deadline, "the server never saw the cancellation"
            await asyncio.sleep(0.01)


async def test_an_unknown_result_type_is_a_protocol_error(url):
    async with connect(url) as (client, _):
        with pytest.raises(ProtocolError, match="mystery"):
            await client.get_prompt("mystery")


async def test_bad_arguments_fail_before_sending(url):
    async with connect(url) as (client, traffic):
        with pytest.raises(TypeError):
            await client.call_tool("echo", ["not", "a", "mapping"])  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            await client.read_resource("")
        with pytest.raises(TypeError, match="unknown listen filter"):
            client.listen(tool_list_changed=True)
        with pytest.raises(ValueError):
            client.listen()
    assert traffic.requests == []


def test_public_surface_is_complete_and_sorted():
    exported = [name for name in dir(mcpref.client) if not name.startswith("_")]
    modules = {"annotations"}
    assert sorted(set(exported) - modules) == sorted(mcpref.client.__all__)
    assert mcpref.client.__all__ == sorted(mcpref.client.__all__, key=lambda n: (not n.isupper(), n))


def test_cache_keys_hold_the_params_that_shape_each_cacheable_result():
    """Derived from `mcpref.caching.CACHEABLE_METHODS`, the set the server puts hints on."""
    assert CACHE_PARAMS == {
        "prompts/list": ("cursor",),
        "resources/list": ("cursor",),
        "resources/read": ("uri",),
        "resources/templates/list": ("cursor",),
        "server/discover": (),
        "tools/list": ("cursor",),
    }


async def test_list_prompts_follows_every_page():
    paged = Server("paged", "1.0.0", page_size=1)
    for name in ("first", "second", "third"):
        paged.prompt(name=name)(lambda: "Say something.")
    with endpoint(StreamableHTTP(paged)) as url:
        async with connect(url) as (client, traffic):
            prompts = await client.list_prompts()
    assert [prompt["name"] for prompt in prompts] == ["first", "second", "third"]
    assert traffic.methods.count("prompts/list") == 3


async def test_client_info_is_on_every_request(url):
    info = {"name": "matrix-test", "version": "9.9"}
    async with connect(url, client_info=info) as (client, traffic):
        await client.discover()
        await client.list_tools()
        await client.call_tool("echo", {"message": "hi"})
    assert len(traffic.bodies) >= 3
    for body in traffic.bodies:
        assert body["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] == info


async def test_a_call_that_takes_too_long_times_out(url):
    async with mcpref.client.Client(url, timeout=0.3, era_cache=mcpref.client.EraCache()) as client:
        started = time.monotonic()
        with pytest.raises(mcpref.client.TransportError):
            await client.call_tool("forever")
    assert time.monotonic() - started < 5


async def test_prompts_and_resources_report_progress_to_their_own_callback():
    """`get_prompt` and `read_resource` take an `on_progress` of their own, as `call_tool` does:
    the request carries a progress token, and the progress the server reports reaches that callback."""
    working = Server("working", "1.0.0")

    @working.prompt()
    async def drafted(ctx) -> str:  # type: ignore[no-untyped-def]
        await ctx.report_progress(1, 1, "drafted")
        return "Say something."

    @working.resource("memo://fetched")
    async def fetched(ctx) -> str:  # type: ignore[no-untyped-def]
        await ctx.report_progress(1, 1, "fetched")
        return "here"

    prompt_progress: list[dict] = []
    read_progress: list[dict] = []
    with endpoint(StreamableHTTP(working)) as url:
        async with connect(url) as (client, traffic):
            await client.get_prompt("drafted", on_progress=prompt_progress.append)
            await client.read_resource("memo://fetched", on_progress=read_progress.append)
    assert [p["message"] for p in prompt_progress] == ["drafted"]
    assert [p["message"] for p in read_progress] == ["fetched"]
    tokens = [body["params"]["_meta"].get("progressToken") for body in traffic.bodies[-2:]]
    assert tokens == [prompt_progress[0]["progressToken"], read_progress[0]["progressToken"]]


async def test_a_completion_sends_the_arguments_already_chosen_as_its_context(url):
    async with connect(url) as (client, traffic):
        ref = {"type": "ref/resource", "uri": "users://{user}/profile"}
        await client.complete(ref, {"name": "user", "value": "b"}, context={"team": "blue"})
        await client.complete(ref, {"name": "user", "value": "b"})
    with_context, without = (body["params"] for body in traffic.bodies[-2:])
    assert with_context["context"] == {"arguments": {"team": "blue"}}
    assert "context" not in without


@pytest.mark.parametrize("name", ["", 7])
async def test_a_name_or_uri_that_is_no_non_empty_string_is_refused_before_sending(url, name):
    async with connect(url) as (client, traffic):
        with pytest.raises(ValueError, match="^prompt name must be a non-empty string$"):
            await client.get_prompt(name)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="^tool name must be a non-empty string$"):
            await client.call_tool(name)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="^uri must be a non-empty string$"):
            await client.read_resource(name)  # type: ignore[arg-type]
    assert traffic.requests == []


async def test_a_task_is_read_answered_waited_for_and_cancelled_by_its_id(tmp_path):
    """The task methods against the real tasks extension: each sends its own request, naming the
    task, and `wait_for_task` reports each status it sees to `on_status`."""
    tasks = TasksExtension(SQLiteTaskStore(tmp_path / "tasks.sqlite3"), poll_interval_ms=20)
    yes = {"action": "accept", "content": {"confirm": True}}
    statuses: list[str] = []
    seen_by_call: list[str] = []
    with endpoint(StreamableHTTP(build_server(tasks))) as url:
        async with connect(url, tasks=True, elicitation=lambda params: yes) as (client, traffic):
            asked = (await client.start_tool("confirm_delete", {"filename": "notes.txt"}))["taskId"]
            deadline = time.monotonic() + 10
            while (task := await client.get_task(asked))["status"] != "input_required":
                assert time.monotonic() < deadline, task
                await asyncio.sleep(0.02)
            assert task["taskId"] == asked and list(task["inputRequests"]) == ["confirm"]
            await client.update_task(asked, {"confirm": yes})
            result = await client.wait_for_task(asked, on_status=lambda task: statuses.append(task["status"]))
            # call_tool waits for a task itself, answering its input with the handler.
            called = await client.call_tool(
                "confirm_delete", {"filename": "old.txt"}, on_status=lambda task: seen_by_call.append(task["status"])
            )
            slow = (await client.start_tool("slow_compute", {"seconds": 30}))["taskId"]
            await client.cancel_task(slow)
            with pytest.raises(TaskCancelled):
                await client.wait_for_task(slow)
    assert result["content"] == [{"type": "text", "text": "Deleted notes.txt"}]
    assert called["content"] == [{"type": "text", "text": "Deleted old.txt"}]
    assert statuses[-1] == seen_by_call[-1] == "completed"
    mine = (asked, slow)  # what the caller sent itself, not what call_tool sent for its own task
    sent = [
        b for b in traffic.bodies if b["method"] in ("tasks/update", "tasks/cancel") and b["params"]["taskId"] in mine
    ]
    assert [(body["method"], {k: v for k, v in body["params"].items() if k != "_meta"}) for body in sent] == [
        ("tasks/update", {"taskId": asked, "inputResponses": {"confirm": yes}}),
        ("tasks/cancel", {"taskId": slow}),
    ]


def call_answered_with(events: Callable[[int], list[dict]]) -> Starlette:
    """A server that lists one tool and answers `tools/call` over SSE with `events(request_id)`."""

    async def mcp(request: Request) -> Response:
        message = await request.json()
        if message["method"] == "tools/list":
            tools = {"resultType": "complete", "tools": [{"name": "anything", "inputSchema": {"type": "object"}}]}
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": tools}
            return Response(json.dumps(answer), media_type="application/json")
        body = "".join(f"event: message\ndata: {json.dumps(event)}\n\n" for event in events(message["id"]))
        return Response(body, media_type="text/event-stream")

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])


NOTE = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}


@pytest.mark.parametrize(
    ("events", "error", "message"),
    [
        (
            lambda own: [{"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}}],
            ProtocolError,
            "the server sent a request (sampling/createMessage) on a response stream",
        ),
        (
            lambda own: [{"jsonrpc": "2.0", "id": own + 100, "result": {}}],
            ProtocolError,
            "got a response to id {wrong}, expected {own}",
        ),
        (
            lambda own: [{"jsonrpc": "2.0", "id": None, "result": {}}],
            ProtocolError,
            "got a response to id None, expected {own}",
        ),
        (
            lambda own: [{"jsonrpc": "2.0", "id": own, "result": [1]}],
            ProtocolError,
            "the tools/call response has no result object",
        ),
        (lambda own: [NOTE], TransportError, "the stream ended before the response to tools/call arrived"),
        # An error with a null id is the server's answer to a request it could not read: ours.
        (
            lambda own: [{"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "No."}}],
            InvalidParams,
            "No.",
        ),
    ],
)
async def test_a_response_stream_must_end_with_a_result_object_for_this_request(events, error, message) -> None:
    with endpoint(call_answered_with(lambda own: [NOTE, *events(own)])) as url:
        async with connect(url, version="2026-07-28") as (client, traffic):
            with pytest.raises(error) as caught:
                await client.call_tool("anything")
    own = traffic.bodies[-1]["id"]
    assert str(caught.value) == message.format(own=own, wrong=own + 100)


async def test_a_mismatch_where_no_headers_were_mirrored_is_raised_without_listing_again() -> None:
    """Over stdio nothing is mirrored in headers, so a -32020 cannot be the tool list's fault."""
    script = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["method"] == "server/discover":
        result = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
    elif "id" in request:
        error = {"code": -32020, "message": "Header mismatch: " + request["method"]}
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}), flush=True)
"""
    async with Client(StdioTransport([sys.executable, "-c", script], timeout=10)) as client:
        with pytest.raises(HeaderMismatch, match="^Header mismatch: tools/call$"):
            await client.call_tool("anything")
        assert client.dropped_tools == {} and not client._tools_listed  # no tools/list was sent


@pytest.mark.parametrize("rounds", [0, -1])
def test_at_least_one_input_round(rounds):
    with pytest.raises(ValueError, match="^max_rounds must be at least 1$"):
        Client("http://127.0.0.1:9/mcp", max_rounds=rounds)


async def test_a_given_http_client_gets_the_headers_and_auth_and_stays_open(url):
    class Marked(httpx.Auth):
        def auth_flow(self, request):  # type: ignore[no-untyped-def]
            request.headers["X-Marked"] = "yes"
            yield request

    seen: list[httpx.Request] = []

    async def hook(request: httpx.Request) -> None:
        seen.append(request)

    async with httpx.AsyncClient(event_hooks={"request": [hook]}) as http:
        async with Client(url, http=http, headers={"X-Team": "blue"}, auth=Marked(), max_rounds=1) as client:
            await client.discover()
        assert not http.is_closed  # the caller's client, not ours to close
    assert all(r.headers["x-team"] == "blue" and r.headers["x-marked"] == "yes" for r in seen) and seen


async def test_a_client_that_makes_its_own_http_client_sends_the_headers_given() -> None:
    seen: list[dict[str, str]] = []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append({name.decode(): value.decode() for name, value in scope["headers"]})
        await app(scope, receive, send)

    with endpoint(recording) as address:
        async with Client(address, headers={"X-Team": "blue"}, era_cache=EraCache()) as client:
            await client.discover()
    assert seen and all(headers.get("x-team") == "blue" for headers in seen), seen


async def test_the_defaults_a_client_is_made_with(url):
    """What the signature shows, which the API page renders: 30 s for a request, 8 input rounds."""
    async with Client(url, era_cache=EraCache()) as client:
        assert client.max_rounds == 8
        assert client._http is not None and client._http.timeout == httpx.Timeout(30.0)


async def test_tasks_adds_its_extension_to_the_extensions_declared(url):
    declared = {"extensions": {"com.example/notes": {"v": 1}}}
    async with Client(url, capabilities=declared, tasks=True) as client:
        assert client.capabilities["extensions"] == {"com.example/notes": {"v": 1}, TASKS_EXTENSION: {}}


async def test_what_the_client_was_asked_for_and_where_its_era_is_kept(url):
    eras = EraCache()
    async with Client(url, era_cache=eras, version="2026-07-28") as pinned, Client(url, era_cache=eras) as auto:
        await auto.discover()
    assert (pinned.version, auto.version) == ("2026-07-28", "auto")
    assert pinned.era_cache is eras and auto.era_cache is eras
    assert auto.origin == url.removesuffix("/mcp")
