"""The MRTR loop against our real server: input requests answered by plugged-in handlers, retries
with a new id, `inputResponses` under the same keys and the sealed `requestState` echoed exactly
(the server refuses a state changed by one byte, so a completed round trip proves the echo)."""

from __future__ import annotations

import pytest

from mcpref import CacheHints, Server, StreamableHTTP
from mcpref.client import InputHandlers, MissingRequiredClientCapability, ProtocolError
from mcpref.mrtr import InputRequired, create_message, elicit_form, elicit_url, list_roots
from tests.client.conftest import connect, endpoint

pytestmark = pytest.mark.anyio

server = Server("mrtr-server", "1.0.0", cache_for={"resources/read": CacheHints(60_000, "public")})


@server.tool(input_schema={"type": "object", "properties": {"path": {"type": "string"}}})
def delete(path: str, ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
    answer = ctx.input_response("confirm")
    if answer is None:
        return InputRequired({"confirm": elicit_form(f"Delete {path}?", {"sure": {"type": "boolean"}})}, {"path": path})
    sure = answer.get("action") == "accept" and answer.get("content", {}).get("sure") is True
    return f"deleted {ctx.state['path']}" if sure else "kept"


@server.tool()
def survey(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
    if ctx.state is None:
        return InputRequired({"name": elicit_form("Name?", {"name": {"type": "string"}})}, state={"round": 1})
    if ctx.state == {"round": 1}:
        name = ctx.input_response("name")["content"]["name"]
        return InputRequired({"colour": elicit_form("Colour?", {"c": {"type": "string"}})}, {"round": 2, "name": name})
    return f"{ctx.state['name']} likes {ctx.input_response('colour')['content']['c']}"


@server.tool()
def sign_in(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
    if ctx.input_response("login") is None:
        return InputRequired({"login": elicit_url("Sign in", "https://example.com/login")})
    return "signed in"


@server.tool()
def stubborn(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
    return InputRequired({"again": elicit_form("Again?", {"x": {"type": "string"}})})


@server.tool()
def wait_a_bit(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
    """Asks for nothing but a second round, carrying only state."""
    if ctx.state is None:
        return InputRequired({}, state={"ticket": 7})
    return f"ticket {ctx.state['ticket']} ready"


@server.prompt()
def grounded(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
    roots = ctx.input_response("roots")
    if roots is None:
        return InputRequired({"roots": list_roots()})
    return "Work in " + ", ".join(root["uri"] for root in roots["roots"])


@server.resource("summary://today")
def summary(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
    answer = ctx.input_response("llm")
    if answer is None:
        return InputRequired({"llm": create_message("Summarise today", 100)})
    return answer["content"]["text"]


app = StreamableHTTP(server)


def accept(content: dict) -> dict:
    return {"action": "accept", "content": content}


async def test_a_round_trip_answers_and_echoes_the_state(url):
    asked: list[dict] = []

    async def elicit(params: dict) -> dict:
        asked.append(params)
        return accept({"sure": True})

    async with connect(url, elicitation=elicit, headers={"Authorization": "Bearer t"}) as (client, traffic):
        result = await client.call_tool("delete", {"path": "/tmp/a"})
    assert result["content"][0]["text"] == "deleted /tmp/a"
    assert asked[0]["mode"] == "form" and asked[0]["message"] == "Delete /tmp/a?"
    first, retry = [body for body in traffic.bodies if body["method"] == "tools/call"]
    assert first["id"] != retry["id"]
    assert "inputResponses" not in first["params"] and "requestState" not in first["params"]
    assert retry["params"]["inputResponses"] == {"confirm": accept({"sure": True})}
    assert isinstance(retry["params"]["requestState"], str)
    assert retry["params"]["name"] == "delete" and retry["params"]["arguments"] == {"path": "/tmp/a"}
    assert retry["params"]["_meta"] == first["params"]["_meta"]  # the required _meta is sent again
    caps = first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert caps == {"elicitation": {"form": {}, "url": {}}}


async def test_each_retry_carries_only_the_latest_answers(url):
    answers = iter([accept({"name": "Ada"}), accept({"c": "blue"})])
    async with connect(url, elicitation=lambda params: next(answers)) as (client, traffic):
        result = await client.call_tool("survey")
    assert result["content"][0]["text"] == "Ada likes blue"
    calls = [body["params"] for body in traffic.bodies if body["method"] == "tools/call"]
    assert [sorted(call.get("inputResponses", {})) for call in calls] == [[], ["name"], ["colour"]]
    assert calls[1]["requestState"] != calls[2]["requestState"]
    assert len({body["id"] for body in traffic.bodies}) == len(traffic.bodies)


async def test_a_state_only_round_is_retried_at_once(url):
    async with connect(url) as (client, traffic):
        result = await client.call_tool("wait_a_bit")
    assert result["content"][0]["text"] == "ticket 7 ready"
    retry = traffic.bodies[-1]["params"]
    assert "inputResponses" not in retry and isinstance(retry["requestState"], str)


async def test_prompts_ask_for_roots_and_a_fixed_list_answers(url):
    roots = [{"uri": "file:///src", "name": "src"}, {"uri": "file:///docs"}]
    async with connect(url, roots=roots) as (client, traffic):
        prompt = await client.get_prompt("grounded")
    assert prompt["messages"][0]["content"]["text"] == "Work in file:///src, file:///docs"
    assert traffic.bodies[-1]["params"]["inputResponses"] == {"roots": {"roots": roots}}
    assert traffic.bodies[-1]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {"roots": {}}


async def test_resource_reads_sample_and_retried_results_are_never_cached(url):
    def sample(params: dict) -> dict:
        assert params["maxTokens"] == 100
        return {"role": "assistant", "content": {"type": "text", "text": "Quiet."}, "model": "test-model"}

    async with connect(url, sampling=sample) as (client, traffic):
        first = await client.read_resource("summary://today")
        await client.read_resource("summary://today")
    assert first["contents"][0]["text"] == "Quiet."
    assert traffic.bodies[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {"sampling": {}}
    assert first["ttlMs"] == 60_000  # cacheable on its face, but it came from a retry
    assert traffic.methods.count("resources/read") == 4


@server.tool()
def agent(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
    """Sampling with tools; what a server that ignores `sampling.tools` would send to anyone."""
    answer = ctx.input_response("look")
    if answer is None:
        return InputRequired(
            {"look": create_message("Look it up", tools=[{"name": "lookup", "inputSchema": {"type": "object"}}])}
        )
    return answer["content"]["text"]


async def test_tool_enabled_sampling_needs_the_client_to_declare_sampling_tools(url):
    """client/sampling.mdx §Tools in Sampling: the client declares `sampling.tools` to receive such
    requests; our server refuses to ask a client that did not (-32021)."""

    def sample(params: dict) -> dict:
        return {"role": "assistant", "content": {"type": "text", "text": "used a tool"}, "model": "m"}

    async with connect(url, sampling=sample) as (client, _):
        with pytest.raises(MissingRequiredClientCapability) as caught:
            await client.call_tool("agent")
    assert caught.value.data == {"requiredCapabilities": {"sampling": {"tools": {}}}}
    async with connect(url, sampling=sample, capabilities={"sampling": {"tools": {}}}) as (client, traffic):
        assert (await client.call_tool("agent"))["content"][0]["text"] == "used a tool"
    assert traffic.bodies[-1]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {
        "sampling": {"tools": {}}
    }


async def test_the_round_limit_stops_a_server_that_keeps_asking(url):
    async with connect(url, elicitation=lambda params: accept({"x": "y"}), max_rounds=3) as (client, traffic):
        with pytest.raises(ProtocolError, match="3 rounds"):
            await client.call_tool("stubborn")
    assert traffic.methods.count("tools/call") == 4


async def test_without_a_handler_the_server_refuses_to_ask(url):
    async with connect(url) as (client, _):
        with pytest.raises(MissingRequiredClientCapability) as caught:
            await client.call_tool("delete", {"path": "x"})
    assert caught.value.required_capabilities == {"elicitation": {}}


async def test_only_the_declared_elicitation_modes_are_offered(url):
    async with connect(url, elicitation=lambda p: accept({}), elicitation_modes=("form",)) as (client, traffic):
        with pytest.raises(MissingRequiredClientCapability) as caught:
            await client.call_tool("sign_in")
    assert caught.value.required_capabilities == {"elicitation": {"url": {}}}
    caps = traffic.bodies[-1]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert caps == {"elicitation": {"form": {}}}


async def test_url_elicitation_round_trip(url):
    seen: list[dict] = []
    async with connect(url, elicitation=lambda p: seen.append(p) or {"action": "accept"}) as (client, traffic):
        result = await client.call_tool("sign_in")
    assert result["content"][0]["text"] == "signed in"
    assert seen == [{"mode": "url", "message": "Sign in", "url": "https://example.com/login"}]
    # The URL goes to the handler only: the client itself never fetches it.
    assert {str(request.url) for request in traffic.requests} == {url}


async def test_a_failing_handler_surfaces_its_own_error(url):
    def refuse(params: dict) -> dict:
        raise RuntimeError("user closed the dialog")

    async with connect(url, elicitation=refuse) as (client, traffic):
        with pytest.raises(RuntimeError, match="closed the dialog"):
            await client.call_tool("delete", {"path": "x"})
    assert traffic.methods.count("tools/call") == 1


async def test_a_handler_must_return_a_result_object(url):
    async with connect(url, elicitation=lambda params: "yes") as (client, _):
        with pytest.raises(TypeError, match="must return a dict"):
            await client.call_tool("delete", {"path": "x"})


async def test_an_elicitation_without_a_mode_is_form_mode():
    # Servers may leave `mode` out of a form request; clients read it as form (client/elicitation.mdx).
    no_mode = {"ask": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {}}}}
    form_only = InputHandlers(elicitation=lambda params: accept({"n": "Ada"}), elicitation_modes=("form",))
    assert await form_only.respond(no_mode) == {"ask": accept({"n": "Ada"})}
    url_only = InputHandlers(elicitation=lambda params: accept({}), elicitation_modes=("url",))
    with pytest.raises(ProtocolError, match="never declared"):
        await url_only.respond(no_mode)


@pytest.mark.parametrize("modes", [(), ("forms",)])
def test_declaring_elicitation_needs_a_known_mode(modes):
    with pytest.raises(ValueError, match="elicitation_modes"):
        InputHandlers(elicitation=lambda params: {}, elicitation_modes=modes)


@pytest.mark.parametrize("roots", [[{"uri": "https://example.com/src"}], [{"name": "no uri"}]])
async def test_roots_must_be_file_uris(roots):
    ask = {"roots": {"method": "roots/list"}}
    with pytest.raises(ValueError, match="file://"):
        await InputHandlers(roots=roots).respond(ask)
    with pytest.raises(ValueError, match="file://"):
        await InputHandlers(roots=lambda params: {"roots": roots}).respond(ask)


async def declared(url: str, **handlers) -> list[dict]:  # type: ignore[no-untyped-def]
    """The clientCapabilities of every request a client with `handlers` sends."""
    async with connect(url, **handlers) as (client, traffic):
        await client.discover()
        await client.list_tools()
        await client.list_prompts()
    return [body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] for body in traffic.bodies]


async def test_the_sampling_capability_is_declared_on_every_request(url):
    assert set(map(str, await declared(url, sampling=lambda params: {}))) == {str({"sampling": {}})}


async def test_the_roots_capability_is_declared_on_every_request(url):
    assert set(map(str, await declared(url, roots=[{"uri": "file:///src"}]))) == {str({"roots": {}})}


async def test_the_server_asks_for_roots_only_when_they_are_declared(url):
    async with connect(url) as (client, traffic):
        with pytest.raises(MissingRequiredClientCapability) as caught:
            await client.get_prompt("grounded")
    assert caught.value.required_capabilities == {"roots": {}}
    assert traffic.methods.count("prompts/get") == 1  # refused, not asked


async def test_a_rejected_tool_leaves_the_others_usable(caplog):
    mixed = Server("mixed", "1.0.0")
    mixed.tool(name="good")(lambda: "fine")
    mixed.tool(name="bad", input_schema={"type": "object", "properties": {"x": {"type": "number"}}})(lambda x=0: "")
    mixed.tools.get("bad").input_schema["properties"]["x"]["x-mcp-header"] = "X"  # as a third-party server might
    with endpoint(StreamableHTTP(mixed)) as mixed_url:
        async with connect(mixed_url) as (client, _):
            assert [tool["name"] for tool in await client.list_tools()] == ["good"]
            assert (await client.call_tool("good"))["content"][0]["text"] == "fine"
    assert any("'bad'" in r.getMessage() for r in caplog.records if r.levelname == "WARNING")


async def test_an_expired_request_state_ends_the_loop_with_invalid_params():
    """Over real HTTP: the server sealed a state that is already stale (ttl -1 s), so the client's
    retry is refused with -32602, and the client reports it rather than asking again."""
    from mcpref.client import InvalidParams
    from mcpref.mrtr import StateSealer

    stale = Server("stale-state", "1.0.0", state_sealer=StateSealer(b"k" * 32, ttl_seconds=-1))
    stale.tool(name="delete", input_schema={"type": "object", "properties": {"path": {"type": "string"}}})(delete)
    with endpoint(StreamableHTTP(stale)) as stale_url:
        async with connect(stale_url, elicitation=lambda params: accept({"sure": True})) as (client, traffic):
            with pytest.raises(InvalidParams, match="it has expired"):
                await client.call_tool("delete", {"path": "x"})
    assert traffic.methods.count("tools/call") == 2


@pytest.mark.parametrize("extra", [{"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}, {"toolChoice": {}}])
async def test_sampling_with_tools_or_tool_choice_is_an_error_without_sampling_tools(extra):
    sampled: list[dict] = []
    ask = {"s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5, **extra}}}
    plain = InputHandlers(sampling=lambda params: sampled.append(params) or {})
    with pytest.raises(ProtocolError, match="needs sampling.tools, which this client never declared"):
        await plain.respond(ask)
    assert sampled == []
    await plain.respond({"plain": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}})
    assert len(sampled) == 1
    sampled.clear()
    with_tools = InputHandlers(
        sampling=lambda params: sampled.append(params) or {}, declared={"sampling": {"tools": {}}}
    )
    await with_tools.respond(ask)
    assert len(sampled) == 1


def scripted(*results: dict) -> tuple[list[dict], object]:
    """What the client sent, and a `send` that answers each attempt with the next of `results`
    (the server's side of the loop, scripted: these tests state what the client does with each answer)."""
    sent: list[dict] = []
    answers = iter(results)

    async def send(params: dict) -> dict:
        sent.append(params)
        return next(answers)

    return sent, send


def asking(requests: dict, state: str | None = None) -> dict:
    result: dict = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        result["requestState"] = state
    return result


async def test_each_retry_starts_from_the_original_params_with_only_this_rounds_answers_and_state():
    from mcpref.client._input import input_rounds

    colour = {"method": "elicitation/create", "params": {"message": "Colour?", "requestedSchema": {}}}
    sent, send = scripted(
        asking({"a": colour}, state="s1"),
        asking({"b": colour}),  # no state this round: the last one is not carried on
        {"resultType": "complete", "content": []},
    )
    inputs = InputHandlers(elicitation=lambda params: accept({"c": "red"}))
    result, rounds = await input_rounds("tools/call", {"name": "paint"}, send, inputs, max_rounds=5, tasks=False)
    assert result == {"resultType": "complete", "content": []}
    assert rounds == 2
    assert sent == [
        {"name": "paint"},
        {"name": "paint", "inputResponses": {"a": accept({"c": "red"})}, "requestState": "s1"},
        {"name": "paint", "inputResponses": {"b": accept({"c": "red"})}},
    ]


@pytest.mark.parametrize(
    ("method", "tasks", "allowed"),
    [("tools/call", True, True), ("tools/call", False, False), ("prompts/get", True, False)],
)
async def test_a_task_stands_in_only_for_a_client_that_declared_tasks_and_only_for_a_tool_call(method, tasks, allowed):
    from mcpref.client._input import input_rounds

    task = {"resultType": "task", "task": {"taskId": "t1", "status": "working"}}
    _, send = scripted(task)
    if allowed:
        assert await input_rounds(method, {}, send, InputHandlers(), max_rounds=3, tasks=tasks) == (task, 0)
    else:
        with pytest.raises(ProtocolError, match=f"{method} answered with a task, which this request cannot take"):
            await input_rounds(method, {}, send, InputHandlers(), max_rounds=3, tasks=tasks)


async def test_an_unknown_result_type_is_a_protocol_error_naming_it():
    from mcpref.client._input import input_rounds

    _, send = scripted({"resultType": "partial"})
    with pytest.raises(ProtocolError, match="tools/call answered with unknown resultType 'partial'"):
        await input_rounds("tools/call", {}, send, InputHandlers(), max_rounds=3, tasks=True)


async def test_only_tool_calls_prompts_and_reads_may_ask_for_input():
    from mcpref.client._input import input_rounds

    sent, send = scripted(asking({}), {"resultType": "complete"})
    with pytest.raises(ProtocolError, match="tools/list must not answer input_required"):
        await input_rounds("tools/list", {}, send, InputHandlers(), max_rounds=3, tasks=False)
    assert len(sent) == 1


@pytest.mark.parametrize(
    ("requests", "error"),
    [
        (["not", "a", "map"], "inputRequests must be an object, got list"),
        ({"k": "roots/list"}, r"inputRequests\['k'\] is not a \{method, params\} object"),
        ({"k": {"params": {}}}, r"inputRequests\['k'\] is not a \{method, params\} object"),
        ({"k": {"method": "roots/list", "params": ["x"]}}, r"inputRequests\['k'\].params must be an object"),
        ({"k": {"method": "ping"}}, r"the server asked for ping \(key 'k'\), which this client never declared"),
    ],
)
async def test_malformed_or_unknown_input_requests_are_protocol_errors(requests, error):
    every = {"roots": [{"uri": "file:///src"}], "elicitation": lambda params: accept({}), "sampling": lambda p: {}}
    handlers = InputHandlers(**every)  # type: ignore[arg-type]
    with pytest.raises(ProtocolError, match=error):
        await handlers.respond(requests)


async def test_an_input_request_without_params_gets_empty_params():
    seen: list[dict] = []
    handlers = InputHandlers(roots=lambda params: seen.append(params) or {"roots": []})
    assert await handlers.respond({"r": {"method": "roots/list"}}) == {"r": {"roots": []}}
    assert await handlers.respond({"r": {"method": "roots/list", "params": None}}) == {"r": {"roots": []}}
    assert seen == [{}, {}]


async def test_a_request_for_what_the_client_never_declared_is_named_whole():
    # Without a sampling handler, a tool-enabled sampling request lacks sampling itself, not sampling.tools.
    ask = {"s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5, "toolChoice": {}}}}
    with pytest.raises(ProtocolError) as caught:
        await InputHandlers(elicitation=lambda params: accept({})).respond(ask)
    assert (
        str(caught.value) == "the server asked for sampling/createMessage (key 's'), which this client never declared"
    )


async def test_every_sampling_feature_missing_is_named():
    params = {"messages": [], "maxTokens": 5, "tools": [], "includeContext": "allServers"}
    with pytest.raises(ProtocolError) as caught:
        await InputHandlers(sampling=lambda params: {}).respond(
            {"s": {"method": "sampling/createMessage", "params": params}}
        )
    assert str(caught.value) == (
        "inputRequests['s'] needs sampling.tools, sampling.context, which this client never declared"
    )


async def test_a_url_elicitation_is_refused_by_a_form_only_client():
    ask = {
        "login": {"method": "elicitation/create", "params": {"mode": "url", "message": "Sign in", "url": "https://x"}}
    }
    form_only = InputHandlers(elicitation=lambda params: accept({}), elicitation_modes=("form",))
    with pytest.raises(ProtocolError, match="never declared"):
        await form_only.respond(ask)
    url_only = InputHandlers(elicitation=lambda params: {"action": "accept"}, elicitation_modes=("url",))
    assert await url_only.respond(ask) == {"login": {"action": "accept"}}


async def test_a_handler_returning_no_dict_is_told_what_it_returned():
    with pytest.raises(TypeError) as caught:
        await InputHandlers(sampling=lambda params: "hi").respond({"s": {"method": "sampling/createMessage"}})
    assert str(caught.value) == "the sampling/createMessage handler must return a dict (the result object), got str"


async def test_a_root_that_is_no_file_uri_is_named():
    with pytest.raises(ValueError) as caught:
        await InputHandlers(roots=[{"uri": "https://example.com/src"}]).respond({"r": {"method": "roots/list"}})
    assert str(caught.value) == "a root must be a file:// URI, got 'https://example.com/src'"


@pytest.mark.parametrize("answer", [{}, {"roots": None}, {"roots": "file:///src"}])
async def test_a_roots_handler_must_return_a_list_of_roots(answer):
    # client/roots.mdx: a ListRootsResult's `roots` is an array; the server would refuse anything else.
    with pytest.raises(TypeError, match="roots/list handler must return a ListRootsResult, whose roots is a list"):
        await InputHandlers(roots=lambda params: answer).respond({"r": {"method": "roots/list"}})
