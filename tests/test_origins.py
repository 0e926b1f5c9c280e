from __future__ import annotations

import pytest

from mcpref.origins import HostPolicy, OriginPolicy, split_host


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),
        ("http://localhost", True),
        ("https://127.0.0.1:8443", True),
        ("http://[::1]:8000", True),
        ("https://evil.example", False),
        ("null", False),
        ("file://localhost", False),
        ("http://localhost:99999", False),
        ("http://127.0.0.1.nip.io", False),
    ],
)
def test_default_policy_allows_loopback_only(origin: str | None, allowed: bool) -> None:
    assert OriginPolicy().allows(origin) is allowed


def test_listed_origins_are_compared_without_case_or_trailing_slash() -> None:
    policy = OriginPolicy(["https://App.example/"], allow_loopback=False)
    assert policy.allows("https://app.example")
    assert not policy.allows("http://localhost")


def test_star_allows_everything() -> None:
    assert OriginPolicy(["*"]).allows("https://anything.example")


def test_a_listed_origin_matches_with_or_without_a_trailing_slash_in_any_case() -> None:
    policy = OriginPolicy(["https://tools.box"], allow_loopback=False)
    for origin in ("https://tools.box", "https://tools.box/", "HTTPS://TOOLS.BOX"):
        assert policy.allows(origin), origin
    assert not policy.allows("https://tools.bo")
    assert not policy.allows("/https://tools.box")
    assert OriginPolicy(["https://tools.BOX/"], allow_loopback=False).allows("https://tools.box")


def test_the_origin_allowlist_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_ALLOWED_ORIGINS", " https://a.example , ,https://B.example/")
    policy = OriginPolicy.from_env()
    assert policy.allowed == {"https://a.example", "https://b.example"}
    assert policy.allow_loopback
    monkeypatch.delenv("MCP_ALLOWED_ORIGINS")
    assert OriginPolicy.from_env().allowed == frozenset()


LOOPBACK = ("127.0.0.1", 8000)


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000", "[::1]", "::1", "LOCALHOST"]
)
def test_a_loopback_bind_answers_loopback_names(host: str) -> None:
    assert HostPolicy().allows(host, LOOPBACK)


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:8000",
        "localhost.evil.example",
        "[::1",
        "[localhost:",
        "localhost:8000:1",
        "[evil]:8000",
        "",
        # Read whole (issue 25): what follows a loopback name is a port or nothing.
        "127.0.0.1:8000@evil.example",
        "localhost@evil.example",
        "[::1]:8000@evil.example",
        "127.0.0.1:8000/",
        "127.0.0.1:80000",
        "127.0.0.1:8o",
        "127.0.0.1 ",
        "localhost:+80",
        "[127.0.0.1]:8000",
    ],
)
def test_a_loopback_bind_refuses_other_names(host: str) -> None:
    assert not HostPolicy().allows(host, LOOPBACK)


def test_a_malformed_host_is_refused_even_where_any_name_is_allowed() -> None:
    assert HostPolicy(["*"]).allows("anything.example:8000", LOOPBACK)
    assert not HostPolicy(["*"]).allows("127.0.0.1:8000@evil.example", LOOPBACK)


@pytest.mark.parametrize(
    ("host", "parts"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", 8000)),
        ("LocalHost", ("localhost", None)),
        ("[::1]:8000", ("::1", 8000)),
        ("[::1]", ("::1", None)),
        ("::1", ("::1", None)),
        ("mcp_box.internal:", ("mcp_box.internal", None)),
        ("127.0.0.1:8000@evil.example", None),
        ("[::1]x", None),
        ("[zz]:1", None),
        ("host:65535", ("host", 65535)),
        ("host:65536", None),
    ],
)
def test_split_host_reads_a_name_and_a_port_and_nothing_else(host: str, parts: tuple[str, int | None] | None) -> None:
    assert split_host(host) == parts


def test_a_request_without_host_or_local_address_is_not_judged() -> None:
    assert HostPolicy().allows(None, LOOPBACK)
    assert HostPolicy().allows("evil.example", None)


@pytest.mark.parametrize("address", ["10.0.0.5", "192.0.2.1", "2001:db8::1", "not-an-address"])
def test_the_host_check_is_off_on_an_address_that_is_not_loopback(address: str) -> None:
    assert HostPolicy().allows("evil.example", (address, 8000))


@pytest.mark.parametrize("address", ["127.0.0.1", "127.8.9.10", "::1"])
def test_every_loopback_address_turns_the_host_check_on(address: str) -> None:
    policy = HostPolicy()
    assert not policy.allows("evil.example", (address, 8000))
    assert not policy.allows("evil.example", (address, 8000)), "the second request is judged the same"


def test_listed_hosts_extend_the_loopback_names_without_case() -> None:
    policy = HostPolicy(["MCP.Internal"])
    assert policy.allows("mcp.internal:8000", LOOPBACK)
    assert policy.allows("Mcp.Internal", LOOPBACK)
    assert not policy.allows("other.internal", LOOPBACK)
    assert HostPolicy(["*"]).allows("anything.example", LOOPBACK)


def test_the_host_allowlist_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_ALLOWED_HOSTS", " mcp.internal , ,Box.Example")
    assert HostPolicy.from_env().allowed == {"mcp.internal", "box.example"}
    monkeypatch.delenv("MCP_ALLOWED_HOSTS")
    assert HostPolicy.from_env().allowed == frozenset()


def test_good_hosts_are_remembered_up_to_64() -> None:
    policy = HostPolicy(["*"])
    assert policy.known_good == set()
    for n in range(70):
        assert policy.allows(f"host{n}.example", LOOPBACK)
    assert policy.known_good == {f"host{n}.example" for n in range(64)}
    assert not HostPolicy().allows("evil.example", LOOPBACK)
    refusing = HostPolicy()
    refusing.allows("evil.example", LOOPBACK)
    assert refusing.known_good == set(), "a refused host is never remembered"
