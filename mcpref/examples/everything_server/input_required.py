"""The everything server's multi round-trip fixtures: tools and a prompt that ask the client for input.

A 2026-07-28 server never sends a request of its own. A handler that needs something from the
client (a form the user fills in, an LLM completion, the client's roots) returns
`InputRequired({key: input request}, state=...)`; the client answers each key and sends the
same request again. On that retry the handler sees

- `ctx.input_response(key)`: the client's answer to `key`, or None;
- `ctx.state`: the value it passed as `state`, back from the client and verified by the core
  (a `requestState` that was tampered with is refused before the handler runs), or None.

So every handler below reads as: "if I have what I need, finish; otherwise ask for it".
"""

from __future__ import annotations

from typing import Any

from mcpref import InputRequired, RequestContext, Server, create_message, elicit_form, list_roots

NO_ARGUMENTS = {"type": "object", "properties": {}}


def accepted(ctx: RequestContext, key: str) -> dict[str, Any] | None:
    """The form content the user submitted for `key`, or None if they did not (yet)."""
    answer = ctx.input_response(key) or {}
    content = answer.get("content")
    return content if answer.get("action") == "accept" and isinstance(content, dict) else None


def sampled_text(ctx: RequestContext, key: str) -> str | None:
    """The text the client's LLM produced for `key`, or None."""
    content = (ctx.input_response(key) or {}).get("content")
    return content.get("text") if isinstance(content, dict) else None


def ask_name(message: str = "What is your name?") -> dict[str, Any]:
    return elicit_form(message, {"name": {"type": "string"}}, required=["name"])


def ask_confirmation() -> dict[str, Any]:
    return elicit_form("Please confirm", {"ok": {"type": "boolean"}}, required=["ok"])


def register_input_required(server: Server) -> None:
    @server.tool(input_schema=NO_ARGUMENTS)
    def test_input_required_result_elicitation(ctx: RequestContext) -> str | InputRequired:
        """Asks the user for their name with a form, then greets them."""
        # No state is needed: the answer alone is enough, whichever round it arrives in.
        name = (accepted(ctx, "user_name") or {}).get("name")
        return f"Hello, {name}!" if isinstance(name, str) else InputRequired({"user_name": ask_name()})

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_input_required_result_sampling(ctx: RequestContext) -> str | InputRequired:
        """Asks the client's LLM a question, then reports the answer."""
        answer = sampled_text(ctx, "capital_question")
        if answer is None:
            return InputRequired({"capital_question": create_message("What is the capital of France?", 100)})
        return f"Sampling result: {answer}"

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_input_required_result_list_roots(ctx: RequestContext) -> str | InputRequired:
        """Asks for the client's roots, then counts them."""
        roots = (ctx.input_response("client_roots") or {}).get("roots")
        if isinstance(roots, list):
            return f"Found {len(roots)} root(s)"
        return InputRequired({"client_roots": list_roots()})

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_input_required_result_request_state(ctx: RequestContext) -> str | InputRequired:
        """Asks for a confirmation and carries state across the round trip in requestState."""
        answer = accepted(ctx, "confirm")
        if ctx.state != {"asked": "confirm"} or answer is None or answer.get("ok") is not True:
            return InputRequired({"confirm": ask_confirmation()}, state={"asked": "confirm"})
        return "state-ok: requestState validated"

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_input_required_result_multiple_inputs(ctx: RequestContext) -> str | InputRequired:
        """Asks for a form, an LLM completion and the roots at once."""
        name, greeting = accepted(ctx, "user_name"), sampled_text(ctx, "greeting")
        roots = ctx.input_response("client_roots")
        if ctx.state is None or name is None or greeting is None or roots is None:
            requests = {
                "user_name": ask_name(),
                "greeting": create_message("Generate a greeting", 50),
                "client_roots": list_roots(),
            }
            return InputRequired(requests, state={"asked": sorted(requests)})
        return f"Got {name.get('name')!r}, greeting {greeting!r} and {len(roots.get('roots', []))} root(s)"

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_input_required_result_multi_round(ctx: RequestContext) -> str | InputRequired:
        """Asks two questions in two rounds; the first answer travels in requestState."""
        state = ctx.state or {}
        if state.get("round") == 2 and (answer := accepted(ctx, "step2")) is not None:
            return f"Multi-round complete for {state['name']} who likes {answer.get('color')}"
        if state.get("round") == 1 and (answer := accepted(ctx, "step1")) is not None:
            color = elicit_form("Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"])
            return InputRequired({"step2": color}, state={"round": 2, "name": answer.get("name")})
        return InputRequired({"step1": ask_name("Step 1: What is your name?")}, state={"round": 1})

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_input_required_result_tampered_state(ctx: RequestContext) -> str | InputRequired:
        """Asks for a confirmation with a sealed requestState; the core refuses a tampered one."""
        answer = accepted(ctx, "confirm")
        if ctx.state != {"asked": "confirm"} or answer is None:
            return InputRequired({"confirm": ask_confirmation()}, state={"asked": "confirm"})
        return "Confirmed with an untampered requestState"

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_input_required_result_capabilities(ctx: RequestContext) -> str | InputRequired:
        """Asks only for the kinds of input the client declared it can give."""
        if ctx.input_responses:
            return f"Received {len(ctx.input_responses)} input response(s)"
        requests = {}
        if "elicitation" in ctx.client_capabilities:
            requests["elicit_input"] = elicit_form("Elicitation request", {"value": {"type": "string"}})
        if "sampling" in ctx.client_capabilities:
            requests["sample_input"] = create_message("Sample request", 50)
        if not requests:
            return "No supported capabilities declared"
        return InputRequired(requests, state={"asked": sorted(requests)})

    @server.prompt(title="Prompt Needing Input")
    def test_input_required_result_prompt(ctx: RequestContext) -> str | InputRequired:
        """A prompt that asks the user for context before it can be built."""
        answer = accepted(ctx, "user_context")
        if answer is None or not isinstance(answer.get("context"), str):
            form = elicit_form("What context should the prompt use?", {"context": {"type": "string"}}, ["context"])
            return InputRequired({"user_context": form})
        return f"Prompt with context: {answer['context']}"
