"""Version negotiation: `auto` probes with server/discover and remembers the era per origin,
a modern answer is never a reason to fall back, and a non-MCP 400/404 is."""

from __future__ import annotations

import json

import pytest

from mcpref import Server, StreamableHTTP
from mcpref.client import (
    Client,
    EraCache,
    EraInfo,
    MCPClientError,
    ProtocolError,
    TransportError,
    UnsupportedProtocolVersion,
    origin_of,
)
from mcpref.client._era import kind_of, mutual_version
from tests.client.conftest import connect, endpoint

pytestmark = pytest.mark.anyio

server = Server("era-server", "1.0.0")


@server.tool()
def ping() -> str:
    return "pong"


app = StreamableHTTP(server)

modern_only = Server("modern-only", "1.0.0", serve_legacy=False)
modern_only.tool(name="ping")(ping)
modern_only_app = StreamableHTTP(modern_only)

future = Server("future-server", "1.0.0", supported_versions=("2027-01-01",))
future_app = StreamableHTTP(future)


async def test_auto_probes_once_and_remembers_the_origin(url):
    eras = EraCache()
    async with connect(url, era_cache=eras) as (client, traffic):
        await client.list_tools()
    assert traffic.methods == ["server/discover", "tools/list"]
    assert client.era == EraInfo("modern", "2026-07-28")
    assert eras.get(origin_of(url)) == EraInfo("modern", "2026-07-28")
    async with connect(url, era_cache=eras) as (again, traffic):
        await again.list_tools()
    assert traffic.methods == ["tools/list"]


async def test_pinned_version_sends_no_probe(url):
    eras = EraCache()
    async with connect(url, version="2026-07-28", era_cache=eras) as (client, traffic):
        await client.call_tool("ping")
    assert traffic.methods == ["tools/list", "tools/call"]  # tools/list only to learn x-mcp-header params
    assert eras.get(origin_of(url)) is None  # only auto-detected eras are remembered


async def test_a_modern_error_to_the_probe_never_falls_back():
    with endpoint(future_app) as url:
        async with connect(url) as (client, traffic):
            with pytest.raises(UnsupportedProtocolVersion) as caught:
                await client.list_tools()
    assert caught.value.supported == ["2027-01-01"]
    assert traffic.methods == ["server/discover"]  # no initialize


async def test_a_non_mcp_404_falls_back_to_initialize(url):
    # Our server answers an unknown path with a plain-text 404: no modern body, so "legacy".
    async with connect(url.removesuffix("/mcp") + "/old-endpoint") as (client, traffic):
        with pytest.raises(TransportError) as caught:
            await client.list_tools()
    assert traffic.methods == ["server/discover", "initialize"]
    assert caught.value.status_code == 404


async def test_a_400_with_an_empty_body_falls_back_to_initialize():
    # A stand-in, not a server: no real component answers `400` with an empty body, yet the
    # spec names that answer as the legacy signal (streamable-http.mdx §Backward Compatibility).
    async def empty_400(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 400, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    with endpoint(empty_400) as url:
        eras = EraCache()
        async with connect(url, era_cache=eras) as (client, traffic):
            with pytest.raises(TransportError):
                await client.list_tools()
    assert traffic.methods == ["server/discover", "initialize"]
    assert eras.get(origin_of(url)) is None  # a failed handshake teaches nothing


async def read_json(receive):  # type: ignore[no-untyped-def]
    """The request body of an ASGI stand-in, read whole and parsed."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return json.loads(body)


def refusing_first(count: int):
    """A stand-in for a server that refuses its first `count` requests with -32022 while listing
    the very version it refused (as the conformance suite's request-metadata mock does), then
    answers every request with an empty complete result. No real server contradicts itself so."""
    refused = 0

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        nonlocal refused
        if scope["type"] != "http":
            return
        request = await read_json(receive)
        if refused < count:
            refused += 1
            status = 400
            data = {"supported": ["2026-07-28"], "requested": "2026-07-28"}
            answer = {"code": -32022, "message": "Unsupported protocol version", "data": data}
            payload = {"jsonrpc": "2.0", "id": request["id"], "error": answer}
        else:
            status = 200
            result = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}}
            payload = {"jsonrpc": "2.0", "id": request["id"], "result": {**result, "ttlMs": 0, "cacheScope": "private"}}
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(payload).encode()})

    return app


async def test_a_refused_version_that_the_server_lists_is_tried_once_more():
    with endpoint(refusing_first(1)) as url:
        async with connect(url) as (client, traffic):
            await client.discover()
    assert traffic.methods == ["server/discover", "server/discover"]
    assert traffic.requests[1].headers["mcp-protocol-version"] == "2026-07-28"
    assert traffic.bodies[0]["id"] != traffic.bodies[1]["id"]
    assert client.era == EraInfo("modern", "2026-07-28")


async def test_a_request_after_the_probe_is_also_tried_once_more():
    with endpoint(refusing_first(1)) as url:
        eras = EraCache()
        eras.set(origin_of(url), EraInfo("modern", "2026-07-28"))  # known already: no probe
        async with connect(url, era_cache=eras) as (client, traffic):
            await client.discover()
    assert traffic.methods == ["server/discover", "server/discover"]


async def test_a_version_refused_twice_is_given_up():
    with endpoint(refusing_first(2)) as url:
        async with connect(url) as (client, traffic):
            with pytest.raises(UnsupportedProtocolVersion, match="2026-07-28 was refused"):
                await client.discover()
    assert traffic.methods == ["server/discover", "server/discover"]


async def empty_result_to_anything_but_initialize(scope, receive, send):  # type: ignore[no-untyped-def]
    """A stand-in for a lax legacy server (the conformance suite's `initialize` mock is one): it
    answers `initialize`, and every other method with an empty result instead of -32601."""
    if scope["type"] != "http":
        return
    request = await read_json(receive)
    if "id" not in request:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    result: dict[str, object] = {}
    if request["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "lax", "version": "1"}}
    elif request["method"] == "tools/list":
        result = {"tools": []}
    payload = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(payload).encode()})


async def test_a_discover_answer_that_is_no_discover_result_means_legacy():
    with endpoint(empty_result_to_anything_but_initialize) as url:
        async with connect(url) as (client, traffic):
            assert await client.list_tools() == []
    assert traffic.methods == ["server/discover", "initialize", "notifications/initialized", "tools/list"]
    assert traffic.bodies[1]["params"]["protocolVersion"] == "2025-11-25"  # our newest legacy version
    assert client.era == EraInfo("legacy", "2025-11-25")


async def test_legacy_mode_against_a_modern_only_server_reports_its_versions():
    with endpoint(modern_only_app) as url:
        async with connect(url, version="legacy") as (client, traffic):
            with pytest.raises(UnsupportedProtocolVersion) as caught:
                await client.list_tools()
    assert traffic.methods == ["initialize"]
    body = traffic.bodies[0]
    assert body["params"]["protocolVersion"] == "2025-11-25"
    assert "_meta" not in body["params"]
    assert caught.value.supported == ["2026-07-28"]


async def test_a_remembered_legacy_era_is_probed_again_when_the_server_turned_modern():
    with endpoint(modern_only_app) as url:
        eras = EraCache()
        eras.set(origin_of(url), EraInfo("legacy", "2025-11-25"))
        async with connect(url, era_cache=eras) as (client, traffic):
            await client.list_tools()
    assert traffic.methods == ["initialize", "server/discover", "tools/list"]
    assert eras.get(origin_of(url)) == EraInfo("modern", "2026-07-28")


async def test_auto_stays_modern_with_a_dual_era_server(url):
    async with connect(url) as (client, traffic):
        await client.list_tools()
    assert traffic.methods == ["server/discover", "tools/list"]
    assert client.era == EraInfo("modern", "2026-07-28")


def test_unknown_legacy_versions_are_refused_up_front():
    with pytest.raises(ValueError, match="2024-11-05"):
        Client("http://127.0.0.1:1/mcp", version="2024-11-05")


def test_a_refused_legacy_version_names_the_ones_this_client_speaks():
    with pytest.raises(ValueError) as caught:
        Client("http://127.0.0.1:1/mcp", version="2024-11-05")
    assert str(caught.value) == "legacy version '2024-11-05' is not one this client speaks: 2025-11-25, 2025-06-18"


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("http://Example.com/mcp", "http://example.com:80"),
        ("https://example.com:443/a/b", "https://example.com:443"),
        ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000"),
    ],
)
def test_origins_spell_out_the_port(url, origin):
    assert origin_of(url) == origin


def test_version_helpers():
    assert mutual_version(["2025-11-25", "2026-07-28"]) == "2026-07-28"
    assert mutual_version(["2027-01-01"]) is None
    assert kind_of("2025-11-25") == "legacy"
    assert kind_of("2026-07-28") == "modern"
    assert kind_of("2099-01-01") == "modern"


async def test_a_version_the_server_asked_for_after_the_probe_becomes_the_era_and_is_remembered():
    with endpoint(refusing_first(1)) as url:
        eras = EraCache()
        eras.set(origin_of(url), EraInfo("modern", "2026-07-28"))
        async with connect(url, era_cache=eras) as (client, traffic):
            await client.discover()
            assert client.era == EraInfo("modern", "2026-07-28")
            await client.discover()
    # The refusal and its retry, then the next request in the agreed version: no new probe.
    assert traffic.methods == ["server/discover"] * 3
    assert traffic.requests[2].headers["mcp-protocol-version"] == "2026-07-28"
    assert eras.get(origin_of(url)) == EraInfo("modern", "2026-07-28")


async def test_a_remembered_era_that_proved_wrong_is_forgotten_even_when_the_new_probe_fails():
    # Modern, serves no legacy, and speaks no version of ours: `initialize` and the probe both
    # get -32022, a modern answer, so the remembered "legacy" is wrong and must not stay.
    stranger = Server("stranger", "1.0.0", serve_legacy=False, supported_versions=("2027-01-01",))
    with endpoint(StreamableHTTP(stranger)) as url:
        eras = EraCache()
        eras.set(origin_of(url), EraInfo("legacy", "2025-11-25"))
        async with connect(url, era_cache=eras) as (client, traffic):
            with pytest.raises(UnsupportedProtocolVersion):
                await client.list_tools()
    assert traffic.methods == ["initialize", "server/discover"]
    assert eras.get(origin_of(url)) is None


def test_forgetting_an_origin_never_seen_is_harmless():
    eras = EraCache()
    eras.set("http://a.example:80", EraInfo("modern", "2026-07-28"))
    eras.forget("http://b.example:80")
    assert eras.get("http://a.example:80") == EraInfo("modern", "2026-07-28")
    eras.forget("http://a.example:80")
    assert eras.get("http://a.example:80") is None


def answering(
    status: int, error: dict[str, object] | None, initialize_version: str = "2025-11-25", result: object = None
):
    """A stand-in that answers `server/discover` with `status` and a JSON-RPC `error` (or
    `result`, or an empty body), and `initialize` with `initialize_version`; a notification gets a 202."""

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return
        request = await read_json(receive)
        answer_status, payload = 202, b""
        if request.get("method") == "initialize":
            server_info = {"name": "s", "version": "1"}
            initialized = {"protocolVersion": initialize_version, "capabilities": {}, "serverInfo": server_info}
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": initialized}
            answer_status, payload = 200, json.dumps(answer).encode()
        elif "id" in request:
            answer_status = status
            if error is not None:
                payload = json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}).encode()
            elif result is not None:
                payload = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        headers = [(b"content-type", b"application/json")] if payload else []
        await send({"type": "http.response.start", "status": answer_status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    return app


@pytest.mark.parametrize(
    ("kind", "refusal"),
    [
        ("partial", "server/discover answered with unknown resultType 'partial'"),
        ("input_required", "server/discover must not answer input_required"),
        ("task", "server/discover answered with a task"),
    ],
)
async def test_discover_refuses_a_result_type_it_cannot_have_whether_the_probe_brought_it_or_not(kind, refusal):
    """The probe's answer, when a discover() call caused the probe, is checked as a later answer
    is: the same DiscoverResult must not pass once and fail the next time."""
    result = {"resultType": kind, "supportedVersions": ["2026-07-28"], "capabilities": {}}
    with endpoint(answering(200, None, result=result)) as url:
        async with connect(url, tasks=True) as (client, traffic):
            for _ in range(2):
                with pytest.raises(ProtocolError, match=refusal):
                    await client.discover()
    assert traffic.methods == ["server/discover"] * 2
    assert client.era == EraInfo("modern", "2026-07-28")


async def test_a_json_rpc_error_to_the_probe_in_a_200_means_legacy():
    # A legacy server that answers an unknown method with -32601 in an ordinary 200 response.
    with endpoint(answering(200, {"code": -32601, "message": "Method not found"})) as url:
        async with connect(url) as (client, traffic):
            await client.discover()
    assert traffic.methods == ["server/discover", "initialize", "notifications/initialized"]
    assert traffic.bodies[1]["params"]["protocolVersion"] == "2025-11-25"  # our newest legacy version
    assert client.era == EraInfo("legacy", "2025-11-25")


@pytest.mark.parametrize(
    ("status", "error"),
    [(500, {"code": -32603, "message": "Internal error"}), (500, None), (401, None), (403, None), (503, None)],
)
async def test_a_failure_status_to_the_probe_is_an_error_not_a_legacy_signal(status, error):
    eras = EraCache()
    with endpoint(answering(status, error)) as url:
        async with connect(url, era_cache=eras) as (client, traffic):
            with pytest.raises(MCPClientError) as caught:
                await client.discover()
    assert caught.value.status_code == status
    assert traffic.methods == ["server/discover"]  # no initialize
    assert eras.get(origin_of(url)) is None


async def test_an_initialize_answer_in_a_version_this_client_does_not_speak_is_refused():
    # basic/lifecycle.mdx §Version Negotiation: a client that does not support the version the
    # server chose should disconnect; this one refuses before sending `initialized`.
    with endpoint(answering(404, None, initialize_version="2024-01-01")) as url:
        async with connect(url, version="legacy") as (client, traffic):
            with pytest.raises(UnsupportedProtocolVersion, match="initialize chose protocol version '2024-01-01'") as e:
                await client.list_tools()
    assert traffic.methods == ["initialize"]
    assert e.value.supported == ["2024-01-01"]
    assert e.value.requested == "2025-11-25"


@pytest.mark.parametrize(
    ("app", "speaks"),
    [
        (future_app, "the server speaks 2027-01-01;"),
        (
            answering(400, {"code": -32022, "message": "U", "data": {"supported": ["2027-01-01", "2027-06-01"]}}),
            "the server speaks 2027-01-01, 2027-06-01;",
        ),
        (answering(400, {"code": -32022, "message": "Unsupported"}), "the server speaks no listed version;"),
    ],
)
async def test_a_refused_probe_says_what_the_server_speaks_and_that_there_is_no_fallback(app, speaks):
    with endpoint(app) as url:
        async with connect(url) as (client, traffic):
            with pytest.raises(UnsupportedProtocolVersion) as caught:
                await client.list_tools()
    assert str(caught.value) == (
        f"{speaks} this client speaks 2026-07-28, and 2026-07-28 was refused "
        "(the client will not fall back to initialize, since the server answered as a modern one)"
    )
    assert traffic.methods == ["server/discover"]


async def test_a_discover_result_listing_no_version_of_ours_is_refused_and_named():
    listing = {"resultType": "complete", "supportedVersions": ["2027-01-01", "2027-06-01"], "capabilities": {}}
    with endpoint(answering(200, None, result=listing)) as url:
        eras = EraCache()
        async with connect(url, era_cache=eras) as (client, traffic):
            with pytest.raises(UnsupportedProtocolVersion) as caught:
                await client.list_tools()
    assert str(caught.value) == "the server lists ['2027-01-01', '2027-06-01']; this client speaks 2026-07-28"
    assert caught.value.supported == ["2027-01-01", "2027-06-01"]
    assert caught.value.requested == "2026-07-28"
    assert traffic.methods == ["server/discover"]  # a modern answer: no initialize
    assert eras.get(origin_of(url)) is None


async def test_nothing_is_known_about_the_server_before_the_first_request(url):
    async with connect(url) as (client, traffic):
        assert (client.era, client.server_info, client.server_capabilities, client.instructions) == (None,) * 4
        await client.discover()
        assert client.server_info == {"name": "era-server", "version": "1.0.0"}
        assert client.server_capabilities is not None and "tools" in client.server_capabilities
    assert traffic.methods == ["server/discover"]
