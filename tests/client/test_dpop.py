"""DPoP proofs (client/_dpop.py, RFC 9449 §4): each proof is a JWT signed with the client's key,
whose header carries the public key and whose claims name the request, verified here with
joserfc as a resource server would verify it."""

from __future__ import annotations

import base64
import hashlib
import json
import time

from joserfc import jws
from joserfc.jwk import ECKey

from mcpref.client._dpop import DPOP_HEADER, NONCE_HEADER, DPoPKey


def verified(proof: str) -> tuple[dict, dict]:
    """The proof's header and claims, once its signature checks out with the key it carries."""
    header = json.loads(base64.urlsafe_b64decode(proof.split(".")[0] + "=="))
    public = ECKey.import_key(header["jwk"])
    token = jws.deserialize_compact(proof, public, algorithms=["ES256"])
    return token.protected, json.loads(token.payload)


def test_a_proof_names_the_request_and_is_signed_with_the_key_it_carries() -> None:
    key = DPoPKey()
    before = int(time.time())
    header, claims = verified(key.proof("post", "https://RS.example:8443/mcp/path?query=1#fragment"))
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    assert header["jwk"]["kty"] == "EC" and header["jwk"]["crv"] == "P-256"
    assert "d" not in header["jwk"]  # the public half only
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://RS.example:8443/mcp/path"  # no query, no fragment
    assert before <= claims["iat"] <= int(time.time())
    assert set(claims) == {"jti", "htm", "htu", "iat"}  # no token, no nonce: no ath, no nonce
    assert len(claims["jti"]) >= 24
    assert {verified(key.proof("GET", "https://rs.example/"))[1]["jti"] for _ in range(3)} != {claims["jti"]}


def test_a_proof_for_a_token_carries_its_hash() -> None:
    _, claims = verified(DPoPKey().proof("GET", "https://rs.example/mcp", access_token="tok-123"))
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"tok-123").digest()).rstrip(b"=").decode()
    assert claims["ath"] == digest


def test_one_key_per_client_and_a_nonce_per_server_origin() -> None:
    key, other = DPoPKey(), DPoPKey()
    assert (
        verified(key.proof("GET", "https://a.example/"))[0]["jwk"]
        == verified(key.proof("GET", "https://a.example/x"))[0]["jwk"]
    )
    assert (
        verified(key.proof("GET", "https://a.example/"))[0]["jwk"]
        != verified(other.proof("GET", "https://a.example/"))[0]["jwk"]
    )
    assert key.remember_nonce("https://A.example/token", "n1") is True  # new: worth retrying
    assert key.remember_nonce("https://a.example/mcp", "n1") is False  # the same origin's same nonce
    assert key.remember_nonce("https://a.example/mcp", "") is False
    assert key.remember_nonce("https://a.example/mcp", None) is False
    assert verified(key.proof("POST", "https://a.example/mcp"))[1]["nonce"] == "n1"
    assert "nonce" not in verified(key.proof("POST", "https://b.example/mcp"))[1]  # another server's
    assert key.remember_nonce("https://a.example/mcp", "n2") is True
    assert verified(key.proof("POST", "https://a.example/other"))[1]["nonce"] == "n2"
    assert key.nonces == {"https://a.example": "n2"}
    assert (DPOP_HEADER, NONCE_HEADER) == ("DPoP", "DPoP-Nonce")
