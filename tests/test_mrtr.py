"""MRTR: input requests inside results, sealed state, and the rounds of one request."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpref import MCPError, Server
from mcpref.jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, Request
from mcpref.mrtr import (
    InputRequired,
    StateSealer,
    create_message,
    elicit_form,
    elicit_url,
    list_roots,
    params_digest,
    read_input_responses,
    required_capability,
)
from mcpref.pagination import paginate
from mcpref.sealing import Sealer, b64url_decode
from mcpref.validation import check_message

ALL_CAPS = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}


def meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": ALL_CAPS if capabilities is None else capabilities,
    }


def call(server: Server, method: str, params: dict[str, Any], *, principal: str | None = None, caps=None) -> dict:
    result = asyncio.run(server.handle(Request(1, method, {**params, "_meta": meta(caps)}), principal=principal))
    check_message({"jsonrpc": "2.0", "id": 1, "result": result}, method)
    return result


@pytest.fixture
def server() -> Server:
    server = Server("mrtr", "1", state_sealer=StateSealer(b"k" * 32))

    @server.tool(input_schema={"type": "object", "properties": {"path": {"type": "string"}}})
    def delete(path: str, ctx) -> str:  # type: ignore[no-untyped-def]
        """Delete a file after the user confirms."""
        answer = ctx.input_response("confirm")
        if answer is None:
            form = elicit_form(f"Delete {path}?", {"sure": {"type": "boolean"}}, ["sure"])
            return InputRequired({"confirm": form}, state={"path": path})
        if ctx.state != {"path": path}:
            return "state lost"
        sure = answer.get("action") == "accept" and answer.get("content", {}).get("sure") is True
        return f"deleted {path}" if sure else "kept"

    @server.tool()
    def survey(ctx) -> str:  # type: ignore[no-untyped-def]
        """Two rounds: a name, then a colour."""
        if ctx.state is None:
            return InputRequired({"name": elicit_form("Name?", {"name": {"type": "string"}})}, state={"round": 1})
        if ctx.state == {"round": 1}:
            name = ctx.input_response("name")["content"]["name"]
            return InputRequired(
                {"colour": elicit_form("Colour?", {"c": {"type": "string"}})}, state={"round": 2, "name": name}
            )
        return f"{ctx.state['name']} likes {ctx.input_response('colour')['content']['c']}"

    @server.prompt()
    def grounded(ctx) -> str:  # type: ignore[no-untyped-def]
        """A prompt that needs the client's roots."""
        roots = ctx.input_response("roots")
        if roots is None:
            return InputRequired({"roots": list_roots()})
        return "Work in " + ", ".join(root["uri"] for root in roots["roots"])

    @server.resource("summary://today")
    def summary(ctx) -> str:  # type: ignore[no-untyped-def]
        answer = ctx.input_response("llm")
        if answer is None:
            return InputRequired({"llm": create_message("Summarise today", 100)})
        return answer["content"]["text"]

    return server


def test_a_round_trip_with_state(server: Server) -> None:
    first = call(server, "tools/call", {"name": "delete", "arguments": {"path": "/tmp/a"}})
    assert first["resultType"] == "input_required"
    assert "ttlMs" not in first
    assert first["inputRequests"]["confirm"]["method"] == "elicitation/create"
    state = first["requestState"]
    answer = {"confirm": {"action": "accept", "content": {"sure": True}}}
    second = call(
        server,
        "tools/call",
        {"name": "delete", "arguments": {"path": "/tmp/a"}, "inputResponses": answer, "requestState": state},
    )
    assert second["resultType"] == "complete"
    assert second["content"][0]["text"] == "deleted /tmp/a"


def test_missing_responses_get_a_fresh_request_and_extras_are_ignored(server: Server) -> None:
    extra = {"other": {"action": "accept", "content": {}}}
    again = call(server, "tools/call", {"name": "delete", "arguments": {"path": "x"}, "inputResponses": extra})
    assert again["resultType"] == "input_required"


def test_multi_round_issues_a_new_state_each_round(server: Server) -> None:
    first = call(server, "tools/call", {"name": "survey"})
    second = call(
        server,
        "tools/call",
        {
            "name": "survey",
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": first["requestState"],
        },
    )
    assert second["resultType"] == "input_required" and second["requestState"] != first["requestState"]
    third = call(
        server,
        "tools/call",
        {
            "name": "survey",
            "inputResponses": {"colour": {"action": "accept", "content": {"c": "blue"}}},
            "requestState": second["requestState"],
        },
    )
    assert third["content"][0]["text"] == "Ada likes blue"


def test_prompts_and_resources_may_ask_too(server: Server) -> None:
    assert call(server, "prompts/get", {"name": "grounded"})["inputRequests"]["roots"] == {"method": "roots/list"}
    done = call(
        server, "prompts/get", {"name": "grounded", "inputResponses": {"roots": {"roots": [{"uri": "file:///src"}]}}}
    )
    assert done["messages"][0]["content"]["text"] == "Work in file:///src"
    asked = call(server, "resources/read", {"uri": "summary://today"})
    assert asked["resultType"] == "input_required" and "ttlMs" not in asked
    sampled = {"llm": {"role": "assistant", "content": {"type": "text", "text": "Quiet."}, "model": "m"}}
    read = call(server, "resources/read", {"uri": "summary://today", "inputResponses": sampled})
    assert read["contents"][0]["text"] == "Quiet." and read["ttlMs"] == 0


def test_input_requests_need_the_declared_capability(server: Server) -> None:
    with pytest.raises(MCPError) as caught:
        call(server, "tools/call", {"name": "delete", "arguments": {"path": "x"}}, caps={"sampling": {}})
    assert caught.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert caught.value.data == {"requiredCapabilities": {"elicitation": {}}}


def tamper(state: str) -> list[str]:
    body, mac = state.split(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    return [state + "-TAMPERED", f"{flipped}.{mac}", f"{body}.{mac[::-1]}", "not-a-state", ""]


@pytest.mark.parametrize("index", range(5))
def test_a_tampered_state_is_refused(server: Server, index: int) -> None:
    state = call(server, "tools/call", {"name": "delete", "arguments": {"path": "x"}})["requestState"]
    with pytest.raises(MCPError) as caught:
        call(server, "tools/call", {"name": "delete", "arguments": {"path": "x"}, "requestState": tamper(state)[index]})
    assert caught.value.code == INVALID_PARAMS


def test_a_state_is_bound_to_its_request_and_principal(server: Server) -> None:
    state = call(server, "tools/call", {"name": "delete", "arguments": {"path": "x"}}, principal="alice")[
        "requestState"
    ]
    for params, principal in [
        ({"name": "delete", "arguments": {"path": "y"}}, "alice"),
        ({"name": "survey"}, "alice"),
        ({"name": "delete", "arguments": {"path": "x"}}, "mallory"),
        ({"name": "delete", "arguments": {"path": "x"}}, None),
    ]:
        with pytest.raises(MCPError, match="requestState refused"):
            call(server, "tools/call", {**params, "requestState": state}, principal=principal)


def test_expired_state_and_other_keys_are_refused() -> None:
    sealer = StateSealer(b"a" * 32, ttl_seconds=10)
    token = sealer.seal({"n": 1}, method="tools/call", digest="d", principal=None, now=1000)
    assert sealer.open(token, method="tools/call", digest="d", principal=None, now=1005) == {"n": 1}
    with pytest.raises(MCPError, match="expired"):
        sealer.open(token, method="tools/call", digest="d", principal=None, now=1011)
    with pytest.raises(MCPError, match="signature"):
        StateSealer(b"b" * 32).open(token, method="tools/call", digest="d", principal=None, now=1005)


def test_a_state_is_good_until_its_expiry_second_and_refused_after() -> None:
    sealer = StateSealer(b"a" * 32, ttl_seconds=10)
    token = sealer.seal("s", method="tools/call", digest="d", principal=None, now=1000)
    assert sealer.open(token, method="tools/call", digest="d", principal=None, now=1010) == "s"
    with pytest.raises(MCPError, match="it has expired"):
        sealer.open(token, method="tools/call", digest="d", principal=None, now=1010.5)


def test_the_dispatcher_refuses_a_retry_whose_state_has_expired() -> None:
    """A state lives `ttl_seconds`; a retry after that is -32602 and the tool does not run again."""
    server = Server("mrtr", "1", state_sealer=StateSealer(b"k" * 32, ttl_seconds=-1))
    ran: list[str] = []

    @server.tool()
    def confirm(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
        ran.append("round")
        if ctx.input_response("ok") is None:
            return InputRequired({"ok": elicit_form("Sure?", {"sure": {"type": "boolean"}})}, state={"step": 1})
        return "done"

    first = call(server, "tools/call", {"name": "confirm", "arguments": {}})
    retry = {
        "name": "confirm",
        "arguments": {},
        "requestState": first["requestState"],
        "inputResponses": {"ok": {"action": "accept", "content": {"sure": True}}},
    }
    with pytest.raises(MCPError, match="requestState refused: it has expired") as caught:
        call(server, "tools/call", retry)
    assert caught.value.code == INVALID_PARAMS
    assert ran == ["round"]


def test_state_key_from_the_environment_is_shared_by_instances(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_STATE_KEY", "shared-secret")
    token = StateSealer().seal(1, method="m", digest="d", principal=None)
    assert StateSealer().open(token, method="m", digest="d", principal=None) == 1


def test_a_state_payload_holds_its_bindings_then_the_state() -> None:
    """The layout docs/internals/primitives-and-mrtr.md shows: i, m, d, p, exp, then s."""
    sealer = StateSealer(b"a" * 32, ttl_seconds=30)
    assert sealer.ttl_seconds == 30 and StateSealer(b"a" * 32).ttl_seconds == 600
    token = sealer.seal(1, method="tools/call", digest="d", principal="alice", now=1000)
    payload = json.loads(b64url_decode(token.split(".")[0]))
    assert payload == {"i": "", "m": "tools/call", "d": "d", "p": "alice", "exp": 1030, "s": 1}
    assert list(payload) == ["i", "m", "d", "p", "exp", "s"]


def test_a_state_is_a_token_sealed_for_the_purpose_request_state() -> None:
    """The purpose is part of the format: any sealer for "requestState" with the deployment key
    opens it (another version, another instance), a sealer for any other purpose does not."""
    token = StateSealer(b"a" * 32).seal("s", method="m", digest="d", principal=None, now=1000)
    bound = {"i": "", "m": "m", "d": "d", "p": None}
    assert Sealer("requestState", b"a" * 32).open(token, bound, now=1000)["s"] == "s"
    with pytest.raises(ValueError, match="signature"):
        Sealer("handle:requestState", b"a" * 32).open(token, bound, now=1000)


REFUSED = "Invalid params: requestState refused: "


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"token": "not-a-state"}, "it is not a requestState this server issued"),
        ({"key": b"b" * 32}, "its signature does not match (tampered, or sealed with another key)"),
        ({"issuer": "tides"}, "it was issued by another server"),
        ({"method": "prompts/get"}, "it was issued for a different request"),
        ({"digest": "other"}, "it was issued for a different request"),
        ({"principal": "bob"}, "it was issued to a different principal"),
        ({"principal": None}, "it was issued to a different principal"),
        ({"now": 2000}, "it has expired; start the request again without it"),
        ({"issuer": "tides", "principal": "bob", "now": 2000}, "it was issued by another server"),
        ({"digest": "other", "principal": "bob"}, "it was issued for a different request"),
    ],
)
def test_each_refusal_says_why(change: dict[str, Any], reason: str) -> None:
    """The reasons the errors page and the debugging tables quote, checked in the order given."""
    bound: dict[str, Any] = {"method": "tools/call", "digest": "d", "principal": "alice", "issuer": "desk"}
    token = StateSealer(b"a" * 32, ttl_seconds=10).seal("s", **bound, now=1000)
    opener = StateSealer(change.get("key", b"a" * 32))
    token = change.get("token", token)
    reopened = {name: value for name, value in change.items() if name not in ("key", "token")}
    with pytest.raises(MCPError) as caught:
        opener.open(token, **{**bound, "now": 1005, **reopened})
    assert (caught.value.code, caught.value.message) == (INVALID_PARAMS, REFUSED + reason)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_the_issuer_is_empty_unless_named() -> None:
    sealer = StateSealer(b"a" * 32)
    token = sealer.seal(1, method="m", digest="d", principal=None)
    assert sealer.open(token, method="m", digest="d", principal=None, issuer="") == 1
    named = sealer.seal(1, method="m", digest="d", principal=None, issuer="desk")
    with pytest.raises(MCPError, match="another server"):
        sealer.open(named, method="m", digest="d", principal=None)


def test_a_cursor_is_no_request_state_nor_a_handle() -> None:
    """Purposes never mix: a list cursor, or a token sealed for another purpose, is refused."""
    cursor = paginate(list(range(5)), None, 2, "tools/list")[1]
    handle = Sealer("handle:draft", b"a" * 32).seal({"c": 1, "exp": 2000})
    for token, reason in ((cursor, "it is not a requestState"), (handle, "its signature does not match")):
        with pytest.raises(MCPError, match=reason):
            StateSealer(b"a" * 32).open(token, method="tools/call", digest="d", principal=None, now=1000)


@pytest.mark.parametrize("responses", [None, [], "x", {"user_name": 12345}, {"a": None}])
def test_malformed_input_responses_are_invalid_params(responses: Any) -> None:
    with pytest.raises(MCPError) as caught:
        read_input_responses({"inputResponses": responses})
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message == "Invalid params: inputResponses must be an object of result objects"


@pytest.mark.parametrize("method", ["tools/list", "server/discover", "prompts/list"])
def test_other_methods_refuse_mrtr_params(server: Server, method: str) -> None:
    with pytest.raises(MCPError) as caught:
        call(server, method, {"inputResponses": {}})
    assert caught.value.code == INVALID_PARAMS


def test_the_digest_ignores_what_changes_between_rounds() -> None:
    base = {"name": "t", "arguments": {"a": 1}}
    assert params_digest("tools/call", base) == params_digest(
        "tools/call", {**base, "_meta": {}, "inputResponses": {"k": {}}, "requestState": "s"}
    )
    assert params_digest("tools/call", base) != params_digest("tools/call", {"name": "t", "arguments": {"a": 2}})


def test_the_digest_is_of_the_request_as_the_mrtr_page_shows_it() -> None:
    """A known answer (docs/internals/primitives-and-mrtr.md): canonical JSON of method and params,
    keys sorted, no spaces, so every instance and version digests a retry the same way."""
    params = {"name": "schedule_visit", "arguments": {"station": "oslo"}}
    digest = "6388aa73dca22e2d6c3417a2406ae46eed24f833e4a8f3cdd6e326cdb3acf559"
    assert params_digest("tools/call", params) == digest
    assert params_digest("tools/call", {"arguments": {"station": "oslo"}, "name": "schedule_visit"}) == digest
    assert params_digest("prompts/get", params) != digest


def test_only_input_requests_need_a_capability_and_a_bare_elicitation_is_a_form() -> None:
    with pytest.raises(ValueError) as caught:
        required_capability({"method": "tools/call"})
    assert str(caught.value) == "not an input request method: 'tools/call'"
    assert required_capability({"method": "elicitation/create"}) == {"elicitation": {}}  # no params: form mode


def test_required_capabilities_per_input_request() -> None:
    assert required_capability(elicit_form("m", {})) == {"elicitation": {}}
    assert required_capability(elicit_url("m", "https://example.com/login")) == {"elicitation": {"url": {}}}
    assert required_capability(create_message("hi")) == {"sampling": {}}
    assert required_capability(list_roots()) == {"roots": {}}


WEATHER_TOOL = {"name": "lookup", "inputSchema": {"type": "object"}}


def test_tool_enabled_sampling_needs_sampling_tools() -> None:
    """client/sampling.mdx §Tools in Sampling: servers MUST NOT send tool-enabled sampling requests
    to clients that did not declare `sampling.tools`; `includeContext` beyond "none" wants
    `sampling.context` (SHOULD NOT otherwise)."""
    assert required_capability(create_message("hi", tools=[WEATHER_TOOL])) == {"sampling": {"tools": {}}}
    with_context = {"method": "sampling/createMessage", "params": {"messages": [], "includeContext": "thisServer"}}
    assert required_capability(with_context) == {"sampling": {"context": {}}}
    plain = {"method": "sampling/createMessage", "params": {"messages": [], "includeContext": "none"}}
    assert required_capability(plain) == {"sampling": {}}
    choice_only = {"method": "sampling/createMessage", "params": {"messages": [], "toolChoice": {"mode": "none"}}}
    assert required_capability(choice_only) == {"sampling": {"tools": {}}}

    server = Server("t", "1")

    @server.tool()
    def agent() -> InputRequired:
        return InputRequired(
            {"answer": create_message("Look it up", tools=[WEATHER_TOOL], tool_choice={"mode": "auto"})}
        )

    with pytest.raises(MCPError) as caught:
        call(server, "tools/call", {"name": "agent", "arguments": {}}, caps={"sampling": {}})
    assert caught.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert caught.value.data == {"requiredCapabilities": {"sampling": {"tools": {}}}}
    asked = call(server, "tools/call", {"name": "agent", "arguments": {}}, caps={"sampling": {"tools": {}}})
    assert asked["inputRequests"]["answer"]["params"]["tools"] == [WEATHER_TOOL]
    assert asked["inputRequests"]["answer"]["params"]["toolChoice"] == {"mode": "auto"}


def asked(*requests: dict[str, Any]) -> None:
    """Check input requests the way a client receives them: inside an input_required result."""
    result = {"resultType": "input_required", "inputRequests": {str(i): r for i, r in enumerate(requests)}}
    check_message({"jsonrpc": "2.0", "id": 1, "result": result}, "tools/call")


def test_every_elicitation_says_its_mode_and_why_it_asks() -> None:
    for request in (elicit_form("Your name?", {}), elicit_url("Sign in", "https://example.com/login")):
        assert request["method"] == "elicitation/create"
        assert request["params"]["mode"] in ("form", "url") and request["params"]["message"]
        asked(request)


def test_a_form_elicitation_is_form_mode_with_a_flat_object_schema() -> None:
    form = elicit_form("Your name?", {"name": {"type": "string"}}, ["name"])
    assert form["params"] == {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    }
    asked(form)


def test_a_url_elicitation_is_url_mode_with_the_url() -> None:
    link = elicit_url("Sign in", "https://example.com/login")
    assert link["params"] == {"mode": "url", "message": "Sign in", "url": "https://example.com/login"}
    asked(link)


def test_a_sampling_request_leaves_include_context_and_tools_out() -> None:
    # The deprecated includeContext values need sampling.context, tools need sampling.tools (client/sampling.mdx).
    sample = create_message("hi", 50, system_prompt="Be brief.")
    assert "includeContext" not in sample["params"] and "tools" not in sample["params"]


def test_a_sampling_request_asks_for_256_tokens_unless_told_and_carries_its_system_prompt() -> None:
    assert create_message("hi", system_prompt="Be brief.")["params"] == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 256,
        "systemPrompt": "Be brief.",
    }


def test_sampling_messages_have_a_role_and_content() -> None:
    sample = create_message("hi", 50)
    assert sample["params"]["messages"] == [{"role": "user", "content": {"type": "text", "text": "hi"}}]
    assert sample["params"]["maxTokens"] == 50
    asked(sample)


def test_an_answer_counts_only_for_the_principal_that_was_asked(server: Server) -> None:
    first = call(server, "tools/call", {"name": "delete", "arguments": {"path": "x"}}, principal="alice")
    retry = {
        "name": "delete",
        "arguments": {"path": "x"},
        "requestState": first["requestState"],
        "inputResponses": {"confirm": {"action": "accept", "content": {"sure": True}}},
    }
    with pytest.raises(MCPError, match="different principal"):
        call(server, "tools/call", retry, principal="mallory")
    assert call(server, "tools/call", retry, principal="alice")["content"][0]["text"] == "deleted x"


@pytest.mark.parametrize("url", ["", "/login", "example.com/login", "https://"])
def test_a_url_elicitation_needs_an_absolute_url(url: str) -> None:
    with pytest.raises(ValueError, match="absolute URL"):
        elicit_url("Sign in", url)


def test_one_refusal_names_every_capability_the_input_requests_need() -> None:
    server = Server("t", "1")

    @server.tool()
    def briefing() -> InputRequired:
        """Needs the client's model and its roots in one round."""
        return InputRequired({"text": create_message("Say hi"), "where": list_roots()})

    with pytest.raises(MCPError) as caught:
        call(server, "tools/call", {"name": "briefing", "arguments": {}}, caps={"roots": {}})
    assert caught.value.data == {"requiredCapabilities": {"sampling": {}}}
    with pytest.raises(MCPError) as caught:
        call(server, "tools/call", {"name": "briefing", "arguments": {}}, caps={})
    assert caught.value.data == {"requiredCapabilities": {"sampling": {}, "roots": {}}}


def test_a_form_goes_only_to_clients_that_declare_form_mode() -> None:
    server = Server("t", "1")

    @server.tool()
    def confirm() -> InputRequired:
        """Asks the user a yes/no question in a form."""
        return InputRequired({"ok": elicit_form("Sure?", {"ok": {"type": "boolean"}})})

    # `elicitation: {}` is form mode (client/elicitation.mdx §Capabilities); url alone is not.
    for declared in ({"elicitation": {}}, {"elicitation": {"form": {}}}, {"elicitation": {"form": {}, "url": {}}}):
        assert call(server, "tools/call", {"name": "confirm", "arguments": {}}, caps=declared)["inputRequests"]
    with pytest.raises(MCPError) as caught:
        call(server, "tools/call", {"name": "confirm", "arguments": {}}, caps={"elicitation": {"url": {}}})
    # Reported as the spec's own example reports a form requirement.
    assert caught.value.data == {"requiredCapabilities": {"elicitation": {}}}

    # Both modes in one round: a client with only one of them is told which one it lacks.
    @server.tool()
    def sign_in_and_confirm() -> InputRequired:
        """A form and a URL in the same round."""
        return InputRequired(
            {"ok": elicit_form("Sure?", {"ok": {"type": "boolean"}}), "go": elicit_url("Go", "https://example.com/x")}
        )

    with pytest.raises(MCPError) as caught:
        call(server, "tools/call", {"name": "sign_in_and_confirm", "arguments": {}}, caps={"elicitation": {"url": {}}})
    assert caught.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    with pytest.raises(MCPError) as caught:
        call(server, "tools/call", {"name": "sign_in_and_confirm", "arguments": {}}, caps={"elicitation": {}})
    assert caught.value.data == {"requiredCapabilities": {"elicitation": {"url": {}}}}


def test_an_input_required_result_says_its_result_type(server: Server) -> None:
    asked = call(server, "tools/call", {"name": "survey"})
    assert asked["resultType"] == "input_required"


def test_an_input_required_result_asks_for_something_or_carries_state() -> None:
    server = Server("t", "1")

    @server.tool()
    def empty() -> InputRequired:
        return InputRequired({})  # neither inputRequests nor requestState: a bug in the tool

    @server.tool()
    def odd() -> InputRequired:
        return InputRequired({"x": {"method": "tasks/get"}})  # not an input request method

    for name in ("empty", "odd"):  # never sent as such, and never an unhandled exception (an HTTP 500)
        with pytest.raises(MCPError) as caught:
            call(server, "tools/call", {"name": name, "arguments": {}})
        assert caught.value.code == -32603


def test_an_elicitation_state_is_sealed_for_its_user(server: Server) -> None:
    asked = call(server, "tools/call", {"name": "delete", "arguments": {"path": "/a"}}, principal="alice")
    state = asked["requestState"]
    answer = {"confirm": {"action": "accept", "content": {"sure": True}}}
    retry = {"name": "delete", "arguments": {"path": "/a"}, "inputResponses": answer}
    for forged, principal in ((state, "bob"), (state[::-1], "alice"), (state[:-1], "alice")):
        with pytest.raises(MCPError, match="requestState refused"):
            call(server, "tools/call", {**retry, "requestState": forged}, principal=principal)
    done = call(server, "tools/call", {**retry, "requestState": state}, principal="alice")
    assert done["content"][0]["text"] == "deleted /a"


def test_a_resource_read_may_ask_for_input(server: Server) -> None:
    asked = call(server, "resources/read", {"uri": "summary://today"})
    assert asked["inputRequests"]["llm"]["method"] == "sampling/createMessage"


def test_a_prompt_may_ask_for_input(server: Server) -> None:
    asked = call(server, "prompts/get", {"name": "grounded"})
    assert asked["resultType"] == "input_required" and asked["inputRequests"] == {"roots": {"method": "roots/list"}}
