"""What each server was sent: the host records every HTTP request of every client, by server label.

An httpx request hook on each server's own `httpx.AsyncClient` sees each request as it goes on
the wire, including the retries an `httpx.Auth` makes (the first try without a token, the one
with it). Bearer tokens are never kept: a frame records only that one was sent, and a short
digest, enough to tell two tokens apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

#: The headers a frame keeps (the rest is plumbing: Accept, Content-Type, Content-Length).
KEPT = ("mcp-method", "mcp-name", "mcp-protocol-version", "authorization")
#: Strings longer than this are shortened in `Frame.line()`.
LONG = 48


@dataclass(frozen=True)
class Frame:
    """One request as a server received it."""

    server: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def method(self) -> str:
        return str(self.body.get("method", "?"))

    @property
    def params(self) -> dict[str, Any]:
        """The params without `_meta` (the same on every request)."""
        params = self.body.get("params")
        return {k: v for k, v in params.items() if k != "_meta"} if isinstance(params, dict) else {}

    def line(self) -> str:
        """One readable line: server, path, the MCP headers (a token only as "Bearer …"), the params
        (a `requestState` as `<sealed>`, other long strings cut short: opaque, and new on every run)."""
        shown = {
            name: value.partition(" ")[0] + " …" if name == "authorization" else value
            for name, value in self.headers.items()
            if name != "mcp-protocol-version"
        }
        headers = " ".join(f"{name}={value}" for name, value in shown.items())
        shown_params = {k: "<sealed>" if k == "requestState" else _short(v) for k, v in self.params.items()}
        params = json.dumps(shown_params, sort_keys=True, ensure_ascii=False) if shown_params else ""
        return " ".join(part for part in (f"{self.server:<8} POST {self.path}", headers, params) if part)


class FrameLog:
    """Frames of every server, in the order they were sent. `mark()` then `since()` for one step."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self._mark = 0

    def hook(self, server: str) -> Callable[[httpx.Request], Any]:
        """The httpx request hook that records `server`'s requests."""

        async def record(request: httpx.Request) -> None:
            try:
                body = json.loads(request.content) if request.content else {}
            except ValueError:
                body = {"unparsed": request.content[:200].decode("utf-8", "replace")}
            headers = {
                name: _redacted(name, value)
                for name, value in request.headers.items()
                if name in KEPT or name.startswith("mcp-param-")
            }
            self.frames.append(Frame(server, request.url.path, headers, body if isinstance(body, dict) else {}))

        return record

    def mark(self) -> None:
        self._mark = len(self.frames)

    def since(self) -> list[Frame]:
        """The frames sent since the last `mark()`, and mark again."""
        new, self._mark = self.frames[self._mark :], len(self.frames)
        return new

    def of(self, server: str) -> Iterator[Frame]:
        return (frame for frame in self.frames if frame.server == server)


def _short(value: Any) -> Any:
    """Long opaque strings (handles a server minted) cut to their first characters."""
    if isinstance(value, str) and len(value) > LONG:
        return value[:8] + "…"
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


def _redacted(name: str, value: str) -> str:
    if name != "authorization":
        return value
    scheme, _, token = value.partition(" ")
    return f"{scheme} <token {hashlib.sha256(token.encode()).hexdigest()[:8]}>"
