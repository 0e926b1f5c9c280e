"""HTTP/1.1 by hand, on a socket or on asyncio streams: what every load client here speaks.

A few lines of HTTP/1.1 rather than httpx: on two cores httpx's async pool spends several
milliseconds per request once dozens are in flight (about 150 requests/s here), so a load client
built on it would measure itself instead of the server. Everything here talks to 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Mapping
from typing import Any

from .messages import Call

HOST = "127.0.0.1"


def encode(call: Call, port: int, extra: Mapping[str, str] | None = None, *, close: bool = False) -> bytes:
    """`call` as the bytes of one POST to /mcp; `extra` adds headers (a caller's Authorization)."""
    head = ["POST /mcp HTTP/1.1", f"Host: {HOST}:{port}", f"Content-Length: {len(call.body)}"]
    head += ["Connection: close"] if close else []
    head += [f"{name}: {value}" for name, value in {**call.headers, **(extra or {})}.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + call.body


def parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    """The status and the headers (names lower-cased) of a response head."""
    status_line, *lines = head.decode("latin-1").split("\r\n")
    fields = (line.partition(":") for line in lines if line)
    return int(status_line.split(" ", 2)[1]), {name.lower(): value.strip() for name, _, value in fields}


def post(port: int, call: Call, timeout: float = 5.0) -> tuple[int, bytes]:
    """One request on a fresh connection, read to the end (the server closes it): status and body."""
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        sock.sendall(encode(call, port, close=True))
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    return parse_head(head)[0], body


class Connection:
    """One keep-alive connection: a request is one write, an answer is read by its framing."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int) -> None:
        self.reader, self.writer, self.port = reader, writer, port

    @classmethod
    async def open(cls, port: int) -> Connection:
        return cls(*await asyncio.open_connection(HOST, port), port)

    async def send(self, request: bytes) -> tuple[int, dict[str, str]]:
        """Write a whole request; read the answer's status and headers."""
        self.writer.write(request)
        return parse_head(await self.reader.readuntil(b"\r\n\r\n"))

    async def body(self, headers: Mapping[str, str]) -> bytes:
        """The whole body of the answer whose `headers` were just read."""
        if "content-length" in headers:
            return await self.reader.readexactly(int(headers["content-length"]))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while size := int((await self.reader.readuntil(b"\r\n")).strip(), 16):
                chunks.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            await self.reader.readexactly(2)
            return b"".join(chunks)
        raise ValueError("response without Content-Length or chunked body")

    async def exchange(self, request: bytes) -> tuple[int, bytes]:
        """One request and its whole answer: status and body."""
        status, headers = await self.send(request)
        return status, await self.body(headers)

    async def json(self, call: Call) -> tuple[int, dict[str, Any]]:
        """`call` and its answer, a JSON body."""
        status, body = await self.exchange(encode(call, self.port))
        return status, json.loads(body)

    async def events(self, call: Call, extra: Mapping[str, str] | None = None) -> AsyncIterator[dict[str, Any]]:
        """The JSON-RPC messages of a chunked SSE answer to `call`, as they arrive."""
        status, headers = await self.send(encode(call, self.port, extra))
        if status != 200 or headers.get("transfer-encoding") != "chunked":
            raise ConnectionError(f"{call.name} answered {status} {headers}")
        pending = b""
        while size := int(await self.reader.readuntil(b"\r\n"), 16):
            pending += (await self.reader.readexactly(size + 2))[:-2]
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.startswith(b"data:"):
                    yield json.loads(line[5:])

    def close(self) -> None:
        self.writer.close()
