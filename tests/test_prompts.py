"""Prompts on their own: arguments from the signature, the checks before a prompt runs, results.

The dispatcher's side of `prompts/list` and `prompts/get` is in test_server.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpref import MCPError
from mcpref.jsonrpc import INVALID_PARAMS
from mcpref.prompts import Prompt, PromptRegistry, user_message

#: Stands in for the request context: these prompts only pass it on.
CTX: Any = object()


def get(prompt: Prompt, arguments: Any) -> Any:
    return asyncio.run(prompt.get(arguments, CTX))


def refusal(prompt: Prompt, arguments: Any) -> tuple[int, str]:
    with pytest.raises(MCPError) as caught:
        get(prompt, arguments)
    return caught.value.code, caught.value.message


def test_a_prompt_that_takes_ctx_gets_the_context_and_ctx_is_no_argument() -> None:
    seen = []

    def greet(name: str, ctx: Any) -> str:
        seen.append(ctx)
        return f"Hello {name}"

    prompt = Prompt("greet", greet, title="Greet")
    assert prompt.definition() == {
        "name": "greet",
        "title": "Greet",
        "arguments": [{"name": "name", "required": True}],
    }
    assert get(prompt, {"name": "Ada"}) == {"messages": [user_message("Hello Ada")]}
    assert seen == [CTX]


def test_omitted_arguments_are_no_arguments() -> None:
    prompt = Prompt("p", lambda style="short": f"A {style} one.", description="Say one.")
    assert get(prompt, None) == {"description": "Say one.", "messages": [user_message("A short one.")]}


@pytest.mark.parametrize("arguments", [[], "topic=x", {"topic": 1}])
def test_arguments_that_are_no_object_of_strings_are_refused_in_words(arguments: Any) -> None:
    prompt = Prompt("p", lambda topic="": "")
    assert refusal(prompt, arguments) == (
        INVALID_PARAMS,
        "Invalid params: prompt arguments must be an object of strings",
    )


def test_every_unknown_and_every_missing_argument_is_named() -> None:
    prompt = Prompt("p", lambda a, b, c="": "")
    assert refusal(prompt, {"a": "1", "z": "", "y": ""}) == (
        INVALID_PARAMS,
        "Invalid params: unknown argument(s) for prompt 'p': y, z",
    )
    assert refusal(prompt, {"c": ""}) == (INVALID_PARAMS, "Invalid params: prompt 'p' needs argument(s): a, b")


def test_a_list_of_messages_is_taken_as_it_is() -> None:
    messages = [user_message("one"), {"role": "assistant", "content": {"type": "text", "text": "two"}}]
    assert get(Prompt("p", lambda: messages, description="d"), {}) == {"description": "d", "messages": messages}


def test_a_return_that_is_no_prompt_result_is_named() -> None:
    with pytest.raises(TypeError) as caught:
        get(Prompt("p", lambda: 42), {})
    assert str(caught.value) == "a prompt returns str, a list of messages, or a GetPromptResult dict"


def test_an_unknown_prompt_is_named_as_a_prompt() -> None:
    with pytest.raises(MCPError) as caught:
        PromptRegistry().require("nope")
    assert (caught.value.code, caught.value.message) == (INVALID_PARAMS, "Unknown prompt: nope")


def test_a_prompt_may_ask_for_input_and_its_request_is_passed_on_as_it_is() -> None:
    from mcpref import InputRequired, elicit_form

    asked = InputRequired({"who": elicit_form("Whose prompt?", {"type": "object", "properties": {}})})
    assert get(Prompt("p", lambda: asked), {}) is asked


@pytest.mark.parametrize(
    "returned",
    [
        [{"role": "user"}],
        [{"content": {"type": "text", "text": "hi"}}],
        [user_message("ok"), {"role": "user"}],
        {"description": "no messages"},
        {"messages": "hi"},
    ],
)
def test_every_message_needs_a_role_and_content_and_a_result_needs_a_list_of_them(returned: Any) -> None:
    with pytest.raises(TypeError) as caught:
        get(Prompt("p", lambda: returned), {})
    assert str(caught.value) == "a prompt returns str, a list of messages, or a GetPromptResult dict"
