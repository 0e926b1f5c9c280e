"""The pure parts of mcpref.client's OAuth: challenge parsing, discovery URLs, resource and iss checks.

The whole flow runs against the conformance suite's mock servers in its auth/* client scenarios
(tests/conformance/test_client_conformance.py).
"""

import base64
import time

import httpx
import pytest
from joserfc import jwt

from mcpref.client._auth import (
    AuthorizationError,
    ClientRegistration,
    Tokens,
    _answer,
    _application_type,
    _auth_method,
    _basic,
    _endpoint,
    authorization_server_metadata_urls,
    canonical_resource,
    check_iss,
    client_assertion,
    parse_www_authenticate,
    resource_covers,
    resource_metadata_urls,
    tokens_from,
)


def test_a_challenge_with_quoted_and_token_parameters():
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://a.example/x, y"'
    )
    assert parse_www_authenticate(header) == {
        "bearer": {
            "error": "insufficient_scope",
            "scope": "files:read files:write",
            "resource_metadata": "https://a.example/x, y",
        }
    }


def test_two_challenges_and_an_escaped_quote():
    header = 'DPoP algs="ES256", Bearer realm="say \\"hi\\"", error=invalid_token'
    assert parse_www_authenticate(header) == {
        "dpop": {"algs": "ES256"},
        "bearer": {"realm": 'say "hi"', "error": "invalid_token"},
    }


def test_a_parameter_before_any_scheme_and_an_empty_list_element_are_passed_over():
    """RFC 9110 §5.6.1: a list may hold empty elements (`,,`), which recipients skip; a parameter
    with no scheme before it belongs to no challenge."""
    assert parse_www_authenticate('realm="x", Bearer error="invalid_token",, scope="a b"') == {
        "bearer": {"error": "invalid_token", "scope": "a b"}
    }


def test_garbage_is_no_challenge():
    assert parse_www_authenticate("") == {}
    assert parse_www_authenticate('"unterminated') == {}


def test_metadata_urls_in_the_spec_order():
    assert resource_metadata_urls("https://ex.com/public/mcp") == [
        "https://ex.com/.well-known/oauth-protected-resource/public/mcp",
        "https://ex.com/.well-known/oauth-protected-resource",
    ]
    assert authorization_server_metadata_urls("https://auth.ex.com/tenant1") == [
        "https://auth.ex.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.ex.com/.well-known/openid-configuration/tenant1",
        "https://auth.ex.com/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.ex.com") == [
        "https://auth.ex.com/.well-known/oauth-authorization-server",
        "https://auth.ex.com/.well-known/openid-configuration",
    ]


def test_a_canonical_resource_has_a_lower_case_scheme_and_host_and_no_fragment():
    """RFC 8707 §2 and index.mdx, Canonical Server URI: the path and query are kept as they are."""
    assert canonical_resource("HTTPS://MCP.Example.COM:8443/Path/MCP?Tenant=A#frag") == (
        "https://mcp.example.com:8443/Path/MCP?Tenant=A"
    )


@pytest.mark.parametrize(
    ("resource", "endpoint", "covers"),
    [
        ("https://ex.com/api", "https://ex.com/api/mcp", True),
        ("https://ex.com/api/", "https://ex.com/api/mcp", True),
        ("https://ex.com/", "https://ex.com", True),
        ("https://ex.com/apiX", "https://ex.com/api/mcp", False),
        ("https://ex.com/api", "https://ex.com/apiary/mcp", False),
    ],
)
def test_a_resource_covers_the_endpoints_below_its_path_by_whole_segments(resource, endpoint, covers):
    assert resource_covers(resource, endpoint) is covers


@pytest.mark.parametrize(
    ("resource", "covers"),
    [
        ("https://ex.com/mcp", True),
        ("https://EX.com/mcp", True),
        ("https://ex.com", True),
        ("https://ex.com/", True),
        ("https://ex.com/mc", False),
        ("https://ex.com/mcp/other", False),
        ("http://ex.com/mcp", False),
        ("https://evil.example.com/mcp", False),
        ("https://ex.com:8443/mcp", False),
    ],
)
def test_which_resources_may_speak_for_an_endpoint(resource, covers):
    assert resource_covers(resource, "https://ex.com/mcp") is covers


ISSUER = "https://auth.ex.com"


@pytest.mark.parametrize(
    ("advertised", "iss", "accepted"),
    [
        (True, [ISSUER], True),
        (True, [], False),
        (None, [ISSUER], True),
        (None, [], True),
        (None, ["https://evil.example.com"], False),
        (True, [ISSUER + "/"], False),
        (True, ["HTTPS://auth.ex.com"], False),
        (True, [ISSUER, ISSUER], False),
    ],
)
def test_the_rfc_9207_table(advertised, iss, accepted):
    metadata = {} if advertised is None else {"authorization_response_iss_parameter_supported": advertised}
    callback = {"iss": iss} if iss else {}
    if accepted:
        check_iss(callback, ISSUER, metadata)
    else:
        with pytest.raises(AuthorizationError):
            check_iss(callback, ISSUER, metadata)


@pytest.mark.parametrize(
    ("redirect_uri", "kind"),
    [
        ("http://127.0.0.1:33418/callback", "native"),
        ("http://localhost:8080/cb", "native"),
        ("com.example.app:/callback", "native"),
        ("https://app.example.com/callback", "web"),
    ],
)
def test_the_application_type_follows_the_redirect_uri(redirect_uri, kind):
    assert _application_type(redirect_uri) == kind


def test_the_application_type_follows_the_redirect():
    from mcpref.client._auth import _application_type

    assert _application_type("http://127.0.0.1:33418/callback") == "native"
    assert _application_type("http://localhost/cb") == "native"
    assert _application_type("https://app.example.com/oauth/callback") == "web"


def test_redirects_and_metadata_urls_that_would_leak_are_refused_up_front():
    from mcpref.client import OAuth

    async def redirect(url: str) -> str:
        return url

    OAuth(redirect=redirect, redirect_uri="https://app.example.com/cb")
    with pytest.raises(ValueError, match="loopback"):
        OAuth(redirect=redirect, redirect_uri="http://app.example.com/cb")
    with pytest.raises(ValueError, match="https URL with a path"):
        OAuth(redirect=redirect, redirect_uri="http://127.0.0.1:1/cb", client_metadata_url="https://app.example.com/")


def test_the_redirect_uri_is_the_listeners_and_never_a_fixed_port():
    from mcpref.client import LoopbackRedirect, OAuth

    async def redirect(url: str) -> str:
        return url

    with pytest.raises(ValueError) as refused:
        OAuth(redirect=redirect)  # a plain function listens nowhere we could guess
    assert str(refused.value) == (
        "OAuth needs a redirect_uri: the URI at which `redirect` gets the authorization response"
    )
    from mcpref.client import ClientCredentials, ClientRegistration, JWTBearer

    # The grants without a user send nobody anywhere, and need none.
    assert ClientCredentials(ClientRegistration("c", "s")).redirect_uri == JWTBearer("jwt").redirect_uri == ""
    listener = LoopbackRedirect()
    assert (
        OAuth(redirect=listener).redirect_uri == listener.redirect_uri == f"http://127.0.0.1:{listener.port}/callback"
    )
    listener.close()


def test_a_client_metadata_document_names_itself():
    from mcpref.client import client_metadata_document

    document = client_metadata_document(
        "https://app.example.com/client.json",
        ["http://127.0.0.1:1/cb"],
        "App",
        logo_uri="https://app.example.com/l.png",
    )
    assert document == {
        "client_id": "https://app.example.com/client.json",
        "client_name": "App",
        "redirect_uris": ["http://127.0.0.1:1/cb"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "logo_uri": "https://app.example.com/l.png",
    }
    for url in ("http://app.example.com/client.json", "https://app.example.com", "https://app.example.com/"):
        with pytest.raises(ValueError) as refused:
            client_metadata_document(url, [], "App")
        assert str(refused.value) == f"a client ID metadata document's URL must be https with a path, not {url!r}"


def test_oauth_is_for_http_only():
    from mcpref.client import Client, OAuth, StdioTransport

    async def redirect(url: str) -> str:
        return url

    with pytest.raises(TypeError, match="HTTP"):
        Client(StdioTransport(["true"]), auth=OAuth(redirect=redirect, redirect_uri="http://127.0.0.1:1/cb"))


def test_an_issuers_terminating_slash_is_removed_before_the_well_known_part_goes_in():
    """RFC 8414 §3.1: "any terminating "/" MUST be removed"; an issuer with no path has two URIs."""
    assert authorization_server_metadata_urls("https://auth.ex.com/MAX/") == [
        "https://auth.ex.com/.well-known/oauth-authorization-server/MAX",
        "https://auth.ex.com/.well-known/openid-configuration/MAX",
        "https://auth.ex.com/MAX/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.ex.com/") == authorization_server_metadata_urls(
        "https://auth.ex.com"
    )


def test_a_trailing_slash_names_the_same_resource_metadata():
    assert resource_metadata_urls("https://ex.com/public/mcp/") == resource_metadata_urls("https://ex.com/public/mcp")
    assert resource_metadata_urls("https://ex.com/MAX/")[0] == "https://ex.com/.well-known/oauth-protected-resource/MAX"
    assert resource_metadata_urls("https://ex.com/") == ["https://ex.com/.well-known/oauth-protected-resource"]


def test_each_iss_refusal_says_why():
    with pytest.raises(AuthorizationError) as two:
        check_iss({"iss": [ISSUER, ISSUER]}, ISSUER, {})
    assert str(two.value) == "the authorization response has more than one iss"
    with pytest.raises(AuthorizationError) as missing:
        check_iss({}, ISSUER, {"authorization_response_iss_parameter_supported": True})
    assert str(missing.value) == (
        f"{ISSUER} advertises iss in authorization responses, and this one has none: refused (RFC 9207)"
    )


@pytest.mark.parametrize(
    ("redirect_uri", "kind"),
    [("http://[::1]:8080/cb", "native"), ("HTTP://app.example.com/cb", "web"), ("HTTPS://app.example.com/cb", "web")],
)
def test_a_loopback_literal_is_native_and_a_scheme_is_read_without_case(redirect_uri, kind):
    assert _application_type(redirect_uri) == kind


@pytest.mark.parametrize(
    ("secret", "methods", "method"),
    [
        (None, ["client_secret_post"], "none"),
        ("s", None, "client_secret_basic"),  # RFC 8414's default
        ("s", [], "client_secret_basic"),
        ("s", ["client_secret_post"], "client_secret_post"),
        ("s", ["client_secret_post", "client_secret_basic"], "client_secret_basic"),
        ("s", ["private_key_jwt"], "client_secret_basic"),
    ],
)
def test_how_a_client_authenticates_at_the_token_endpoint(secret, methods, method):
    metadata = {} if methods is None else {"token_endpoint_auth_methods_supported": methods}
    assert _auth_method(metadata, ClientRegistration("c", secret)) == method


def test_http_basic_form_encodes_both_parts_first():
    """RFC 6749 §2.3.1: `:` or `/` in an ID and `/` or `%` in a secret are escaped before the pair is joined."""
    header = _basic("my:app/X", "s/cr%t éX")
    assert header.startswith("Basic ")
    assert base64.b64decode(header.removeprefix("Basic ")).decode("ascii") == "my%3Aapp%2FX:s%2Fcr%25t%20%C3%A9X"


def test_a_token_is_expired_from_thirty_seconds_before_its_end():
    tokens = Tokens("a", expires_at=100.0)
    assert (tokens.expired(69.9), tokens.expired(70.0)) == (False, True)
    assert Tokens("a").expired(1e12) is False  # no expires_in: trusted until refused


@pytest.mark.parametrize(
    "answer",
    [
        {"token_type": "Bearer"},
        {"access_token": "", "token_type": "Bearer"},
        {"access_token": 7, "token_type": "Bearer"},
        {"access_token": "a"},
        {"access_token": "a", "token_type": None},
    ],
)
def test_a_token_response_without_a_token_is_refused_in_words(answer):
    """A non-empty string token and a string token_type, both (OAuth 2.1 §3.2.3)."""
    with pytest.raises(AuthorizationError) as refused:
        tokens_from(answer, None)
    assert str(refused.value) == "the token response has no access_token or token_type"


def test_a_refresh_token_is_kept_only_as_a_string():
    kept = tokens_from({"access_token": "a", "token_type": "Bearer", "refresh_token": "r"}, None)
    dropped = tokens_from({"access_token": "a", "token_type": "Bearer", "refresh_token": 5}, None)
    assert (kept.refresh_token, dropped.refresh_token) == ("r", None)


@pytest.mark.parametrize("value", [None, "", 5])
def test_metadata_without_an_endpoint_url_is_named(value):
    metadata = {} if value is None else {"token_endpoint": value}
    with pytest.raises(AuthorizationError) as missing:
        _endpoint(metadata, "token_endpoint")
    assert str(missing.value) == "the authorization server metadata has no token_endpoint"
    assert _endpoint({"token_endpoint": "https://as.example/token"}, "token_endpoint") == "https://as.example/token"


def test_a_refusal_names_the_oauth_error_and_its_description_if_any():
    for body, detail in (
        ({"error": "invalid_grant", "error_description": "code used"}, "invalid_grant: code used"),
        ({"error": "invalid_grant"}, "invalid_grant: "),
    ):
        with pytest.raises(AuthorizationError) as refused:
            _answer(httpx.Response(400, json=body), "token request")
        assert str(refused.value) == f"token request refused (HTTP 400): {detail}"
        assert refused.value.error == "invalid_grant"


def test_a_refusal_that_is_no_oauth_error_shows_the_first_200_characters_of_the_body():
    bodies = (httpx.Response(502, text="x" * 300), httpx.Response(200, text="y" * 300), httpx.Response(200, json=[1]))
    for response in bodies:
        with pytest.raises(AuthorizationError) as refused:
            _answer(response, "client registration")
        status = response.status_code
        assert str(refused.value) == f"client registration refused (HTTP {status}): {response.text[:200]}"
        assert refused.value.error is None
    created = httpx.Response(201, json={"client_id": "c"})
    assert _answer(created, "client registration", (200, 201)) == {"client_id": "c"}


@pytest.mark.parametrize(
    "algorithm",
    [
        "ES256",
        "RS256",
        "PS256",
        "Ed25519",
        "Ed448",
        pytest.param(
            "EdDSA", marks=pytest.mark.filterwarnings("ignore:EdDSA is deprecated:joserfc.errors.SecurityWarning")
        ),
    ],
)
def test_a_client_assertion_vouches_for_the_client_to_one_server_briefly_and_once(algorithm):
    """RFC 7523 §3 (private_key_jwt): iss and sub the client ID, aud the authorization server's
    issuer, five minutes, a fresh jti; signed with the registration's key and algorithm."""
    private, public = _key_pair(algorithm)
    registration = ClientRegistration("app-1", private_key=private, signing_algorithm=algorithm)
    before = int(time.time())
    first = client_assertion(registration, "https://auth.ex.com")
    second = client_assertion(registration, "https://auth.ex.com", lifetime=60)
    token = jwt.decode(first, public, algorithms=[algorithm])
    assert token.header == {"alg": algorithm, "typ": "JWT"}
    claims = token.claims
    assert set(claims) == {"iss", "sub", "aud", "iat", "exp", "jti"}
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("app-1", "app-1", "https://auth.ex.com")
    assert before <= claims["iat"] <= int(time.time()) and claims["exp"] == claims["iat"] + 300
    later = jwt.decode(second, public, algorithms=[algorithm]).claims
    assert later["exp"] == later["iat"] + 60 and later["jti"] != claims["jti"] and len(claims["jti"]) == 24


@pytest.mark.parametrize("algorithm", ["HS256", "none", "Ed", ""])
def test_a_client_assertion_with_an_algorithm_it_cannot_sign_with_is_refused_by_name(algorithm):
    """private_key_jwt signs with a private key: an algorithm outside ES*, RS*, PS*, EdDSA,
    Ed25519 and Ed448 is named in the error, not imported as an Edwards key to fail somewhere obscure."""
    private, _ = _key_pair("Ed25519")
    registration = ClientRegistration("app-1", private_key=private, signing_algorithm=algorithm)
    with pytest.raises(ValueError) as refused:
        client_assertion(registration, "https://auth.ex.com")
    assert str(refused.value) == (
        f"private_key_jwt cannot sign with {algorithm!r}: "
        "use ES*, RS*, PS*, EdDSA, Ed25519 or Ed448 (an asymmetric one)"
    )


def _key_pair(algorithm: str) -> tuple[str, object]:
    """A PEM private key for `algorithm`, and its public key as a joserfc key."""
    from joserfc.jwk import ECKey, OKPKey, RSAKey

    okp = {name: (OKPKey, "Ed448" if name == "Ed448" else "Ed25519") for name in ("EdDSA", "Ed25519", "Ed448")}
    kind = {"ES256": (ECKey, "P-256"), **okp}.get(algorithm, (RSAKey, 2048))
    key = kind[0].generate_key(kind[1])
    pem = key.as_pem(private=True).decode()
    return pem, kind[0].import_key(key.as_pem(private=False))


def test_a_token_response_gives_a_bearer_token_or_a_dpop_one_where_asked_and_its_granted_scopes():
    """OAuth 2.1 §3.2.3: `scope` is what was granted, and without it what was asked for; a DPoP
    token is taken only when the client asked for one (RFC 9449), a Bearer one always."""
    granted = tokens_from({"access_token": "a", "token_type": "bearer", "scope": "x y"}, ["z"])
    assert (granted.token_type, granted.scopes) == ("bearer", {"x", "y"})
    assert tokens_from({"access_token": "a", "token_type": "Bearer"}, ["z"], dpop=True).scopes == {"z"}
    assert tokens_from({"access_token": "a", "token_type": "DPoP"}, None, dpop=True).token_type == "DPoP"
    with pytest.raises(AuthorizationError, match="token_type is 'DPoP'"):
        tokens_from({"access_token": "a", "token_type": "DPoP"}, None)  # bearer only, unless asked
    for kind, dpop in (("DPoP", False), ("mac", True)):
        with pytest.raises(AuthorizationError) as refused:
            tokens_from({"access_token": "a", "token_type": kind}, None, dpop=dpop)
        assert str(refused.value) == f"the token response's token_type is {kind!r}, which this client cannot use"


@pytest.mark.parametrize(
    ("redirect_uri", "taken"),
    [
        ("https://app.example.com/cb", True),
        ("http://localhost:8080/cb", True),
        ("http://127.0.0.1:8080/cb", True),
        ("http://[::1]:8080/cb", True),
        ("http://app.example.com/cb", False),
        ("http://localhost.example.com/cb", False),
        ("ftp://127.0.0.1/cb", False),
    ],
)
def test_a_redirect_uri_is_https_or_http_to_a_loopback_host(redirect_uri, taken):
    """security-considerations.mdx, Communication Security: redirect URIs are localhost or HTTPS,
    so a code never crosses the network in the clear (OAuth 2.1 §1.5)."""
    from mcpref.client import OAuth

    async def redirect(url: str) -> str:
        return url

    if taken:
        assert OAuth(redirect=redirect, redirect_uri=redirect_uri).redirect_uri == redirect_uri
    else:
        with pytest.raises(ValueError) as refused:
            OAuth(redirect=redirect, redirect_uri=redirect_uri)
        assert str(refused.value) == (
            f"redirect_uri {redirect_uri!r} must be https, or http on a loopback address "
            "(security-considerations.mdx, Communication Security)"
        )


@pytest.mark.anyio
async def test_each_request_to_an_authorization_server_has_30_seconds_unless_told_otherwise():
    """`OAuth(timeout=...)`: the flow's own client waits that long for each request, by default 30 s."""
    from mcpref.client import OAuth

    async def redirect(url: str) -> str:
        return url

    for options, seconds in (({}, 30.0), ({"timeout": 2.5}, 2.5)):
        async with OAuth(redirect=redirect, redirect_uri="http://127.0.0.1:1/cb", **options)._new_http() as http:
            assert http.timeout == httpx.Timeout(seconds)
