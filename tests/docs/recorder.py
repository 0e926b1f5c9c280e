"""A logging reverse proxy that writes what passed through it as the pages' ```http frames.

Run it on loopback between any MCP client and any MCP server (`./scripts/record --help`). Each
request is forwarded as it came, and the answer streamed back as it goes (an SSE stream reaches
the client event by event); once the exchange ends, it is written as two blocks a page can hold:
the request, and the response with the headers that matter, JSON laid out as `--update-frames`
lays it out, every SSE event kept. A stream the client left while the server was still sending
ends with `: (stream still open)`, as the harness expects.

Volatile values become the harness's placeholders (`placeholders.py`): timestamps, HTTP dates,
UUIDs and signed tokens by their shape, and a `requestState` by name, captured
(`<<sealed-state:state1>>`) so that the retry that carries it back is written `{{state1}}`. A
value only the server knows to be volatile (a counter, a random word) stays literal: the
harness then fails the frame on the next run, and `./scripts/docs --update-frames` turns it into
a placeholder or names it. A placeholder over a value that turns out constant fails too (see
`variance.py`), so nothing a recording guessed wrong can pass unnoticed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator, Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any

import httpx

from . import placeholders
from .messages import parse_sse
from .update import dump

#: Request headers a frame leaves out: the harness adds Host and Content-Length as curl does, and
#: the rest is transport detail or a secret that must not land on a page.
DROPPED_REQUEST = frozenset(
    {
        "host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade",
        "accept-encoding", "user-agent", "authorization", "cookie", "proxy-authorization",
    }
)  # fmt: skip
#: Bytes of a body (either way) that a frame keeps. The rest still streams through, but a page has
#: no room for it: the frame says how much was left out. A body is never held whole in memory.
RECORDED_BYTES = 1024 * 1024
#: How far back a new chunk of an answer is searched for a `requestState` that began in an earlier one.
CAPTURE_OVERLAP = 64 * 1024
#: Hop-by-hop headers, never forwarded either way (RFC 9110, section 7.6.1).
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "proxy-connection"})
#: Response headers a frame shows: what a reader of MCP needs (each shown header is compared).
SHOWN_RESPONSE = frozenset({"content-type", "allow", "www-authenticate", "retry-after", "location"})
#: Spellings as the spec writes them; any other name is written Like-This.
SPELLING = {"mcp-protocol-version": "MCP-Protocol-Version", "www-authenticate": "WWW-Authenticate"}
#: Whole-value and in-text shapes turned into placeholders, most specific first.
VOLATILE = ("iso-datetime", "http-date", "uuid", "signed-handle")


REQUEST_STATE = re.compile(r'"requestState"\s*:\s*"([^"\\]+)"')


def spelled(name: str) -> str:
    return SPELLING.get(name.lower()) or "-".join(part.capitalize() for part in name.split("-"))


class Captures:
    """Values a response produced that a later request may carry back: value -> name."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def register(self, body: bytes) -> None:
        """Name every sealed `requestState` in a response body seen so far, in order of arrival."""
        for found in REQUEST_STATE.finditer(body.decode("utf-8", errors="replace")):
            if placeholders.KINDS["sealed-state"].accepts(found[1]):
                self.name(found[1], "state")

    def name(self, value: str, stem: str) -> str:
        if value not in self.names:
            self.names[value] = f"{stem}{sum(n.startswith(stem) for n in self.names.values()) + 1}"
        return self.names[value]


def response_value(value: Any, captures: Captures, key: str | None = None) -> Any:
    """A response's JSON with volatile values as placeholders (and `requestState` captured)."""
    if isinstance(value, dict):
        return {k: response_value(v, captures, k) for k, v in value.items()}
    if isinstance(value, list):
        return [response_value(v, captures) for v in value]
    if not isinstance(value, str):
        return value
    if key == "requestState" and placeholders.KINDS["sealed-state"].accepts(value):
        return f"<<sealed-state:{captures.name(value, 'state')}>>"
    for kind in VOLATILE:
        if placeholders.KINDS[kind].accepts(value):
            return f"<<{kind}>>"
    return _in_text(value)


def _in_text(text: str) -> str:
    """Volatile tokens inside a longer string (a timestamp inside a text block's JSON)."""
    for kind in VOLATILE:
        pattern = placeholders.KINDS[kind].pattern
        text = re.sub(rf"(?<![\w-])(?:{pattern})(?![\w-])", f"<<{kind}>>", text)
    return text


def request_value(value: Any, captures: Captures) -> Any:
    """A request's JSON with every value an earlier response captured written `{{name}}`."""
    if isinstance(value, dict):
        return {k: request_value(v, captures) for k, v in value.items()}
    if isinstance(value, list):
        return [request_value(v, captures) for v in value]
    if isinstance(value, str) and value in captures.names:
        return "{{" + captures.names[value] + "}}"
    return value


def _json_or_text(body: bytes, convert: Callable[[Any], Any]) -> str:
    text = body.decode("utf-8", errors="replace")
    try:
        return dump(convert(json.loads(text)))
    except ValueError:
        return text.rstrip("\n")


def request_block(
    method: str, target: str, headers: list[tuple[str, str]], body: bytes, captures: Captures, left_out: int = 0
) -> str:
    lines = [f"{method} {target} HTTP/1.1"]
    lines += [f"{spelled(name)}: {value}" for name, value in headers if name.lower() not in DROPPED_REQUEST]
    text = "\n".join(lines) + "\n"
    if body:
        text += "\n" + _json_or_text(body, lambda value: request_value(value, captures)) + "\n"
    return text + _left_out(left_out)


def _left_out(size: int) -> str:
    return f"... ({size} more bytes, not recorded)\n" if size else ""


def response_block(
    status: int, headers: list[tuple[str, str]], body: bytes, left_open: bool, captures: Captures, left_out: int = 0
) -> str:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    shown = [(n, v) for n, v in headers if n.lower() in SHOWN_RESPONSE or n.lower().startswith("mcp-")]
    lines += [f"{spelled(name)}: {placeholders_in_header(value)}" for name, value in shown]
    text = "\n".join(lines) + "\n"
    content_type = dict((n.lower(), v) for n, v in headers).get("content-type", "")
    if content_type.startswith("text/event-stream"):
        return text + "\n" + _events(body.decode("utf-8", errors="replace"), left_open, captures) + _left_out(left_out)
    if body:
        text += "\n" + _json_or_text(body, lambda value: response_value(value, captures)) + "\n"
    return text + _left_out(left_out)


def placeholders_in_header(value: str) -> str:
    for kind in VOLATILE:
        if placeholders.KINDS[kind].accepts(value):
            return f"<<{kind}>>"
    return value


def _events(text: str, left_open: bool, captures: Captures) -> str:
    text = text.replace("\r\n", "\n")
    # Only whole events: a stream cut mid-event shows what had fully arrived.
    complete = text[: text.rfind("\n\n") + 2] if "\n\n" in text else ""
    events = []
    for event in parse_sse(complete):
        if event.data is None:
            continue
        lines = [f"event: {event.name}"] if event.name else []
        data = response_value(event.data, captures)
        lines.append("data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":")))
        events.append("\n".join(lines))
    if left_open:
        events.append(": (stream still open)")
    return "\n\n".join(events) + "\n"


def frame(request: str, response: str) -> str:
    return f"```http\n{request}```\n\n```http\n{response}```\n"


class Recorder:
    """The proxy, as an ASGI app: forwards to `upstream`, hands each exchange's frame to `write`."""

    def __init__(self, upstream: str, write: Callable[[str], None]) -> None:
        self.upstream = upstream.rstrip("/")
        self.write = write
        self.captures = Captures()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        target = scope.get("raw_path", scope["path"].encode()).decode("latin-1")
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        if not target.startswith("/"):  # `OPTIONS *` (asterisk-form): about this proxy, not the upstream's paths
            status = 204 if scope["method"] == "OPTIONS" else 400
            await send({"type": "http.response.start", "status": status, "headers": [(b"allow", b"OPTIONS")]})
            await send({"type": "http.response.body", "body": b""})
            return
        body = _Body(receive)
        try:
            status, answer_headers, answer, left_open = await self._forward(scope, target, headers, body, receive, send)
        except httpx.HTTPError as exc:  # the upstream is down or broke off: the client is told, not 500
            if body.disconnected:
                return
            await send({"type": "http.response.start", "status": 502, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": f"upstream: {type(exc).__name__}\n".encode()})
            return
        if body.disconnected:
            return
        recorded_request = request_block(
            scope["method"], target, headers, body.recorded, self.captures, body.size - len(body.recorded)
        )
        recorded_response = response_block(
            status, answer_headers, answer.recorded, left_open, self.captures, answer.size - len(answer.recorded)
        )
        self.write(frame(recorded_request, recorded_response))

    async def _forward(
        self, scope: dict[str, Any], target: str, headers: list[tuple[str, str]], body: _Body, receive: Any, send: Any
    ) -> tuple[int, list[tuple[str, str]], _Kept, bool]:
        # One connection per exchange: a recording is a handful of requests, and nothing outlives it.
        async with httpx.AsyncClient(timeout=httpx.Timeout(30, read=None)) as client:
            return await self._relay(client, scope, target, headers, body, receive, send)

    async def _relay(
        self,
        client: httpx.AsyncClient,
        scope: dict[str, Any],
        target: str,
        headers: list[tuple[str, str]],
        body: _Body,
        receive: Any,
        send: Any,
    ) -> tuple[int, list[tuple[str, str]], _Kept, bool]:
        # The client's own Host goes on (as a reverse proxy that keeps it): the server judges the
        # Host the client sent, and answers what it would answer the client.
        forwarded = [(n, v) for n, v in headers if n.lower() not in HOP_BY_HOP | {"accept-encoding"}]
        length = dict((n.lower(), v) for n, v in headers).get("content-length")
        content = body.chunks() if length != "0" and (length is not None or _may_have_body(headers)) else b""
        upstream = client.build_request(scope["method"], self.upstream + target, headers=forwarded, content=content)
        response = await client.send(upstream, stream=True)
        answer_headers = [(n, v) for n, v in response.headers.multi_items() if n.lower() not in HOP_BY_HOP]
        await send(
            {
                "type": "http.response.start",
                "status": response.status_code,
                "headers": [(n.encode("latin-1"), v.encode("latin-1")) for n, v in answer_headers],
            }
        )
        answer = _Kept()

        async def pump() -> None:
            async for chunk in response.aiter_raw():
                start = max(0, len(answer.recorded) - CAPTURE_OVERLAP)
                answer.add(chunk)
                # Named before the client can read it: its retry may come before this frame is written.
                self.captures.register(answer.recorded[start:])
                await send({"type": "http.response.body", "body": chunk, "more_body": True})

        async def client_left() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        pumping, watching = asyncio.ensure_future(pump()), asyncio.ensure_future(client_left())
        await asyncio.wait({pumping, watching}, return_when=asyncio.FIRST_COMPLETED)
        left_open = not pumping.done()
        for task in (pumping, watching):
            task.cancel()
        await asyncio.gather(pumping, watching, return_exceptions=True)
        await response.aclose()
        if not left_open:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        return response.status_code, answer_headers, answer, left_open


class _Kept:
    """A body going through: its size, and its first `RECORDED_BYTES` for the frame."""

    def __init__(self) -> None:
        self.recorded = b""
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if len(self.recorded) < RECORDED_BYTES:
            self.recorded += chunk[: RECORDED_BYTES - len(self.recorded)]


class _Body(_Kept):
    """The client's request body, streamed to the upstream as it arrives (never held whole)."""

    def __init__(self, receive: Any) -> None:
        super().__init__()
        self.receive = receive
        self.disconnected = False
        self.done = False

    async def chunks(self) -> AsyncIterator[bytes]:
        while not self.done:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                self.disconnected = self.done = True
                raise httpx.ReadError("the client left before sending the whole body")
            chunk = message.get("body", b"")
            self.add(chunk)
            self.done = not message.get("more_body")
            if chunk:
                yield chunk


def _may_have_body(headers: list[tuple[str, str]]) -> bool:
    return any(name.lower() == "transfer-encoding" for name, _ in headers)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="./scripts/record",
        description="Record what passes between an MCP client and an MCP server as the pages' ```http frames.",
        epilog="Point the client at http://HOST:PORT/<the server's MCP path>, e.g. http://127.0.0.1:8002/mcp",
    )
    parser.add_argument("--upstream", default="http://127.0.0.1:8000", help="the server's origin (%(default)s)")
    parser.add_argument("--host", default="127.0.0.1", help="where the proxy listens (%(default)s, loopback)")
    parser.add_argument("--port", type=int, default=8002, help="(%(default)s)")
    parser.add_argument("--out", type=Path, help="append frames to this file instead of printing them")
    options = parser.parse_args(argv)

    def write(text: str) -> None:
        if options.out is None:
            print(text, flush=True)
            return
        with options.out.open("a", encoding="utf-8") as out:
            out.write(text + "\n")
        print(f"recorded: {text.splitlines()[1]} -> {options.out}", file=sys.stderr, flush=True)

    import uvicorn

    print(
        f"recording {options.upstream} at http://{options.host}:{options.port}/ (Ctrl-C to stop)",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(Recorder(options.upstream, write), host=options.host, port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
