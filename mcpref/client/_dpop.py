"""DPoP proofs (RFC 9449): tokens bound to a key the client holds, proven on every request.

A DPoP-bound access token is useless without the private key: each request carries a fresh
proof, a JWT signed with that key naming the method (`htm`), the URL without query (`htu`), the
time (`iat`), a unique `jti`, the token's hash (`ath`) and, when the server demanded one, its
`nonce`. The MCP DPoP extension (SEP-1932) uses it for the token request and every MCP request.
JWS signing is joserfc's.
"""

from __future__ import annotations

import hashlib
import json
import time
from urllib.parse import urlsplit, urlunsplit

from authlib.common.security import generate_token

from ..sealing import b64url_encode

#: The header that carries the proof, and the one a server sends a nonce in.
DPOP_HEADER = "DPoP"
NONCE_HEADER = "DPoP-Nonce"


class DPoPKey:
    """One key pair per client: its public half travels in each proof's header (`jwk`)."""

    algorithm = "ES256"

    def __init__(self) -> None:
        from joserfc.jwk import ECKey  # here: only a client that meets DPoP pays for the import

        self._key = ECKey.generate_key("P-256")
        self._public = self._key.as_dict(private=False)
        #: The latest nonce each server (by origin) asked for.
        self.nonces: dict[str, str] = {}

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        parts = urlsplit(url)
        claims = {
            "jti": generate_token(24),
            "htm": method.upper(),
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            "iat": int(time.time()),
        }
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = b64url_encode(digest)
        nonce = self.nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        from joserfc import jws

        header = {"typ": "dpop+jwt", "alg": self.algorithm, "jwk": self._public}
        return jws.serialize_compact(header, json.dumps(claims, separators=(",", ":")).encode(), self._key)

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Keep a server's new nonce; True if it is new (the request is worth retrying)."""
        if not nonce or self.nonces.get(_origin(url)) == nonce:
            return False
        self.nonces[_origin(url)] = nonce
        return True


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()
