"""`completion/complete` (`mcpref.completion`): which completer answers, what it is given, the cap
on what is sent, and each malformed request refused in words. Dispatched through a `Server`, as
a client's request is."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpref import MCPError, Server
from mcpref.completion import MAX_VALUES
from mcpref.jsonrpc import INVALID_PARAMS, Request
from mcpref.validation import check_message
from tests.conftest import META

TEMPLATE = "notes://{folder}/{name}"


def complete(server: Server, params: dict[str, Any], principal: str | None = None) -> dict[str, Any]:
    request = Request(1, "completion/complete", {**params, "_meta": META})
    result = asyncio.run(server.handle(request, principal=principal))
    check_message({"jsonrpc": "2.0", "id": 1, "result": result}, "completion/complete")
    return result["completion"]  # type: ignore[no-any-return]


def prompt_ref(argument: str, value: str = "", **extra: Any) -> dict[str, Any]:
    return {"ref": {"type": "ref/prompt", "name": "essay"}, "argument": {"name": argument, "value": value}, **extra}


def refused(server: Server, params: dict[str, Any], principal: str | None = None) -> str:
    with pytest.raises(MCPError) as caught:
        complete(server, params, principal)
    assert caught.value.code == INVALID_PARAMS
    return caught.value.message


@pytest.fixture
def seen() -> list[dict[str, str]]:
    """The contexts the `style` completer was given."""
    return []


@pytest.fixture
def server(seen: list[dict[str, str]]) -> Server:
    server = Server("unit", "1")

    def style(value: str, context: dict[str, str]) -> list[str]:
        seen.append(context)
        return [s for s in ("short", "long", "lyrical") if s.startswith(value)]

    async def tone(value: str) -> list[str]:
        return [value + "!", value + "?"]

    completers = {"style": style, "tone": tone, "many": lambda value: (str(n) for n in range(150))}
    server.prompt(name="essay", complete=completers)(lambda style, tone, many: "write")
    server.resource_template(TEMPLATE, mime_type="text/plain", complete={"folder": lambda value: ["work", "home"]})(
        lambda folder, name: ""
    )
    return server


def test_a_prompt_argument_is_completed_by_its_completer_given_the_partial_value(server: Server) -> None:
    assert complete(server, prompt_ref("style", "l")) == {"values": ["long", "lyrical"], "total": 2, "hasMore": False}


def test_a_template_variable_is_completed_by_its_completer(server: Server) -> None:
    params = {"ref": {"type": "ref/resource", "uri": TEMPLATE}, "argument": {"name": "folder", "value": ""}}
    assert complete(server, params) == {"values": ["work", "home"], "total": 2, "hasMore": False}


def test_an_argument_without_a_completer_has_no_suggestions(server: Server) -> None:
    assert complete(server, prompt_ref("topic")) == {"values": [], "total": 0, "hasMore": False}


def test_an_async_completer_is_awaited(server: Server) -> None:
    assert complete(server, prompt_ref("tone", "hi"))["values"] == ["hi!", "hi?"]


def test_the_context_goes_to_a_completer_that_asks_for_it(server: Server, seen: list[dict[str, str]]) -> None:
    complete(server, prompt_ref("style", context={"arguments": {"tone": "dry"}}))
    complete(server, prompt_ref("style", context={}))
    complete(server, prompt_ref("style"))
    assert seen == [{"tone": "dry"}, {}, {}]


def test_at_most_100_values_are_sent_and_the_total_says_how_many_there_were(server: Server) -> None:
    assert MAX_VALUES == 100
    many = complete(server, prompt_ref("many"))
    assert many["values"] == [str(n) for n in range(100)]
    assert (many["total"], many["hasMore"]) == (150, True)


@pytest.mark.parametrize(("count", "more"), [(100, False), (101, True)])
def test_has_more_means_more_than_were_sent(count: int, more: bool) -> None:
    server = Server("unit", "1")
    server.prompt(name="n", complete={"n": lambda value: [str(i) for i in range(count)]})(lambda n: n)
    params = {"ref": {"type": "ref/prompt", "name": "n"}, "argument": {"name": "n", "value": ""}}
    result = complete(server, params)
    assert (len(result["values"]), result["total"], result["hasMore"]) == (100, count, more)


def test_a_prompt_hidden_from_the_caller_cannot_be_completed() -> None:
    server = Server("unit", "1")
    complete_n = {"n": lambda value: ["1"]}
    server.prompt(name="n", complete=complete_n, visible=lambda principal: principal == "alice")(lambda n: n)
    params = {"ref": {"type": "ref/prompt", "name": "n"}, "argument": {"name": "n", "value": ""}}
    assert complete(server, params, principal="alice")["values"] == ["1"]
    assert refused(server, params, principal="bob") == "Unknown prompt: n"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"argument": {"name": "a", "value": ""}},
            "Invalid params: completion/complete needs `ref` and `argument` objects",
        ),
        (
            {"ref": {"type": "ref/prompt", "name": "essay"}},
            "Invalid params: completion/complete needs `ref` and `argument` objects",
        ),
        (
            {"ref": "essay", "argument": {"name": "a", "value": ""}},
            "Invalid params: completion/complete needs `ref` and `argument` objects",
        ),
        (
            prompt_ref("style") | {"argument": {"name": 1, "value": ""}},
            "Invalid params: argument.name and argument.value must be strings",
        ),
        (
            prompt_ref("style") | {"argument": {"name": "style", "value": 1}},
            "Invalid params: argument.name and argument.value must be strings",
        ),
        (
            prompt_ref("style") | {"argument": {"name": "style"}},
            "Invalid params: argument.name and argument.value must be strings",
        ),
        (
            {"ref": {"type": "ref/resource", "uri": "x://{y}"}, "argument": {"name": "y", "value": ""}},
            "Invalid params: no resource template 'x://{y}'",
        ),
        (
            {"ref": {"type": "ref/other"}, "argument": {"name": "a", "value": ""}},
            "Invalid params: unknown ref type 'ref/other'",
        ),
        (
            {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}},
            "Unknown prompt: nope",
        ),
    ],
)
def test_a_malformed_request_is_refused_in_words(server: Server, params: dict[str, Any], message: str) -> None:
    assert refused(server, params) == message


@pytest.mark.parametrize(
    "context", [[], "tone=dry", {"arguments": []}, {"arguments": {"tone": 1}}, {"arguments": None}]
)
def test_a_context_that_is_no_object_of_strings_is_refused(server: Server, context: Any) -> None:
    assert refused(server, prompt_ref("style", context=context)) == (
        "Invalid params: context must be an object whose arguments map names to strings"
    )


def test_a_hidden_templates_variables_complete_only_for_those_who_may_see_it() -> None:
    server = Server("t", "1")

    @server.resource_template(
        "vault://{key}", complete={"key": lambda value: ["alpha", "beta"]}, visible=lambda who: who == "alice"
    )
    def vault(key: str) -> str:
        return key

    params = {"ref": {"type": "ref/resource", "uri": "vault://{key}"}, "argument": {"name": "key", "value": ""}}
    assert complete(server, params, "alice")["values"] == ["alpha", "beta"]
    assert refused(server, params, "bob") == "Invalid params: no resource template 'vault://{key}'"
    assert refused(server, params) == "Invalid params: no resource template 'vault://{key}'"
