"""`Server.accept`, `Server.answer`, method lookup, extensions and listen filters, called in process.

The transports' tests reach these through HTTP and a child process; these state the rules at the
dispatcher itself, so a broken rule fails here whatever the transport (and mutation testing sees them).
The order of checks is docs/reference/errors.md's: era, `_meta`, mirrored headers, version, method.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpref import CacheHints, InputRequired, MCPError, RequestContext, Server, ToolError
from mcpref.extensions import Extension
from mcpref.jsonrpc import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    Request,
)
from mcpref.meta import CLIENT_CAPABILITIES_KEY, PROGRESS_TOKEN_KEY, PROTOCOL_VERSION_KEY
from tests.conftest import META, VERSION

EXT = "com.example/watch"


class Watch(Extension):
    """An extension with a method and a listen filter key of its own."""

    id = EXT
    listen_keys = frozenset({"watchTicks", "watchAlarms"})

    def __init__(self) -> None:
        self.methods = {"com.example/watch/tick": self._tick}
        self.server: Server | None = None

    def added_to(self, server: Any) -> None:
        self.server = server

    async def _tick(self, ctx: RequestContext) -> dict[str, Any]:
        return {"ticked": True}


def headers_for(method: str, version: str = VERSION, **extra: str) -> dict[str, str]:
    return {"mcp-protocol-version": version, "mcp-method": method, **extra}


def meta(version: str = VERSION, **more: Any) -> dict[str, Any]:
    return {**META, PROTOCOL_VERSION_KEY: version, **more}


@pytest.fixture
def server() -> Server:
    server = Server("unit", "1")

    @server.tool()
    def echo(word: str = "") -> str:
        return word

    return server


def refused(call: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        call()
    return caught.value


# -- the order of checks ---------------------------------------------------------------------


def test_accept_reads_a_modern_request_once_with_its_handler(server: Server) -> None:
    request = Request(1, "tools/list", {"_meta": META})
    incoming = server.accept(request, headers=headers_for("tools/list"), principal="alice")
    assert incoming.request is request
    assert incoming.meta is not None and incoming.meta.protocol_version == VERSION
    assert incoming.principal == "alice"
    assert incoming.handler is not None
    assert (incoming.streams, incoming.listens, incoming.legacy, incoming.legacy_version) == (False, False, False, None)
    result = asyncio.run(server.answer(incoming))
    assert [tool["name"] for tool in result["tools"]] == ["echo"]


def test_a_request_without_meta_is_invalid_params_before_headers_are_judged(server: Server) -> None:
    error = refused(lambda: server.accept(Request(1, "tools/list", {}), headers={}))
    assert error.code == INVALID_PARAMS
    assert "_meta" in error.message


def test_a_header_mismatch_is_judged_before_the_version(server: Server) -> None:
    # The body names an unsupported version and the header another: -32020, not -32022.
    request = Request(1, "tools/list", {"_meta": meta("2099-01-01")})
    error = refused(lambda: server.accept(request, headers=headers_for("tools/list", version=VERSION)))
    assert error.code == HEADER_MISMATCH


def test_an_unsupported_version_is_judged_once_header_and_body_agree(server: Server) -> None:
    request = Request(1, "tools/list", {"_meta": meta("2099-01-01")})
    error = refused(lambda: server.accept(request, headers=headers_for("tools/list", version="2099-01-01")))
    assert error.code == UNSUPPORTED_PROTOCOL_VERSION
    assert error.message == "Unsupported protocol version: 2099-01-01 (this server supports 2026-07-28)"
    assert error.data == {"supported": [VERSION], "requested": "2099-01-01"}


def test_an_unsupported_version_is_refused_without_headers_too(server: Server) -> None:
    error = refused(lambda: server.accept(Request(1, "tools/list", {"_meta": meta("2099-01-01")})))
    assert error.code == UNSUPPORTED_PROTOCOL_VERSION


def test_the_version_is_judged_before_the_method(server: Server) -> None:
    request = Request(1, "no/such", {"_meta": meta("2099-01-01")})
    assert refused(lambda: server.accept(request)).code == UNSUPPORTED_PROTOCOL_VERSION


def test_an_unknown_method_is_refused_at_accept(server: Server) -> None:
    error = refused(lambda: server.accept(Request(1, "no/such", {"_meta": META}), headers=headers_for("no/such")))
    assert (error.code, error.message) == (METHOD_NOT_FOUND, "Method not found: no/such")


def test_mirrored_tool_headers_are_checked_at_accept() -> None:
    server = Server("unit", "1")

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        }
    )
    def where(region: str = "") -> str:
        return region

    params = {"name": "where", "arguments": {"region": "eu"}, "_meta": META}
    good = headers_for("tools/call", **{"mcp-name": "where", "mcp-param-region": "eu"})
    assert server.accept(Request(1, "tools/call", params), headers=good).handler is not None
    bad = {**good, "mcp-param-region": "us"}
    error = refused(lambda: server.accept(Request(1, "tools/call", params), headers=bad))
    assert error.code == HEADER_MISMATCH
    assert "Mcp-Param-Region" in error.message


def test_an_extension_method_mirrors_its_name_field_at_accept() -> None:
    class Named(Watch):
        name_fields = {"com.example/watch/tick": "clock"}

    server = Server("unit", "1")
    server.add_extension(Named())
    params = {"clock": "kitchen", "_meta": META}
    method = "com.example/watch/tick"
    assert server.accept(Request(1, method, params), headers=headers_for(method, **{"mcp-name": "kitchen"}))
    error = refused(
        lambda: server.accept(Request(1, method, params), headers=headers_for(method, **{"mcp-name": "hall"}))
    )
    assert error.code == HEADER_MISMATCH
    missing = refused(lambda: server.accept(Request(1, method, params), headers=headers_for(method)))
    assert missing.code == HEADER_MISMATCH


def test_a_request_asking_for_progress_or_logs_streams(server: Server) -> None:
    progress = Request(1, "tools/list", {"_meta": meta(**{PROGRESS_TOKEN_KEY: "p"})})
    assert server.accept(progress).streams is True
    logs = Request(1, "tools/list", {"_meta": meta(**{"io.modelcontextprotocol/logLevel": "info"})})
    assert server.accept(logs).streams is True
    assert server.accept(Request(1, "tools/list", {"_meta": META})).streams is False


def test_a_listen_request_is_accepted_as_a_stream_not_a_handler(server: Server) -> None:
    listen = Request(7, "subscriptions/listen", {"notifications": {}, "_meta": meta(**{PROGRESS_TOKEN_KEY: 1})})
    incoming = server.accept(listen, principal="bob")
    assert (incoming.listens, incoming.handler, incoming.streams, incoming.principal) == (True, None, True, "bob")
    assert incoming.meta is not None
    with pytest.raises(ValueError, match="open_subscription"):
        server.answer(incoming)


# -- the era ---------------------------------------------------------------------------------


INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}


def test_initialize_without_modern_meta_is_a_legacy_request(server: Server) -> None:
    init = Request(1, "initialize", dict(INITIALIZE))
    incoming = server.accept(init, headers={}, principal="carol")
    assert (incoming.legacy, incoming.meta, incoming.handler, incoming.principal) == (True, None, None, "carol")
    assert incoming.streams is False
    result = asyncio.run(server.answer(incoming))
    assert result["protocolVersion"] == "2025-11-25"


def test_a_legacy_request_with_a_progress_token_streams(server: Server) -> None:
    request = Request(2, "tools/list", {"_meta": {PROGRESS_TOKEN_KEY: "t"}})
    incoming = server.accept(request, legacy_version="2025-11-25")
    assert (incoming.legacy, incoming.streams, incoming.legacy_version) == (True, True, "2025-11-25")
    plain = server.accept(Request(2, "tools/list", {"_meta": {"other": 1}}), legacy_version="2025-06-18")
    assert (plain.streams, plain.legacy_version) == (False, "2025-06-18")
    assert [tool["name"] for tool in asyncio.run(server.answer(plain))["tools"]] == ["echo"]


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ({"mcp-method": "tools/list"}, "Mcp-Method is 'tools/list' but the body says 'tools/call'"),
        ({"mcp-method": "tools/call", "mcp-name": "other"}, "Mcp-Name is 'other' but the body says 'echo'"),
        ({"mcp-method": "tools/call"}, "required header Mcp-Name is missing"),
        ({"mcp-name": "echo"}, "required header Mcp-Method is missing"),
    ],
)
def test_a_legacy_request_that_sends_mirrored_headers_is_held_to_them(
    server: Server, headers: dict[str, str], problem: str
) -> None:
    """2025-11-25 clients send no `Mcp-Method`; a request that does says what it is, and whatever
    decided on it (ProtectedResource's scopes) must see what runs: a lying one is -32020."""
    call = Request(1, "tools/call", {"name": "echo", "arguments": {}})
    error = refused(lambda: server.accept(call, headers=headers, legacy_version="2025-11-25"))
    assert (error.code, error.message, error.http_status) == (HEADER_MISMATCH, f"Header mismatch: {problem}", 400)
    sent = {"mcp-method": "tools/call", "mcp-name": "echo"}
    assert server.accept(call, headers=sent, legacy_version="2025-11-25").legacy
    assert server.accept(call, headers={}, legacy_version="2025-11-25").legacy


def test_a_modern_only_server_answers_initialize_with_the_versions_it_speaks() -> None:
    server = Server("unit", "1", serve_legacy=False)
    init = Request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    error = refused(lambda: server.accept(init))
    assert error.code == UNSUPPORTED_PROTOCOL_VERSION
    assert error.data == {"supported": [VERSION], "requested": "2025-11-25"}
    unnamed = refused(lambda: server.accept(Request(1, "initialize", {"protocolVersion": 7})))
    assert unnamed.data == {"supported": [VERSION], "requested": ""}


def test_a_modern_only_server_refuses_a_legacy_request_as_an_unsupported_version() -> None:
    """Its header names 2025-11-25, which this server does not serve: -32022 tells the client
    what it does serve, where -32602 would only say that `_meta` is missing."""
    server = Server("unit", "1", serve_legacy=False)
    error = refused(lambda: server.accept(Request(1, "tools/list", {}), legacy_version="2025-11-25"))
    assert error.code == UNSUPPORTED_PROTOCOL_VERSION
    assert error.data == {"supported": [VERSION], "requested": "2025-11-25"}


@pytest.mark.parametrize("headers", [None, {}])
def test_a_body_without_meta_under_a_version_nobody_serves_is_an_unsupported_version(
    server: Server, headers: dict[str, str] | None
) -> None:
    request = Request(1, "tools/list", {"_meta": {PROGRESS_TOKEN_KEY: "t"}})
    error = refused(lambda: server.accept(request, headers=headers, legacy_version="2024-01-01"))
    assert (error.code, error.message) == (
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version: 2024-01-01 (this server supports 2026-07-28)",
    )
    assert error.data == {"supported": [VERSION], "requested": "2024-01-01"}


@pytest.mark.parametrize("header", [None, "", VERSION])
def test_a_body_without_meta_under_a_served_or_no_version_lacks_meta(server: Server, header: str | None) -> None:
    error = refused(lambda: server.accept(Request(1, "tools/list", {}), headers={}, legacy_version=header))
    assert (error.code, error.message) == (
        INVALID_PARAMS,
        "Invalid params: params._meta is required and must be an object",
    )


def test_a_header_naming_an_unserved_version_beside_modern_meta_is_a_mismatch(server: Server) -> None:
    """With the version in `_meta`, the header is a mirror of it, judged as one (-32020)."""
    request = Request(1, "tools/list", {"_meta": META})
    headers = headers_for("tools/list", version="2024-01-01")
    assert refused(lambda: server.accept(request, headers=headers, legacy_version="2024-01-01")).code == (
        HEADER_MISMATCH
    )


@pytest.mark.parametrize(
    ("params", "missing"),
    [
        (
            {},
            "params.protocolVersion (a string), params.capabilities (an object), "
            "params.clientInfo (an object with a string name and version)",
        ),
        ({**INITIALIZE, "protocolVersion": 7}, "params.protocolVersion (a string)"),
        ({k: v for k, v in INITIALIZE.items() if k != "capabilities"}, "params.capabilities (an object)"),
        ({**INITIALIZE, "capabilities": []}, "params.capabilities (an object)"),
        (
            {k: v for k, v in INITIALIZE.items() if k != "clientInfo"},
            "params.clientInfo (an object with a string name and version)",
        ),
        ({**INITIALIZE, "clientInfo": {"name": "old"}}, "params.clientInfo (an object with a string name and version)"),
        (
            {**INITIALIZE, "clientInfo": {"version": "1"}},
            "params.clientInfo (an object with a string name and version)",
        ),
    ],
)
def test_an_initialize_that_breaks_its_schema_is_invalid_params_naming_what_is_missing(
    server: Server, params: dict[str, Any], missing: str
) -> None:
    """InitializeRequestParams (2025-11-25) requires protocolVersion, capabilities and clientInfo."""
    error = refused(lambda: server.accept(Request(1, "initialize", params), headers={}))
    assert (error.code, error.message) == (INVALID_PARAMS, f"Invalid params: initialize needs {missing}")


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_progress_token_that_is_no_string_or_integer_is_refused_at_accept(server: Server, era: str) -> None:
    """Both transports hand every request to `accept`, so this one check covers stdio and HTTP."""
    token = {PROGRESS_TOKEN_KEY: {"id": 1}}
    body = {"_meta": meta(**token)} if era == "modern" else {"_meta": token}
    error = refused(lambda: server.accept(Request(1, "tools/list", body), legacy_version="2025-11-25"))
    assert (error.code, error.message) == (
        INVALID_PARAMS,
        "Invalid params: params._meta.progressToken must be a string or an integer, not an object",
    )


def test_initialize_with_modern_meta_is_a_removed_method(server: Server) -> None:
    init = Request(1, "initialize", {"protocolVersion": "2025-11-25", "_meta": META})
    error = refused(lambda: server.accept(init))
    assert (error.code, error.message) == (METHOD_NOT_FOUND, f"Method not found: initialize (removed in {VERSION})")


# -- method lookup ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "tasks/get"])
def test_a_removed_method_says_it_was_removed(server: Server, method: str) -> None:
    error = refused(lambda: server.handler_for(method))
    assert (error.code, error.message) == (METHOD_NOT_FOUND, f"Method not found: {method} (removed in {VERSION})")


def test_listen_has_no_handler_it_is_a_stream(server: Server) -> None:
    error = refused(lambda: server.handler_for("subscriptions/listen"))
    assert (error.code, error.message) == (
        INTERNAL_ERROR,
        "subscriptions/listen is served by the transport as a stream",
    )


def test_a_method_whose_capability_is_not_offered_is_not_found(server: Server) -> None:
    error = refused(lambda: server.handler_for("prompts/get"))
    assert (error.code, error.message) == (
        METHOD_NOT_FOUND,
        "Method not found: prompts/get (this server does not offer prompts)",
    )
    assert server.handler_for("server/discover") is not None


def test_a_registration_while_running_offers_its_methods_at_once(server: Server) -> None:
    assert server.handler_for("tools/list") is not None
    with pytest.raises(MCPError):
        server.handler_for("prompts/list")

    @server.prompt()
    def greet() -> str:
        return "hi"

    assert server.handler_for("prompts/list") is not None


def test_an_extension_method_is_found_and_gated(server: Server) -> None:
    server.add_extension(Watch())
    handler = server.handler_for("com.example/watch/tick")
    request = Request(1, "com.example/watch/tick", {"_meta": META})
    error = refused(lambda: asyncio.run(server.handle(request)))
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.message == f"Missing required client capability: com.example/watch/tick needs the {EXT} extension"
    assert error.data == {"requiredCapabilities": {"extensions": {EXT: {}}}}
    declaring = Request(
        1, "com.example/watch/tick", {"_meta": {**META, CLIENT_CAPABILITIES_KEY: {"extensions": {EXT: {}}}}}
    )
    assert asyncio.run(server.handle(declaring))["ticked"] is True
    assert callable(handler)


# -- extensions ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", ["watch", "/watch", "com.example/"])
def test_an_extension_id_needs_a_prefix_and_a_name(server: Server, bad_id: str) -> None:
    class Bad(Watch):
        id = bad_id

    with pytest.raises(ValueError) as caught:
        server.add_extension(Bad())
    assert str(caught.value) == f"extension id {bad_id!r} needs a prefix, like 'com.example/name'"
    assert server.extensions == {}


def test_an_extension_is_added_once_and_told_of_its_server(server: Server) -> None:
    watch = server.add_extension(Watch())
    assert watch.server is server
    assert server.extensions == {EXT: watch}
    with pytest.raises(ValueError) as caught:
        server.add_extension(Watch())
    assert str(caught.value) == f"extension {EXT!r} is already added"


def test_an_extension_may_not_take_a_core_or_taken_method(server: Server) -> None:
    class Core(Extension):
        id = "com.example/core"
        methods = {"tools/list": None}

    with pytest.raises(ValueError) as caught:
        server.add_extension(Core())
    assert str(caught.value) == "com.example/core: method 'tools/list' is already served"
    server.add_extension(Watch())

    class Copy(Extension):
        id = "com.example/copy"
        methods = {"com.example/watch/tick": None}

    with pytest.raises(ValueError) as copied:
        server.add_extension(Copy())
    assert str(copied.value) == "com.example/copy: method 'com.example/watch/tick' is already served"


@pytest.mark.parametrize("result_type", ["complete", "input_required"])
def test_an_extension_may_not_take_a_core_result_type(server: Server, result_type: str) -> None:
    class Taker(Extension):
        id = "com.example/taker"
        result_types = frozenset({result_type})

    with pytest.raises(ValueError) as caught:
        server.add_extension(Taker())
    assert str(caught.value) == f"com.example/taker: resultType {result_type!r} is already taken"


def test_two_extensions_may_not_share_a_result_type(server: Server) -> None:
    class First(Extension):
        id = "com.example/first"
        result_types = frozenset({"queued"})

    class Second(Extension):
        id = "com.example/second"
        result_types = frozenset({"queued"})

    server.add_extension(First())
    with pytest.raises(ValueError) as caught:
        server.add_extension(Second())
    assert str(caught.value) == "com.example/second: resultType 'queued' is already taken"


def test_an_added_extension_is_advertised_at_once(server: Server) -> None:
    assert server.handler_for("tools/list")  # computes what is offered
    server.add_extension(Watch())
    discover = asyncio.run(server.handle(Request(1, "server/discover", {"_meta": META})))
    assert discover["capabilities"]["extensions"] == {EXT: {}}


# -- listen filters --------------------------------------------------------------------------


def listen(filters: dict[str, Any], capabilities: dict[str, Any] | None = None) -> Request:
    meta_ = {**META, CLIENT_CAPABILITIES_KEY: capabilities or {}}
    return Request("l", "subscriptions/listen", {"notifications": filters, "_meta": meta_})


def test_an_extension_filter_needs_the_extension_declared(server: Server) -> None:
    server.add_extension(Watch())
    error = refused(lambda: server.open_subscription(listen({"watchTicks": True})))
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.message == f"Missing required client capability: watchAlarms, watchTicks needs the {EXT} extension"
    assert error.data == {"requiredCapabilities": {"extensions": {EXT: {}}}}
    declared = server.open_subscription(listen({"watchTicks": True}, {"extensions": {EXT: {}}}))
    assert declared is not None


def test_core_filters_need_no_extension(server: Server) -> None:
    server.add_extension(Watch())
    assert server.open_subscription(listen({"toolsListChanged": True})) is not None


@pytest.mark.parametrize("meta_", [None, "caps", {CLIENT_CAPABILITIES_KEY: "all"}, {}])
def test_a_listen_request_that_declares_nothing_readable_declares_no_extension(server: Server, meta_: Any) -> None:
    server.add_extension(Watch())
    params: dict[str, Any] = {"notifications": {"watchAlarms": True}}
    if meta_ is not None:
        params["_meta"] = meta_
    error = refused(lambda: server.open_subscription(Request("l", "subscriptions/listen", params)))
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY


def test_a_filter_that_is_no_object_is_refused_by_the_hub(server: Server) -> None:
    server.add_extension(Watch())
    error = refused(lambda: server.open_subscription(listen(["watchTicks"])))  # type: ignore[arg-type]
    assert error.code == INVALID_PARAMS


# -- resource updates ------------------------------------------------------------------------


def test_a_resource_update_reaches_only_listeners_who_may_see_it() -> None:
    server = Server("unit", "1")

    @server.resource("file:///secret", visible=lambda principal: principal == "alice")
    def secret() -> str:
        return "s"

    @server.resource("file:///open")
    def open_() -> str:
        return "o"

    subscribe = {"resourceSubscriptions": ["file:///secret", "file:///open"]}
    alice = server.open_subscription(listen(subscribe), principal="alice")
    bob = server.open_subscription(listen(subscribe), principal="bob")
    server.notify_resource_updated("file:///secret")
    server.notify_resource_updated("file:///open")
    heard = [alice.queue.get_nowait()["params"]["uri"] for _ in range(alice.queue.qsize())]
    assert heard == ["file:///secret", "file:///open"]
    note = bob.queue.get_nowait()
    assert note["method"] == "notifications/resources/updated"
    assert note["params"]["uri"] == "file:///open"
    assert bob.queue.qsize() == 0


def test_an_unknown_list_kind_is_refused(server: Server) -> None:
    with pytest.raises(ValueError, match="unknown list 'widgets'"):
        server.notify_list_changed("widgets")


# -- registration ----------------------------------------------------------------------------


def test_registration_defaults_names_and_descriptions_from_the_function() -> None:
    server = Server("unit", "1", title="Unit server")

    @server.tool()
    def shout() -> str:
        """Say it loud."""
        return "HEY"

    @server.tool("quiet", description="", title="Quiet")
    def whisper() -> str:
        """Ignored."""
        return "hey"

    @server.resource("file:///r", mime_type="text/plain", title="R")
    def r() -> str:
        """The r."""
        return "r"

    @server.resource("file:///s", name="ess", description="An s.")
    def s() -> str:
        return "s"

    @server.resource_template("file:///t/{x}", mime_type="text/plain", title="T")
    def t(x: str) -> str:
        """A t."""
        return x

    @server.resource_template("file:///u/{y}", name="you", description="A u.")
    def u(y: str) -> str:
        """Ignored."""
        return y

    @server.prompt()
    def hello() -> str:
        """Say hello."""
        return "hello"

    @server.prompt("bye", title="Bye", description="Say bye.", arguments={"who": "whom to greet"})
    def farewell(who: str) -> str:
        """Ignored."""
        return who

    assert server.info == {"name": "unit", "version": "1", "title": "Unit server"}
    tools = {tool.name: tool.definition() for tool in server.tools}
    assert tools["shout"] == {"name": "shout", "description": "Say it loud.", "inputSchema": {"type": "object"}}
    assert tools["quiet"]["description"] == "" and tools["quiet"]["title"] == "Quiet"
    resources = {res.definition()["uri"]: res.definition() for res in server.resources.resources.values()}
    assert resources["file:///r"] == {
        "uri": "file:///r",
        "name": "r",
        "title": "R",
        "description": "The r.",
        "mimeType": "text/plain",
    }
    assert resources["file:///s"] == {"uri": "file:///s", "name": "ess", "description": "An s."}
    templates = [template.definition() for template in server.resources.templates]
    assert templates == [
        {"uriTemplate": "file:///t/{x}", "name": "t", "title": "T", "description": "A t.", "mimeType": "text/plain"},
        {"uriTemplate": "file:///u/{y}", "name": "you", "description": "A u."},
    ]
    prompts = {prompt.definition()["name"]: prompt.definition() for prompt in server.prompts}
    assert prompts["hello"] == {"name": "hello", "description": "Say hello."}
    assert prompts["bye"]["title"] == "Bye" and prompts["bye"]["description"] == "Say bye."
    assert prompts["bye"]["arguments"][0]["name"] == "who"


# -- construction ----------------------------------------------------------------------------


def test_a_server_without_a_title_names_none_and_bounds_listen_streams_by_default() -> None:
    server = Server("unit", "1")
    assert server.info == {"name": "unit", "version": "1"}
    assert (server.serve_legacy, server.emits_logs, server.page_size, server.instructions) == (True, None, None, None)
    assert server.supported_versions == (VERSION,)
    assert (server.subscriptions.max_subscriptions, server.subscriptions.max_per_caller) == (1000, 32)
    bounded = Server("unit", "1", max_subscriptions=3, max_subscriptions_per_caller=2)
    assert (bounded.subscriptions.max_subscriptions, bounded.subscriptions.max_per_caller) == (3, 2)


def test_the_cache_table_is_the_servers_own_copy() -> None:
    table = {"tools/list": CacheHints(5, "public")}
    server = Server("unit", "1", cache_for=table)
    table["tools/list"] = CacheHints(9, "private")
    assert server.cache_for == {"tools/list": CacheHints(5, "public")}


def _add(server: Server, kind: str, name: str) -> None:
    if kind == "tools":
        server.tool(name)(lambda: "x")
    elif kind == "resources":
        server.resource(f"file:///{name}", name=name)(lambda: name)
    else:
        server.prompt(name)(lambda: name)


@pytest.mark.parametrize("kind", ["tools", "resources", "prompts"])
def test_a_registration_while_listening_tells_the_listeners(kind: str) -> None:
    server = Server("unit", "1")
    _add(server, kind, "first")  # the capability is offered, so the listen flag is honoured
    stream = server.open_subscription(listen({f"{kind}ListChanged": True}))
    _add(server, kind, "second")
    assert stream.queue.get_nowait()["method"] == f"notifications/{kind}/list_changed"
    assert stream.queue.qsize() == 0


# -- running a request -----------------------------------------------------------------------


def test_extensions_wrap_requests_in_the_order_they_were_added() -> None:
    seen: list[str] = []

    def recorder(ext_id: str) -> Extension:
        class Recorder(Extension):
            id = ext_id

            async def around(self, ctx: RequestContext, call_next: Any) -> Any:
                seen.append(f"{self.id} in")
                result = await call_next(ctx)
                seen.append(f"{self.id} out")
                return result

        return Recorder()

    server = Server("unit", "1")
    server.add_extension(recorder("com.example/outer"))
    server.add_extension(recorder("com.example/inner"))
    asyncio.run(server.handle(Request(1, "server/discover", {"_meta": META})))
    assert seen == ["com.example/outer in", "com.example/inner in", "com.example/inner out", "com.example/outer out"]


@pytest.mark.parametrize("key", ["inputResponses", "requestState"])
def test_a_core_method_without_rounds_refuses_round_parameters(server: Server, key: str) -> None:
    request = Request(1, "tools/list", {key: {}, "_meta": META})
    error = refused(lambda: asyncio.run(server.handle(request)))
    assert (error.code, error.message) == (
        INVALID_PARAMS,
        "Invalid params: tools/list does not take inputResponses or requestState",
    )


def test_an_extension_method_reads_its_own_round_parameters(server: Server) -> None:
    server.add_extension(Watch())
    capabilities = {**META, CLIENT_CAPABILITIES_KEY: {"extensions": {EXT: {}}}}
    request = Request(1, "com.example/watch/tick", {"inputResponses": {"a": 1}, "_meta": capabilities})
    assert asyncio.run(server.handle(request))["ticked"] is True


def test_an_input_required_asking_for_nothing_is_the_servers_bug() -> None:
    server = Server("unit", "1")

    @server.tool()
    def empty() -> InputRequired:
        return InputRequired({})

    request = Request(1, "tools/call", {"name": "empty", "_meta": META})
    error = refused(lambda: asyncio.run(server.handle(request)))
    assert (error.code, error.message) == (INTERNAL_ERROR, "Internal error while handling tools/call")


def test_a_handler_may_not_log_unless_logging_is_declared() -> None:
    seen: list[bool] = []

    for emits in (False, True):
        server = Server("unit", "1", emits_logs=emits)

        @server.tool()
        async def probe(ctx: RequestContext) -> str:
            seen.append(ctx.may_log)
            return "ok"

        asyncio.run(server.handle(Request(1, "tools/call", {"name": "probe", "_meta": META})))
    assert seen == [False, True]


def test_a_tool_call_may_leave_out_its_arguments(server: Server) -> None:
    result = asyncio.run(server.handle(Request(1, "tools/call", {"name": "echo", "_meta": META})))
    assert result["content"] == [{"type": "text", "text": ""}]


def test_a_tool_call_whose_arguments_are_no_object_is_invalid_params(server: Server) -> None:
    request = Request(1, "tools/call", {"name": "echo", "arguments": ["x"], "_meta": META})
    error = refused(lambda: asyncio.run(server.handle(request)))
    assert (error.code, error.message) == (INVALID_PARAMS, "Invalid params: arguments must be an object")


def test_a_tool_error_is_a_result_the_model_reads() -> None:
    server = Server("unit", "1")

    @server.tool()
    def grumpy() -> str:
        raise ToolError("not today")

    result = asyncio.run(server.handle(Request(1, "tools/call", {"name": "grumpy", "_meta": META})))
    assert result["content"] == [{"type": "text", "text": "not today"}]
    assert result["isError"] is True
    assert result["resultType"] == "complete"


def test_a_tool_that_requires_a_client_capability_refuses_a_client_without_it() -> None:
    server = Server("unit", "1")

    @server.tool(requires={"sampling": {}})
    def think() -> str:
        return "hm"

    error = refused(lambda: asyncio.run(server.handle(Request(1, "tools/call", {"name": "think", "_meta": META}))))
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data == {"requiredCapabilities": {"sampling": {}}}
    with_sampling = {**META, CLIENT_CAPABILITIES_KEY: {"sampling": {}}}
    result = asyncio.run(server.handle(Request(1, "tools/call", {"name": "think", "_meta": with_sampling})))
    assert result["content"][0]["text"] == "hm"


# -- what answer hands on --------------------------------------------------------------------


def _context_server() -> tuple[Server, list[RequestContext]]:
    """A server whose tools `probe` (everyone) and `mine` (alice only) record the context they ran in."""
    server = Server("unit", "1")
    seen: list[RequestContext] = []

    @server.tool()
    async def probe(ctx: RequestContext) -> str:
        seen.append(ctx)
        await ctx.report_progress(1, 2)
        return "ok"

    @server.tool(visible=lambda principal: principal == "alice")
    def mine() -> str:
        return "alice's"

    return server, seen


def _collect() -> tuple[list[dict[str, Any]], Any]:
    sent: list[dict[str, Any]] = []

    async def notify(message: dict[str, Any]) -> None:
        sent.append(message)

    return sent, notify


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_answer_runs_with_the_callers_principal_notify_sink_and_version(era: str) -> None:
    server, seen = _context_server()
    sent, notify = _collect()
    token = {PROGRESS_TOKEN_KEY: "tok"}
    if era == "modern":
        request = Request(9, "tools/call", {"name": "probe", "_meta": meta(**token)})
        incoming = server.accept(request, principal="alice")
    else:
        request = Request(9, "tools/call", {"name": "probe", "_meta": token})
        incoming = server.accept(request, principal="alice", legacy_version="2025-06-18")
    asyncio.run(server.answer(incoming, notify))
    assert [message["params"]["progressToken"] for message in sent] == ["tok"]
    assert seen[0].principal == "alice"
    assert seen[0].request_id == 9
    assert seen[0].meta.protocol_version == (VERSION if era == "modern" else "2025-06-18")
    # What only alice may see is there for alice, in either era.
    legacy = era == "legacy"
    listing = Request(10, "tools/list", {} if legacy else {"_meta": META})
    accepted = server.accept(listing, principal="alice", legacy_version="2025-11-25" if legacy else None)
    assert "mine" in [tool["name"] for tool in asyncio.run(server.answer(accepted))["tools"]]


def test_a_listen_request_cannot_be_answered(server: Server) -> None:
    listen_request = Request(7, "subscriptions/listen", {"notifications": {}, "_meta": META})
    incoming = server.accept(listen_request)
    assert incoming.request is listen_request
    with pytest.raises(ValueError) as caught:
        server.answer(incoming)
    assert str(caught.value) == "a listen request is opened with open_subscription, not answered"


def test_handle_judges_the_version_itself(server: Server) -> None:
    error = refused(lambda: asyncio.run(server.handle(Request(1, "tools/list", {"_meta": meta("2099-01-01")}))))
    assert error.code == UNSUPPORTED_PROTOCOL_VERSION


def test_a_hidden_tools_headers_are_judged_only_for_who_may_see_it() -> None:
    server = Server("unit", "1")

    @server.tool(
        input_schema={"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
        visible=lambda principal: principal == "alice",
    )
    def where(region: str = "") -> str:
        return region

    params = {"name": "where", "arguments": {"region": "eu"}, "_meta": META}
    wrong = headers_for("tools/call", **{"mcp-name": "where", "mcp-param-region": "us"})
    assert refused(lambda: server.accept(Request(1, "tools/call", params), headers=wrong, principal="alice")).code == (
        HEADER_MISMATCH
    )
    # To bob the tool does not exist: no header error betrays it (the call fails as unknown later).
    assert server.accept(Request(1, "tools/call", params), headers=wrong, principal="bob").handler is not None


def test_a_server_with_extensions_still_checks_core_requests_headers(server: Server) -> None:
    server.add_extension(Watch())
    incoming = server.accept(Request(1, "tools/list", {"_meta": META}), headers=headers_for("tools/list"))
    assert incoming.handler is not None
    # Adding it forgot what was offered, and computing it again still offers the tools.
    assert [tool["name"] for tool in asyncio.run(server.answer(incoming))["tools"]] == ["echo"]


@pytest.mark.parametrize("bad_id", ["com.example/name/", "com.example/tools/"])
def test_an_extension_id_is_judged_at_its_last_slash(server: Server, bad_id: str) -> None:
    class Bad(Watch):
        id = bad_id

    with pytest.raises(ValueError, match="needs a prefix"):
        server.add_extension(Bad())


def test_a_nested_extension_id_is_accepted(server: Server) -> None:
    class Nested(Watch):
        id = "com.example/tools/watch"

    assert server.add_extension(Nested()).id in server.extensions


def test_pages_are_cut_at_the_servers_page_size() -> None:
    server = Server("unit", "1", page_size=1)
    for name in ("a", "b"):
        server.tool(name)(lambda: "x")
    first = asyncio.run(server.handle(Request(1, "tools/list", {"_meta": META})))
    assert [tool["name"] for tool in first["tools"]] == ["a"]
    assert "nextCursor" in first


def test_a_tool_keeps_its_icons() -> None:
    server = Server("unit", "1")
    icons = [{"src": "https://example.com/i.png", "mimeType": "image/png"}]
    server.tool("pic", icons=icons)(lambda: "p")
    assert server.tools.get("pic").definition()["icons"] == icons


def test_listen_slots_are_shared_fairly_per_caller_and_freed_on_close() -> None:
    server = Server("unit", "1", max_subscriptions_per_caller=1)
    server.tool("t")(lambda: "t")
    first = server.open_subscription(listen({"toolsListChanged": True}), caller="a")
    server.open_subscription(listen({"toolsListChanged": True}), caller="b")
    with pytest.raises(MCPError):
        server.open_subscription(listen({"toolsListChanged": True}), caller="a")
    server.close_subscription(first)
    assert server.open_subscription(listen({"toolsListChanged": True}), caller="a") is not None


def test_crashes_are_logged_with_the_method(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(Extension):
        id = "com.example/broken"

        async def around(self, ctx: RequestContext, call_next: Any) -> Any:
            if ctx.params.get("name") == "broken":
                raise RuntimeError("boom")
            return await call_next(ctx)

    server = Server("unit", "1")
    server.add_extension(Broken())

    @server.tool()
    def empty() -> InputRequired:
        return InputRequired({})

    for name in ("broken", "empty"):
        with pytest.raises(MCPError):
            asyncio.run(server.handle(Request(1, "tools/call", {"name": name, "_meta": META})))
    messages = [record.getMessage() for record in caplog.records if record.name == "mcpref.server"]
    assert messages == ["tools/call handler raised", "tools/call handler returned an unusable InputRequired"]
    assert str(caplog.records[-1].exc_info[1]) == "InputRequired needs input requests, a state, or both"


def test_an_undeclared_result_type_is_logged_with_what_and_for_whom(caplog: pytest.LogCaptureFixture) -> None:
    class Liar(Extension):
        id = "com.example/liar"
        result_types = frozenset({"lie"})

        async def around(self, ctx: RequestContext, call_next: Any) -> Any:
            return {"resultType": "lie"}

    server = Server("unit", "1")
    server.add_extension(Liar())
    with pytest.raises(MCPError):
        asyncio.run(server.handle(Request(1, "server/discover", {"_meta": META})))
    assert [record.getMessage() for record in caplog.records] == [
        "server/discover answered resultType 'lie' to a client without com.example/liar"
    ]


def test_url_and_form_elicitation_together_need_both_modes() -> None:
    from mcpref.mrtr import elicit_form, elicit_url

    server = Server("unit", "1")

    @server.tool()
    def both() -> InputRequired:
        return InputRequired(
            {"link": elicit_url("Sign in", "https://example.com/login"), "form": elicit_form("Name?", {})}
        )

    url_only = {**META, CLIENT_CAPABILITIES_KEY: {"elicitation": {"url": {}}}}
    error = refused(lambda: asyncio.run(server.handle(Request(1, "tools/call", {"name": "both", "_meta": url_only}))))
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}


def test_handle_judges_the_version_by_the_servers_own_list() -> None:
    narrow = Server("unit", "1", supported_versions=("2099-01-01",))
    error = refused(lambda: asyncio.run(narrow.handle(Request(1, "server/discover", {"_meta": META}))))
    assert error.code == UNSUPPORTED_PROTOCOL_VERSION
    assert error.data == {"supported": ["2099-01-01"], "requested": VERSION}
