"""Resources on their own: definitions, template matching, contents, and what is not found.

The dispatcher's side of `resources/list`, `resources/templates/list` and `resources/read` is in
test_server.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpref import MCPError
from mcpref.context import RequestContext
from mcpref.jsonrpc import INVALID_PARAMS
from mcpref.meta import RequestMeta
from mcpref.resources import Resource, ResourceNotFound, ResourceRegistry, ResourceTemplate, contents


def context(principal: str | None = None) -> RequestContext:
    return RequestContext(1, "resources/read", {}, RequestMeta("2026-07-28", {}), principal=principal)


def read(registry: ResourceRegistry, uri: Any, principal: str | None = None) -> Any:
    return asyncio.run(registry.read(uri, context(principal)))


def test_a_definition_leaves_out_what_is_unset() -> None:
    assert Resource("a://x", "x", lambda: "").definition() == {"uri": "a://x", "name": "x"}
    full = Resource("a://x", "x", lambda: "", title="X", description="An x.", mime_type="text/plain")
    assert full.definition() == {
        "uri": "a://x",
        "name": "x",
        "title": "X",
        "description": "An x.",
        "mimeType": "text/plain",
    }
    template = ResourceTemplate("a://{x}", "xs", lambda x: "", title="Xs", description="Any x.", mime_type="text/csv")
    assert template.definition() == {
        "uriTemplate": "a://{x}",
        "name": "xs",
        "title": "Xs",
        "description": "Any x.",
        "mimeType": "text/csv",
    }


def test_a_simple_variable_is_one_segment_and_a_reserved_one_spans_slashes() -> None:
    template = ResourceTemplate("files://{root}/{+path}", "f", lambda root, path: "")
    assert template.match("files://home/a/b.txt") == {"root": "home", "path": "a/b.txt"}
    assert ResourceTemplate("files://{root}/{name}", "f", lambda root, name: "").match("files://home/a/b") is None


def test_the_literal_parts_of_a_template_match_only_themselves() -> None:
    template = ResourceTemplate("a.b://x+{n}?", "t", lambda n: "")
    assert template.match("a.b://x+1?") == {"n": "1"}
    assert template.match("aXb://x+1?") is None and template.match("a.b://xx1") is None


@pytest.mark.parametrize("value", [".", "..", "a/..", "../a", "a/./b"])
def test_a_dot_segment_anywhere_in_a_value_never_matches(value: str) -> None:
    assert ResourceTemplate("files://{+path}", "f", lambda path: "").match(f"files://{value}") is None


def test_dots_inside_a_segment_are_a_name() -> None:
    template = ResourceTemplate("files://{+path}", "f", lambda path: "")
    assert template.match("files://a/..b/.c/d..") == {"path": "a/..b/.c/d.."}


def test_contents_are_text_or_a_blob_with_the_mime_type_when_known() -> None:
    assert contents("a://x", "hi", None) == [{"uri": "a://x", "text": "hi"}]
    assert contents("a://x", b"\x00\xff", "application/octet-stream") == [
        {"uri": "a://x", "mimeType": "application/octet-stream", "blob": "AP8="}
    ]
    ready = [{"uri": "a://x/1", "text": "1"}]
    assert contents("a://x", ready, "text/plain") is ready


def test_a_return_that_is_no_contents_is_named() -> None:
    with pytest.raises(TypeError) as caught:
        contents("a://x", 42, None)
    assert str(caught.value) == "resource 'a://x' handler returned int; return str, bytes or a list"


def test_a_bad_uri_is_named_with_the_rule() -> None:
    with pytest.raises(ValueError) as caught:
        Resource("no-scheme", "x", lambda: "")
    assert str(caught.value) == "resource URI 'no-scheme' must start with an RFC 3986 scheme, such as file: or notes:"


@pytest.mark.parametrize(("length", "echoed"), [(2048, True), (2049, False)])
def test_not_found_names_the_uri_in_data_unless_it_is_too_long(length: int, echoed: bool) -> None:
    uri = "a://" + "x" * (length - 4)
    error = ResourceNotFound(uri)
    assert (error.code, error.uri) == (INVALID_PARAMS, uri) and error.message.startswith("Resource not found: a://x")
    assert error.data == ({"uri": uri} if echoed else None)


def test_handlers_that_take_ctx_get_the_request_context() -> None:
    registry = ResourceRegistry()
    registry.add(Resource("a://who", "who", lambda ctx: f"{ctx.principal}"))
    registry.add_template(ResourceTemplate("a://{x}/who", "t", lambda x, ctx: f"{x} {ctx.principal}"))
    assert read(registry, "a://who", "alice") == [{"uri": "a://who", "text": "alice"}]
    assert read(registry, "a://1/who", "bob") == [{"uri": "a://1/who", "text": "1 bob"}]


def test_an_exact_uri_wins_and_templates_are_tried_in_order() -> None:
    registry = ResourceRegistry()
    registry.add_template(ResourceTemplate("a://{x}", "first", lambda x: f"first {x}"))
    registry.add_template(ResourceTemplate("a://{y}", "second", lambda y: f"second {y}"))
    registry.add(Resource("a://exact", "exact", lambda: "exact"))
    assert read(registry, "a://exact")[0]["text"] == "exact"
    assert read(registry, "a://other")[0]["text"] == "first other"


def test_a_hidden_resource_is_not_found_for_others() -> None:
    registry = ResourceRegistry()
    registry.add(Resource("a://secret", "s", lambda: "s", visible=lambda principal: principal == "alice"))
    assert read(registry, "a://secret", "alice") == [{"uri": "a://secret", "text": "s"}]
    with pytest.raises(ResourceNotFound):
        read(registry, "a://secret", "bob")


def test_who_hears_of_a_uri_is_who_may_see_what_serves_it() -> None:
    def only_alice(principal: str | None) -> bool:
        return principal == "alice"

    registry = ResourceRegistry()
    registry.add(Resource("a://open", "o", lambda: ""))
    registry.add(Resource("a://secret", "s", lambda: "", visible=only_alice))
    registry.add_template(ResourceTemplate("a://{x}", "any", lambda x: ""))
    registry.add_template(ResourceTemplate("v://{x}", "vault", lambda x: "", visible=only_alice))
    # Everyone: no predicate to ask. An open resource, a URI an open template serves, or nothing serves.
    assert registry.audience_of("a://open") is registry.audience_of("a://other") is registry.audience_of("z://")
    assert registry.audience_of("z://") is None
    # A hidden resource stays hidden although the open template would serve its URI.
    for uri in ("a://secret", "v://k"):
        audience = registry.audience_of(uri)
        assert audience is not None and audience("alice") and not audience("bob") and not audience(None)


def test_a_hidden_template_is_skipped_by_reads_and_lookups() -> None:
    registry = ResourceRegistry()
    registry.add_template(ResourceTemplate("a://{x}", "alices", lambda x: f"alice {x}", visible=lambda p: p == "alice"))
    registry.add_template(ResourceTemplate("a://{y}", "anyones", lambda y: f"anyone {y}"))
    assert read(registry, "a://k", "alice")[0]["text"] == "alice k"
    assert read(registry, "a://k", "bob")[0]["text"] == "anyone k"
    assert registry.template_named("a://{x}", "alice") is not None and registry.template_named("a://{x}", "bob") is None
    assert [t.name for t in registry.templates_visible_to("bob")[0]] == ["anyones"]


def test_a_uri_that_is_no_string_is_refused_in_words() -> None:
    with pytest.raises(MCPError) as caught:
        read(ResourceRegistry(), 7)
    assert (caught.value.code, caught.value.message) == (INVALID_PARAMS, "Invalid params: uri must be a string")


def test_templates_count_are_announced_and_found_by_their_template() -> None:
    registry = ResourceRegistry()
    changes: list[int] = []
    registry.on_change = lambda: changes.append(len(registry))
    registry.add(Resource("a://x", "x", lambda: ""))
    template = registry.add_template(ResourceTemplate("a://{x}/y", "t", lambda x: ""))
    assert changes == [1, 2] and len(registry) == 2
    assert registry.template_named("a://{x}/y") is template and registry.template_named("a://x") is None
    assert dict(registry.resources) == {"a://x": registry.get("a://x")}


def test_an_unknown_resource_is_named_as_a_resource() -> None:
    with pytest.raises(MCPError) as caught:
        ResourceRegistry().require("a://nope")
    assert (caught.value.code, caught.value.message) == (INVALID_PARAMS, "Unknown resource: a://nope")


def test_a_variable_name_may_hold_capitals_digits_and_underscores() -> None:
    template = ResourceTemplate("a://{fileName}/{v_2}", "t", lambda fileName, v_2: "")  # noqa: N803
    assert template.match("a://Report/x") == {"fileName": "Report", "v_2": "x"}


def test_a_templates_list_depends_on_who_asks_only_while_a_template_is_hidden() -> None:
    """With every template open, the list is the same for everyone (public); one hidden template
    makes it per caller (private), and the caller sees only what it may."""
    registry = ResourceRegistry()
    registry.add_template(ResourceTemplate("a://{x}", "a", lambda x: ""))
    registry.add_template(ResourceTemplate("b://{x}", "b", lambda x: ""))
    everyone, depends = registry.templates_visible_to(None)
    assert ([t.name for t in everyone], depends) == (["a", "b"], False)
    registry.add_template(ResourceTemplate("c://{x}", "c", lambda x: "", visible=lambda who: who == "alice"))
    anyone, depends = registry.templates_visible_to("bob")
    assert ([t.name for t in anyone], depends) == (["a", "b"], True)
    assert [t.name for t in registry.templates_visible_to("alice")[0]] == ["a", "b", "c"]


def test_a_blob_is_standard_base64_and_a_bad_list_is_named() -> None:
    assert contents("r://x", b"\xfb\xff", None) == [{"uri": "r://x", "blob": "+/8="}]
    with pytest.raises(TypeError) as caught:
        contents("r://x", [1], None)
    assert str(caught.value) == (
        "resource 'r://x' handler returned a list that is not contents (each a uri and a text or blob)"
    )
