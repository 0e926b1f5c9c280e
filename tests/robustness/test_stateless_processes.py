"""Statelessness across processes: the message-trace flows with every request on another process.

Three real `uvicorn` processes serve `mcpref.examples.robustness_server` with the same `MCP_STATE_KEY`.
The client alternates base URLs per request (process 1, 2, 3, 1, ...) rather than going
through a round-robin proxy: a proxy would be one more component, could keep connections to a
favourite backend, and would hide which process answered, while alternating in the client
makes "consecutive requests never share a process" true by construction, and the `whoami` tool
lets each test check it.

A fourth process has a different key, to prove the negative: a `requestState` sealed by one
deployment is refused by another (-32602), so the positive test is not passing by accident.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bench.procs import ServerProcess, server_processes
from mcpref.examples.robustness_server import GREETING_URI
from tests.conftest import META, MCPClient

APP = "mcpref.examples.robustness_server:app"
ELICITING = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
ALL_TOOLS = ["echo", "route", "whoami", "book", "survey", "touch", "fail"]
ACCEPTED = {"confirm": {"action": "accept", "content": {"ok": True}}}


class RoundRobin:
    """Each request goes to the next process in turn: a balancer with no affinity at all."""

    def __init__(self, clients: list[MCPClient]) -> None:
        self.clients = clients
        self._turns = itertools.cycle(clients)

    def next(self) -> MCPClient:
        return next(self._turns)

    def result(self, method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
        client = self.next()
        name = (params or {}).get("uri" if method == "resources/read" else "name")
        return client.result(method, params, headers=client.headers(method, name), **kwargs)


def whoami(client: MCPClient) -> int:
    result = client.result("tools/call", {"name": "whoami"}, headers=client.headers("tools/call", "whoami"))
    return int(result["content"][0]["text"])


def book(client: MCPClient, request_id: int, **params: Any) -> dict[str, Any]:
    return client.result(
        "tools/call",
        {"name": "book", "arguments": {"seat": "1A"}, **params},
        id=request_id,
        meta=ELICITING,
        headers=client.headers("tools/call", "book"),
    )


@pytest.fixture(scope="module")
def processes() -> Iterator[list[ServerProcess]]:
    envs = [{"MCP_STATE_KEY": "one deployment"}] * 3 + [{"MCP_STATE_KEY": "another deployment"}]
    with server_processes(APP, envs) as servers:
        yield servers
        for server in servers:
            assert "Traceback" not in server.log(), server.log()


@pytest.fixture(scope="module")
def clients(processes: list[ServerProcess]) -> Iterator[list[MCPClient]]:
    https = [httpx.Client(base_url=server.base_url, timeout=10) for server in processes]
    yield [MCPClient(http) for http in https]
    for http in https:
        http.close()


def test_the_round_robin_reaches_a_different_process_each_time(
    processes: list[ServerProcess], clients: list[MCPClient]
) -> None:
    balancer = RoundRobin(clients[:3])
    pids = [whoami(balancer.next()) for _ in range(3)]
    assert pids == [server.pid for server in processes[:3]]
    assert len(set(pids)) == 3


def test_the_message_trace_flows_across_processes(processes: list[ServerProcess], clients: list[MCPClient]) -> None:
    balancer = RoundRobin(clients[:3])

    discovered = balancer.result("server/discover")
    assert discovered["capabilities"]["tools"] == {"listChanged": True}

    # tools/list: every page is asked of another process than the page before; the cursor is
    # all the next process knows about where the list stands.
    names, cursor, pages = [], None, 0
    while True:
        page = balancer.result("tools/list", {} if cursor is None else {"cursor": cursor})
        names += [tool["name"] for tool in page["tools"]]
        pages += 1
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert names == ALL_TOOLS
    assert pages == 4

    called = balancer.result("tools/call", {"name": "echo", "arguments": {"message": "héllo"}})
    assert called["content"] == [{"type": "text", "text": "héllo"}]

    # MRTR: round one on one process, the retry (new id, same arguments, requestState echoed)
    # on the next; the tool reports which process asked and which booked.
    asker, booker = balancer.next(), balancer.next()
    round_one = book(asker, 10)
    assert round_one["resultType"] == "input_required"
    assert round_one["inputRequests"]["confirm"]["method"] == "elicitation/create"
    done = book(booker, 11, inputResponses=ACCEPTED, requestState=round_one["requestState"])
    asked_by, booked_by = whoami(asker), whoami(booker)
    assert asked_by != booked_by
    assert done["content"][0]["text"] == f"Booked 1A: asked by {asked_by}, booked by {booked_by}"

    listed = balancer.result("resources/list")
    assert [resource["uri"] for resource in listed["resources"]] == [GREETING_URI]
    read = balancer.result("resources/read", {"uri": GREETING_URI})
    assert read["contents"] == [{"uri": GREETING_URI, "mimeType": "text/plain", "text": "hello"}]
    templated = balancer.result("resources/read", {"uri": "robust://items/42"})
    assert templated["contents"][0]["text"] == "item 42"


def test_a_retry_on_a_process_with_another_key_is_refused(clients: list[MCPClient]) -> None:
    same_key, other_key = clients[0], clients[3]
    round_one = book(same_key, 20)
    retry = {
        "name": "book",
        "arguments": {"seat": "1A"},
        "inputResponses": ACCEPTED,
        "requestState": round_one["requestState"],
    }

    error = other_key.error(
        "tools/call", retry, id=21, meta=ELICITING, headers=other_key.headers("tools/call", "book"), status=200
    )
    assert error["code"] == -32602
    assert "requestState refused" in error["message"]

    # The very same retry on a process that shares the key is served: the key made the difference.
    served = book(clients[1], 22, inputResponses=ACCEPTED, requestState=round_one["requestState"])
    assert served["content"][0]["text"].startswith("Booked 1A")
