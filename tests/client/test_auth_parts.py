"""The pure parts of mcpref.client's OAuth: challenge parsing, discovery URLs, resource and iss checks.

The whole flow runs against the conformance suite's mock servers in its auth/* client scenarios
(tests/conformance/test_client_conformance.py).
"""

import pytest

from mcpref.client._auth import (
    AuthorizationError,
    _application_type,
    authorization_server_metadata_urls,
    check_iss,
    parse_www_authenticate,
    resource_covers,
    resource_metadata_urls,
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

    with pytest.raises(ValueError, match="redirect_uri"):
        OAuth(redirect=redirect)  # a plain function listens nowhere we could guess
    from mcpref.client import ClientCredentials, ClientRegistration, JWTBearer

    # The grants without a user send nobody anywhere, and need none.
    assert ClientCredentials(ClientRegistration("c", "s")).redirect_uri == JWTBearer("jwt").redirect_uri == ""
    listener = LoopbackRedirect()
    assert OAuth(redirect=listener).redirect_uri == listener.redirect_uri == f"http://127.0.0.1:{listener.port}/callback"
    listener.close()


def test_a_client_metadata_document_names_itself():
    from mcpref.client import client_metadata_document

    document = client_metadata_document("https://app.example.com/client.json", ["http://127.0.0.1:1/cb"], "App")
    assert document["client_id"] == "https://app.example.com/client.json"
    assert {"client_id", "client_name", "redirect_uris"} <= set(document)
    assert "refresh_token" in document["grant_types"]
    with pytest.raises(ValueError):
        client_metadata_document("http://app.example.com/client.json", [], "App")


def test_oauth_is_for_http_only():
    from mcpref.client import Client, OAuth, StdioTransport

    async def redirect(url: str) -> str:
        return url

    with pytest.raises(TypeError, match="HTTP"):
        Client(StdioTransport(["true"]), auth=OAuth(redirect=redirect, redirect_uri="http://127.0.0.1:1/cb"))
