"""The pure parts of mcpref.client's OAuth: challenge parsing, discovery URLs, resource and iss checks.

The whole flow runs against the conformance suite's mock servers in its auth/* client scenarios
(tests/conformance/test_client_conformance.py).
"""

import pytest

from mcpref.client._auth import (
    AuthorizationError,
    authorization_server_metadata_urls,
    check_iss,
    parse_www_authenticate,
    resource_covers,
    resource_metadata_urls,
)


def test_a_challenge_with_quoted_and_token_parameters():
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://a.example/x, y"'
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
