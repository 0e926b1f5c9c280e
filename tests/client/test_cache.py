"""Caching by ttlMs and cacheScope: what is reused, for how long, and for whom.

Time is moved with an injected clock; the server counts the reads it really served.
"""

from __future__ import annotations

import hashlib

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpref import CacheHints, Server, StreamableHTTP
from mcpref.client import CacheKey, ProtocolError, ResultCache
from tests.client.conftest import connect, endpoint
from tests.conftest import SteppedClock

pytestmark = pytest.mark.anyio


server = Server(
    "cache-server",
    "1.0.0",
    page_size=2,
    cache_for={
        "tools/list": CacheHints(60_000, "public"),
        "resources/read": CacheHints(10_000, "private"),
        "resources/templates/list": CacheHints(5_000, "private"),
    },
)
served: list[str] = []

for index in range(3):

    @server.tool(name=f"tool{index}")
    def tool() -> str:
        return "ok"


@server.resource("memo://a")
def memo_a() -> str:
    served.append("memo://a")
    return "a"


@server.resource("memo://b")
def memo_b() -> str:
    served.append("memo://b")
    return "b"


@server.resource_template("notes://{name}")
def note(name: str) -> str:
    return name


app = StreamableHTTP(server)


@pytest.fixture(autouse=True)
def clear_served():
    served.clear()


async def test_fresh_until_ttl_then_fetched_again(url):
    clock = SteppedClock()
    async with connect(url, cache=ResultCache(clock=clock)) as (client, _):
        first = await client.read_resource("memo://a")
        clock.now += 9.999
        again = await client.read_resource("memo://a")
        assert served == ["memo://a"]
        assert again == first
        clock.now += 0.001  # now == received + ttlMs: stale (fresh only while now < received + ttl)
        await client.read_resource("memo://a")
    assert served == ["memo://a", "memo://a"]


async def test_ttl_zero_is_never_reused(url):
    async with connect(url) as (client, traffic):
        await client.list_resources()
        await client.list_resources()
    assert traffic.methods.count("resources/list") == 2


async def test_the_key_holds_the_uri(url):
    async with connect(url) as (client, _):
        await client.read_resource("memo://a")
        b = await client.read_resource("memo://b")
    assert served == ["memo://a", "memo://b"]
    assert b["contents"][0]["text"] == "b"


async def test_each_page_is_cached_on_its_own(url):
    clock = SteppedClock()
    async with connect(url, cache=ResultCache(clock=clock)) as (client, traffic):
        first = await client.list_tools()
        second = await client.list_tools()
    assert first == second
    assert [tool["name"] for tool in first] == ["tool0", "tool1", "tool2"]
    assert traffic.methods.count("tools/list") == 2  # two pages, each fetched once


async def test_public_results_are_shared_across_principals(url):
    shared = ResultCache()
    async with connect(url, cache=shared, headers={"Authorization": "Bearer alice"}) as (alice, _):
        await alice.list_tools()
    async with connect(url, cache=shared, headers={"Authorization": "Bearer bob"}) as (bob, traffic):
        await bob.list_tools()
    assert "tools/list" not in traffic.methods


async def test_private_results_stay_with_their_principal(url):
    shared = ResultCache()
    async with connect(url, cache=shared, headers={"Authorization": "Bearer alice"}) as (alice, _):
        await alice.read_resource("memo://a")
    async with connect(url, cache=shared, headers={"Authorization": "Bearer bob"}) as (bob, _):
        await bob.read_resource("memo://a")
    assert served == ["memo://a", "memo://a"]
    async with connect(url, cache=shared, headers={"Authorization": "Bearer alice"}) as (alice_again, _):
        await alice_again.read_resource("memo://a")
    assert served == ["memo://a", "memo://a"]  # the same token is the same authorization context


async def test_the_default_principal_names_the_authorization_by_digest_only(url):
    """The token itself is never kept as a cache key, and the `authorization:` prefix keeps a
    digest apart from any principal a caller names (`principal="carol"`)."""
    async with connect(url, headers={"Authorization": "Bearer alice"}) as (alice, _):
        digest = hashlib.sha256(b"Bearer alice").hexdigest()
        assert alice.principal == f"authorization:{digest}"
    async with connect(url) as (anonymous, _), connect(url) as (another, _):
        assert anonymous.principal.startswith("client:") and anonymous.principal != another.principal


async def test_an_explicit_principal_keys_private_results(url):
    shared = ResultCache()
    async with connect(url, cache=shared, principal="carol") as (first, _):
        await first.list_resource_templates()
    async with connect(url, cache=shared, principal="carol") as (second, traffic):
        await second.list_resource_templates()
    assert "resources/templates/list" not in traffic.methods
    async with connect(url, cache=shared, principal="dave") as (other, traffic):
        await other.list_resource_templates()
    assert "resources/templates/list" in traffic.methods


async def test_without_credentials_private_results_are_not_shared_between_clients(url):
    shared = ResultCache()
    async with connect(url, cache=shared) as (first, _):
        await first.read_resource("memo://a")
        await first.read_resource("memo://a")
    async with connect(url, cache=shared) as (second, _):
        await second.read_resource("memo://a")
    assert served == ["memo://a", "memo://a"]


async def test_a_cached_result_cannot_be_changed_by_the_caller(url):
    async with connect(url) as (client, _):
        first = await client.read_resource("memo://a")
        first["contents"].clear()
        again = await client.read_resource("memo://a")
    assert again["contents"][0]["text"] == "a"


async def test_a_cursor_gone_bad_drops_the_cached_pages_and_starts_over():
    shrinking = Server("shrinking", "1.0.0", page_size=2, cache_for={"tools/list": CacheHints(60_000, "public")})
    for name in ("a", "b", "c", "d"):
        shrinking.tool(name=name)(lambda: "")
    with endpoint(StreamableHTTP(shrinking)) as url:
        async with connect(url) as (client, traffic):
            assert [tool["name"] for tool in await client.list_tools()] == ["a", "b", "c", "d"]
            second_page = traffic.bodies[-1]["params"]["cursor"]
            for name in ("a", "b", "c"):
                shrinking.tools.remove(name)
            # Pages may carry different TTLs: say page two went stale while page one is fresh,
            # and page one's nextCursor now points past the end of the shrunken list.
            client.cache.invalidate(method="tools/list", cursor=second_page)
            # Only this server's tools/list pages are dropped: not another server's, in the same
            # cache, nor this server's other results.
            kept = {"ttlMs": 60_000, "cacheScope": "public", "tools": [], "prompts": []}
            bystanders = [
                CacheKey("http://other/mcp", "tools/list", "2026-07-28"),
                CacheKey(client.endpoint, "prompts/list", "2026-07-28"),
            ]
            for key in bystanders:
                assert client.cache.put(key, client.principal, kept)
            traffic.clear()
            assert [tool["name"] for tool in await client.list_tools()] == ["d"]
            assert [client.cache.get(key, client.principal) for key in bystanders] == [kept, kept]
    assert [body["params"].get("cursor") is None for body in traffic.bodies] == [False, True]


# -- the cache on its own ------------------------------------------------------------------

KEY = CacheKey("http://h/mcp", "tools/list", "2026-07-28")


@pytest.mark.parametrize("ttl", [0, -5, 1.5, "1000", True, None])
def test_ttl_that_does_not_allow_reuse(ttl):
    cache = ResultCache()
    result = {"tools": [], "cacheScope": "public"}
    if ttl is not None:
        result["ttlMs"] = ttl
    assert cache.put(KEY, "p", result) is False
    assert cache.get(KEY, "p") is None


@pytest.mark.parametrize("scope", ["private", None, "shared", 1])
def test_anything_but_public_stays_with_its_principal(scope):
    cache = ResultCache()
    result = {"tools": [], "ttlMs": 1000}
    if scope is not None:
        result["cacheScope"] = scope
    cache.put(KEY, "alice", result)
    assert cache.get(KEY, "alice") == result
    assert cache.get(KEY, "bob") is None


def test_invalidate_by_method_and_param():
    cache = ResultCache()
    read_a = CacheKey("e", "resources/read", "v", (("uri", "a"),))
    read_b = CacheKey("e", "resources/read", "v", (("uri", "b"),))
    for key in (read_a, read_b, KEY):
        cache.put(key, "p", {"ttlMs": 1000, "cacheScope": "public"})
    assert cache.invalidate(method="resources/read", uri="a") == 1
    assert cache.get(read_a, "p") is None
    assert cache.get(read_b, "p") is not None
    assert cache.invalidate(method="resources/read") == 1
    assert len(cache) == 1


def test_bounded_size_drops_expired_then_oldest():
    clock = SteppedClock()
    cache = ResultCache(clock=clock, max_entries=2)
    keys = [CacheKey("e", "resources/read", "v", (("uri", str(n)),)) for n in range(3)]
    cache.put(keys[0], "p", {"ttlMs": 1000, "cacheScope": "public"})
    cache.put(keys[1], "p", {"ttlMs": 5000, "cacheScope": "public"})
    clock.now += 2
    cache.put(keys[2], "p", {"ttlMs": 5000, "cacheScope": "public"})
    assert cache.get(keys[1], "p") is not None and cache.get(keys[2], "p") is not None
    assert len(cache) == 2
    cache.put(keys[0], "p", {"ttlMs": 5000, "cacheScope": "public"})
    assert cache.get(keys[1], "p") is None  # the oldest made room


# -- the cache rules of each cacheable result type (schema.mdx repeats them per type) -------------

#: How the client asks for each cacheable result, by its schema type.
CACHEABLE = {
    "DiscoverResult": ("server/discover", lambda client: client.discover()),
    "ListToolsResult": ("tools/list", lambda client: client.list_tools()),
    "ListPromptsResult": ("prompts/list", lambda client: client.list_prompts()),
    "ListResourcesResult": ("resources/list", lambda client: client.list_resources()),
    "ListResourceTemplatesResult": ("resources/templates/list", lambda client: client.list_resource_templates()),
    "ReadResourceResult": ("resources/read", lambda client: client.read_resource("memo://x")),
}


def every_kind(hints: CacheHints) -> Server:
    """A server with one of everything, every cacheable result carrying `hints`."""
    kinds = Server("kinds", "1.0.0", cache=hints)
    kinds.tool(name="t")(lambda: "t")
    kinds.prompt(name="p")(lambda: "p")
    kinds.resource("memo://x")(lambda: "x")
    kinds.resource_template("notes://{name}")(lambda name: name)
    return kinds


@pytest.fixture(scope="module")
def kinds_urls():
    with (
        endpoint(StreamableHTTP(every_kind(CacheHints(0, "private")))) as stale,
        endpoint(StreamableHTTP(every_kind(CacheHints(10_000, "private")))) as fresh,
    ):
        yield {"stale": stale, "fresh": fresh}


async def fetched(client, traffic, kind: str) -> int:  # type: ignore[no-untyped-def]
    """How many requests asking for `kind` one more call of it sends."""
    method, ask = CACHEABLE[kind]
    before = traffic.methods.count(method)
    await ask(client)
    return traffic.methods.count(method) - before


@pytest.mark.parametrize("kind", CACHEABLE)
async def test_a_zero_ttl_result_is_stale_at_once(kinds_urls, kind):
    async with connect(kinds_urls["stale"], version="2026-07-28") as (client, traffic):
        assert await fetched(client, traffic, kind) == 1
        assert await fetched(client, traffic, kind) == 1


@pytest.mark.parametrize("kind", CACHEABLE)
async def test_a_positive_ttl_result_is_fresh_for_that_long(kinds_urls, kind):
    clock = SteppedClock()
    async with connect(kinds_urls["fresh"], version="2026-07-28", cache=ResultCache(clock=clock)) as (client, traffic):
        assert await fetched(client, traffic, kind) == 1
        clock.now += 9.9
        assert await fetched(client, traffic, kind) == 0
        clock.now += 0.1
        assert await fetched(client, traffic, kind) == 1


@pytest.mark.parametrize("kind", CACHEABLE)
async def test_a_private_result_is_not_shared_across_authorization(kinds_urls, kind):
    shared = ResultCache()
    alice = {"Authorization": "Bearer alice"}
    async with connect(kinds_urls["fresh"], version="2026-07-28", cache=shared, headers=alice) as (client, traffic):
        assert await fetched(client, traffic, kind) == 1
        assert await fetched(client, traffic, kind) == 0
    bob = {"Authorization": "Bearer bob"}
    async with connect(kinds_urls["fresh"], version="2026-07-28", cache=shared, headers=bob) as (client, traffic):
        assert await fetched(client, traffic, kind) == 1


@pytest.mark.parametrize("size", [0, -1])
def test_a_cache_must_hold_at_least_one_result(size):
    with pytest.raises(ValueError) as caught:
        ResultCache(max_entries=size)
    assert str(caught.value) == "max_entries must be at least 1"
    assert ResultCache(max_entries=1).max_entries == 1


def test_a_cache_holds_1024_results_unless_told():
    assert ResultCache().max_entries == 1024


def test_a_result_is_fresh_until_the_very_moment_its_ttl_ends():
    clock = SteppedClock()
    cache = ResultCache(clock=clock)
    cache.put(KEY, "p", {"tools": [], "ttlMs": 1500, "cacheScope": "public"})
    clock.now += 1.499
    assert cache.get(KEY, "p") is not None
    clock.now += 0.001
    assert cache.get(KEY, "p") is None
    assert len(cache) == 0  # a stale entry is dropped when found


def test_a_newer_result_for_the_same_request_replaces_the_older():
    clock = SteppedClock()
    cache = ResultCache(clock=clock, max_entries=2)
    other = CacheKey("http://h/mcp", "prompts/list", "2026-07-28")
    cache.put(other, "p", {"prompts": [], "ttlMs": 1000, "cacheScope": "public"})
    cache.put(KEY, "p", {"tools": ["old"], "ttlMs": 1000, "cacheScope": "public"})
    cache.put(KEY, "p", {"tools": ["new"], "ttlMs": 1000, "cacheScope": "public"})
    assert len(cache) == 2  # replaced, not added: nothing had to make room
    assert cache.get(KEY, "p") == {"tools": ["new"], "ttlMs": 1000, "cacheScope": "public"}
    assert cache.get(other, "p") is not None


def test_invalidate_by_endpoint_or_everything_and_clear():
    cache = ResultCache()
    here, there = KEY, CacheKey("http://elsewhere/mcp", "tools/list", "2026-07-28")
    for key in (here, there):
        cache.put(key, "p", {"ttlMs": 1000, "cacheScope": "public"})
    assert cache.invalidate(endpoint="http://elsewhere/mcp") == 1
    assert cache.get(here, "p") is not None and cache.get(there, "p") is None
    cache.put(there, "p", {"ttlMs": 1000, "cacheScope": "private"})
    assert cache.invalidate() == 2
    assert len(cache) == 0
    cache.put(here, "p", {"ttlMs": 1000, "cacheScope": "public"})
    cache.clear()
    assert cache.get(here, "p") is None and len(cache) == 0


def test_a_result_handed_out_or_put_in_is_a_copy_all_the_way_down():
    cache = ResultCache()
    result = {"tools": [{"name": "a", "annotations": {"title": "A"}}], "ttlMs": 1000, "cacheScope": "public"}
    cache.put(KEY, "p", result)
    result["tools"][0]["name"] = "changed after put"
    served = cache.get(KEY, "p")
    assert served is not None
    served["tools"][0]["annotations"]["title"] = "changed by a caller"
    served["tools"].append({"name": "b"})
    assert cache.get(KEY, "p") == {
        "tools": [{"name": "a", "annotations": {"title": "A"}}],
        "ttlMs": 1000,
        "cacheScope": "public",
    }


def test_one_millisecond_is_a_ttl():
    clock = SteppedClock()
    cache = ResultCache(clock=clock)
    assert cache.put(KEY, "p", {"tools": [], "ttlMs": 1, "cacheScope": "public"}) is True
    assert cache.get(KEY, "p") is not None
    clock.now += 0.001
    assert cache.get(KEY, "p") is None


def test_making_room_drops_a_result_that_expires_this_very_moment_before_an_older_fresh_one():
    clock = SteppedClock()
    cache = ResultCache(clock=clock, max_entries=2)
    older, ending, newer = (CacheKey("e", "resources/read", "v", (("uri", uri),)) for uri in ("old", "end", "new"))
    cache.put(older, "p", {"ttlMs": 60_000, "cacheScope": "public"})
    cache.put(ending, "p", {"ttlMs": 2000, "cacheScope": "public"})
    clock.now += 2  # `ending` is stale from now on (fresh only while now < received + ttl)
    cache.put(newer, "p", {"ttlMs": 60_000, "cacheScope": "public"})
    assert cache.get(older, "p") is not None and cache.get(newer, "p") is not None


async def test_the_probes_discover_result_is_cached_like_any_other(kinds_urls):
    """The era probe is a `server/discover` request: its answer is kept as that request's, so a
    `discover()` after the probe is served from the cache while the result is fresh."""
    clock = SteppedClock()
    async with connect(kinds_urls["fresh"], cache=ResultCache(clock=clock)) as (client, traffic):
        await client.list_tools()  # probes first
        assert traffic.methods == ["server/discover", "tools/list"]
        assert await fetched(client, traffic, "DiscoverResult") == 0
        clock.now += 10
        assert await fetched(client, traffic, "DiscoverResult") == 1


async def test_the_probes_private_discover_result_is_kept_for_its_principal_alone(kinds_urls):
    shared = ResultCache()
    alice, bob = {"Authorization": "Bearer alice"}, {"Authorization": "Bearer bob"}
    async with connect(kinds_urls["fresh"], cache=shared, headers=alice) as (client, traffic):
        await client.list_tools()  # probes first
        assert await fetched(client, traffic, "DiscoverResult") == 0
    async with connect(kinds_urls["fresh"], version="2026-07-28", cache=shared, headers=bob) as (client, traffic):
        assert await fetched(client, traffic, "DiscoverResult") == 1


def discover_app(result_type: str | None) -> Starlette:
    """A server whose `DiscoverResult`, with cache hints, names `result_type` (none if `None`)."""

    async def mcp(request: Request) -> JSONResponse:
        message = await request.json()
        result = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 60_000, "cacheScope": "public"}
        if result_type is not None:
            result["resultType"] = result_type
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result})

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])


async def test_a_probe_answer_that_is_not_complete_is_not_cached():
    with endpoint(discover_app("mystery")) as url:
        async with connect(url) as (client, traffic):
            for _ in range(2):  # the probe's own answer, then a fresh one: both judged alike
                with pytest.raises(ProtocolError, match="mystery"):
                    await client.discover()
    assert traffic.methods == ["server/discover", "server/discover"]  # nothing kept in between


async def test_a_probe_answer_without_a_result_type_is_complete_and_cached():
    with endpoint(discover_app(None)) as url:
        async with connect(url) as (client, traffic):
            first = await client.discover()
            assert await client.discover() == first
    assert traffic.methods == ["server/discover"]
