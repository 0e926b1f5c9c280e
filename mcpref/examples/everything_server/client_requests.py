"""The tools the 2025-11-25 suite calls that, in that era, sent the client a request mid-call.

`tools-call-sampling`, `tools-call-elicitation`, `elicitation-sep1034-defaults` and
`elicitation-sep1330-enums` call these by name. In 2025-11-25 the server sent
`sampling/createMessage` or `elicitation/create` on the call's SSE stream and waited for the
client to POST the answer back. Here they ask the 2026-07-28 way, with `InputRequired`:

- a 2026-07-28 client gets an `input_required` result and retries with its answer;
- a legacy client gets an `isError` result saying that it cannot be asked (`mcpref.legacy`):
  a stateless server has nowhere to wait for an answer that arrives on another request.

So those four scenarios fail for that reason, and not for a missing tool.
"""

from __future__ import annotations

from typing import Any

from mcpref import InputRequired, RequestContext, Server, create_message, elicit_form

#: The form `elicitation-sep1034-defaults` expects: a default for every primitive type.
DEFAULTS_FORM = {
    "name": {"type": "string", "description": "User name", "default": "John Doe"},
    "age": {"type": "integer", "description": "User age", "default": 30},
    "score": {"type": "number", "description": "User score", "default": 95.5},
    "status": {
        "type": "string",
        "description": "User status",
        "enum": ["active", "inactive", "pending"],
        "default": "active",
    },
    "verified": {"type": "boolean", "description": "Verification status", "default": True},
}


def titled(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in pairs]


#: The form `elicitation-sep1330-enums` expects: each of the five kinds of enum.
ENUMS_FORM = {
    "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
    "titledSingle": {
        "type": "string",
        "description": "Select one option with titles",
        "oneOf": titled(("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")),
    },
    "legacyEnum": {
        "type": "string",
        "description": "Select one option (legacy)",
        "enum": ["opt1", "opt2", "opt3"],
        "enumNames": ["Option One", "Option Two", "Option Three"],
    },
    "untitledMulti": {
        "type": "array",
        "description": "Select multiple options",
        "minItems": 1,
        "maxItems": 3,
        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
    },
    "titledMulti": {
        "type": "array",
        "description": "Select multiple options with titles",
        "minItems": 1,
        "maxItems": 3,
        "items": {"anyOf": titled(("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice"))},
    },
}


def form_outcome(ctx: RequestContext, key: str, form: dict[str, Any]) -> str | InputRequired:
    """What the user did with the form asked for under `key` (`form` is an elicitation request),
    or, on the first round, the form to show them."""
    answer = ctx.input_response(key)
    if answer is None:
        return InputRequired({key: form})
    return f"Elicitation completed: action={answer.get('action')}, content={answer.get('content', {})}"


def register_client_requests(server: Server) -> None:
    @server.tool(input_schema={"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]})
    def test_sampling(prompt: str, ctx: RequestContext) -> str | InputRequired:
        """Asks the client's LLM to answer `prompt`, then returns what it said."""
        answer = ctx.input_response("completion")
        if answer is None:
            return InputRequired({"completion": create_message(prompt, 100)})
        return f"LLM response: {(answer.get('content') or {}).get('text')}"

    @server.tool(
        input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
    )
    def test_elicitation(message: str, ctx: RequestContext) -> str | InputRequired:
        """Shows the user `message` with a form for a username and an email address."""
        fields = {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        }
        return form_outcome(ctx, "user_info", elicit_form(message, fields, ["username", "email"]))

    @server.tool(input_schema={"type": "object", "properties": {}})
    def test_elicitation_sep1034_defaults(ctx: RequestContext) -> str | InputRequired:
        """Asks for a form whose every field has a default value (SEP-1034)."""
        return form_outcome(ctx, "defaults", elicit_form("Please review and update the form fields", DEFAULTS_FORM))

    @server.tool(input_schema={"type": "object", "properties": {}})
    def test_elicitation_sep1330_enums(ctx: RequestContext) -> str | InputRequired:
        """Asks for a form with each kind of enum: titled or not, single or multiple (SEP-1330)."""
        return form_outcome(ctx, "choices", elicit_form("Please select options from the enum fields", ENUMS_FORM))
