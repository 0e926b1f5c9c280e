"""Sealed tokens: what the server hands the client to carry, and must trust when it comes back.

There is no session in 2026-07-28
([`basic/index.mdx` §Statelessness](https://modelcontextprotocol.io/specification/2026-07-28/basic#statelessness)):
what spans requests travels with the client. The `requestState` of a multi-round-trip request
(mrtr.py) and the handles a tool mints (mcpref/examples/reference_server/handles.py) are both
sealed here, the same way:

    base64url(payload) "." base64url(HMAC-SHA256(purpose key, payload))

The payload is a JSON object laid out by the caller. It holds its expiry (`exp`) and the claims the
token is bound to, such as the issuing server (`i`) and the principal (`p`); `open` refuses a
token whose claims differ from the ones expected, or that has expired.

A `Sealer` serves one purpose. Its key is derived from the deployment key (`MCP_STATE_KEY`) and
the purpose, so a token sealed for one purpose (a handle) never opens as another (a
`requestState`): its signature does not match. A token is signed, not encrypted: the client can
read the payload, so nothing secret goes in.

Every token has one spelling, unpadded base64url (RFC 4648 §5), and only that spelling is read
back, so a token cannot be varied to look new.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import time
from collections.abc import Mapping
from typing import Any

__all__ = [
    "EXPIRES",
    "ISSUER",
    "KEY_ENV_VAR",
    "MALFORMED",
    "PRINCIPAL",
    "SIGNATURE",
    "Refused",
    "Sealer",
    "b64url_decode",
    "b64url_encode",
]

logger = logging.getLogger("mcpref.sealing")

KEY_ENV_VAR = "MCP_STATE_KEY"
"""The environment variable holding the deployment key: the same value on every instance."""

# Claims every sealed payload uses for the same thing, whatever its purpose.
ISSUER = "i"
"""Claim: the server that sealed the token."""
PRINCIPAL = "p"
"""Claim: the caller the token was sealed for."""
EXPIRES = "exp"
"""Claim: when the token stops opening (Unix seconds); also the `Refused.reason` of an expired one."""

# `Refused.reason`: any reason but these two is the claim that failed (an expected one, or `EXPIRES`).
MALFORMED = "malformed"
"""`Refused.reason` for a token that is no token a sealer writes."""
SIGNATURE = "signature"
"""`Refused.reason` for a token whose signature does not match (another key, or another purpose)."""


class Refused(ValueError):
    """A token that cannot be trusted. `reason` names the check it failed (`MALFORMED`,
    `SIGNATURE`, `EXPIRES`, or an expected claim), for the caller to word for its readers.

    Args:
        reason: The check that failed.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Sealer:
    """Seals and opens tokens for one `purpose`, with a key shared by the deployment.

    Args:
        purpose: What its tokens are for (`"requestState"`, a handle's kind): mixed into the key,
            so a token sealed for one purpose never opens for another.
        key: The deployment's secret; by default `MCP_STATE_KEY`. Without either the sealer makes
            up a key of its own, and a token sealed by another process (or another sealer) is
            refused.
        ttl_seconds: How long a token lives: `expiry()` is the `exp` to seal.

    Raises:
        ValueError: An empty `key`, which anyone could sign with.
    """

    def __init__(self, purpose: str, key: bytes | None = None, ttl_seconds: int = 600) -> None:
        if key is None:
            configured = os.environ.get(KEY_ENV_VAR)
            if configured:
                key = configured.encode()
            else:
                logger.info("%s is not set: %s is sealed with a per-process key", KEY_ENV_VAR, purpose)
                key = os.urandom(32)
        elif not key:
            raise ValueError("an empty key seals nothing: anyone could sign with it")
        self.purpose = purpose
        self.ttl_seconds = ttl_seconds
        self._key = hmac.new(key, f"mcpref-seal:{purpose}".encode(), hashlib.sha256).digest()

    def expiry(self, now: float | None = None) -> int:
        """The `exp` claim of a token sealed `now`.

        Args:
            now: The time of sealing, in epoch seconds; None: now.

        Returns:
            The second after which the token is refused.
        """
        return int((time.time() if now is None else now) + self.ttl_seconds)

    def seal(self, payload: Mapping[str, Any]) -> str:
        """Seal a payload as a token only this deployment's key opens (signed, not encrypted:
        the client can read it, never change it).

        Args:
            payload: JSON-serialisable claims, `exp` among them (`expiry()`).

        Returns:
            The token: the payload and its HMAC-SHA256, each in base64url.

        Raises:
            ValueError: The payload holds no `exp`.
        """
        if EXPIRES not in payload:
            raise ValueError("a sealed payload holds its expiry: add exp=sealer.expiry()")
        # Compact, and with ASCII escapes, so a payload holding client text (a lone surrogate) encodes.
        body = json.dumps(payload, separators=(",", ":")).encode()
        return f"{b64url_encode(body)}.{b64url_encode(self._mac(body))}"

    def open(self, token: Any, claims: Mapping[str, Any], *, now: float | None = None) -> dict[str, Any]:
        """The payload sealed in `token`, once its spelling, its signature, each of `claims` (in
        their order) and its expiry check out; otherwise `Refused`, naming the first that failed.
        The signature is compared in constant time, before anything in the payload is read.

        Args:
            token: What the client sent back (any JSON value; only a string can be a token).
            claims: Claims the payload must hold with exactly these values (the method, the
                principal, ...), checked in order.
            now: The time to judge expiry by, in epoch seconds; None: now.

        Returns:
            The payload.

        Raises:
            Refused: The token fails a check; `reason` names the first.
        """
        if not isinstance(token, str) or token.count(".") != 1:
            raise Refused(MALFORMED)
        body, mac = token.split(".")
        try:
            payload, signature = b64url_decode(body), b64url_decode(mac)
        except ValueError:
            raise Refused(MALFORMED) from None
        if not hmac.compare_digest(signature, self._mac(payload)):
            raise Refused(SIGNATURE)
        sealed: dict[str, Any] = json.loads(payload)
        for name, expected in claims.items():
            if name not in sealed or sealed[name] != expected:
                raise Refused(name)
        if sealed[EXPIRES] < (time.time() if now is None else now):
            raise Refused(EXPIRES)
        return sealed

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()


def b64url_encode(data: bytes) -> str:
    """base64url without padding (RFC 4648 §5): how sealed tokens, cursors and JOSE values are written.

    Args:
        data: The bytes to write.

    Returns:
        Their base64url spelling, without `=` padding.
    """
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def b64url_decode(text: str) -> bytes:
    """The bytes `b64url_encode` wrote as `text`, or ValueError for any other spelling: padding,
    the standard alphabet, stray characters or non-zero trailing bits. One value, one spelling,
    so a token cannot be varied to slip past a check that compares tokens.

    The decoder alone is lenient (it skips stray characters, takes both alphabets and ignores
    trailing bits); writing the bytes back and comparing refuses every spelling but ours.

    Args:
        text: A base64url value without padding.

    Returns:
        The bytes it spells.

    Raises:
        ValueError: Any spelling but the canonical one.
    """
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))  # binascii.Error is a ValueError
    if b64url_encode(data) != text:
        raise ValueError("not the canonical base64url spelling")
    return data
