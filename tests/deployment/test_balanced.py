"""Many instances, one deployment: HAProxy round-robin in front of three instances of
`mcpref.examples.balanced` on one PostgreSQL (deploy/haproxy.cfg, bench/balanced.py).

Through the balancer, requests spread over the instances with no affinity, and still: a
multi-round-trip request finishes on another instance than it started on, a task moves from
instance to instance, the official conformance suite passes, and the official Python SDK's client
and ours (`mcpref.client.Client`: lists, calls, MRTR rounds, a listen stream) run their scenarios.
Directly on the instances: a change made on one reaches the listen streams held by the others
(`PostgresRelay`), a relay that lost its database tells its streams to read everything again,
an instance killed mid-run leaves the others answering and its tasks reported failed, and a
caller's listen slots and live tasks are counted over all the instances (`mcpref.shares`), a
killed instance's share expiring with its lease.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from mcp.client import Client as SDKClient
from mcp.client.streamable_http import streamable_http_client

from bench.balanced import Deployment, balanced
from mcpref.client import Client, TaskCancelled
from mcpref.client._errors import InternalError
from mcpref.jsonrpc import Notification
from tests.conformance.cli import run_and_judge
from tests.conftest import mcp_body, mcp_headers

from .conftest import needs_haproxy

ELICITING = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def post(http: httpx.Client, url: str, method: str, params: dict[str, Any], **meta: Any) -> httpx.Response:
    body = mcp_body(method, params, meta={**ELICITING, **meta}) if meta else mcp_body(method, params, meta=ELICITING)
    return http.post(url, json=body, headers=mcp_headers(method, params.get("name")))


def accept(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"confirm": True, "name": "Ada", "ok": True}}


def test_round_robin_spreads_requests_over_every_instance(deployment: Deployment) -> None:
    with httpx.Client(timeout=10) as http:
        served = [post(http, deployment.url, "tools/list", {}).headers["x-mcpref-instance"] for _ in range(6)]
    assert sorted(served) == sorted(["one", "two", "three"] * 2)
    assert all(a != b for a, b in zip(served, served[1:], strict=False)), served


def test_a_multi_round_trip_request_goes_on_at_whichever_instance_gets_each_round(deployment: Deployment) -> None:
    """Three rounds, three instances: the first answer travels to the third in `requestState`."""
    answers = {
        "step1": {"action": "accept", "content": {"name": "Ada"}},
        "step2": {"action": "accept", "content": {"color": "teal"}},
    }
    call: dict[str, Any] = {"name": "test_input_required_result_multi_round", "arguments": {}}
    served, results = [], []
    with httpx.Client(timeout=10) as http:
        for _ in range(3):
            response = post(http, deployment.url, "tools/call", call)
            served.append(response.headers["x-mcpref-instance"])
            result = response.json()["result"]
            results.append(result["resultType"])
            if result["resultType"] == "input_required":
                [key] = result["inputRequests"]
                call = {**call, "inputResponses": {key: answers[key]}, "requestState": result["requestState"]}
    assert results == ["input_required", "input_required", "complete"]
    assert sorted(served) == ["one", "three", "two"]
    assert result["content"] == [{"type": "text", "text": "Multi-round complete for Ada who likes teal"}]


def test_a_task_is_answered_and_cancelled_through_other_instances(deployment: Deployment) -> None:
    async def scenario() -> None:
        async with Client(deployment.url, tasks=True, elicitation=accept) as client:
            asked = (await client.start_tool("multi_input", {}))["taskId"]
            result = await client.wait_for_task(asked)  # each poll and the answer go round the instances
            assert result["content"][0]["text"] == "Ada went ahead"
            slow = (await client.start_tool("slow_compute", {"seconds": 60}))["taskId"]
            await client.cancel_task(slow)  # the instance running it notices within a lease tick
            with pytest.raises(TaskCancelled):
                await client.wait_for_task(slow)

    asyncio.run(scenario())


async def first_notification(client: Client, **wanted: Any) -> tuple[asyncio.Task[Notification], Any]:
    """Open a listen stream and start waiting for its first notification."""
    subscription = client.listen(**wanted)
    await subscription.start()
    return asyncio.create_task(anext(aiter(subscription))), subscription


def test_a_change_on_one_instance_reaches_listeners_on_every_instance(deployment: Deployment) -> None:
    one, two, three = (server.url for server in deployment.instances.values())

    async def scenario() -> list[str]:
        async with Client(one) as a, Client(two) as b, Client(three) as c:
            waits = [await first_notification(client, tools_list_changed=True) for client in (a, b, c)]
            await a.call_tool("test_trigger_tool_change", {})
            heard = await asyncio.wait_for(asyncio.gather(*(wait for wait, _ in waits)), timeout=20)
            for _, subscription in waits:
                await subscription.aclose()
            return [note.method for note in heard]

    assert asyncio.run(scenario()) == ["notifications/tools/list_changed"] * 3


def test_a_relay_that_lost_its_database_tells_its_streams_to_read_everything_again(
    deployment: Deployment, postgres_dsn: str
) -> None:
    two = deployment.instances["two"].url

    async def scenario() -> list[str]:
        async with Client(two) as client:
            subscription = client.listen(tools_list_changed=True, prompts_list_changed=True)
            await subscription.start()
            notes = aiter(subscription)
            with psycopg.connect(postgres_dsn, autocommit=True) as admin:  # every relay loses its connections
                relays = "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'mcpref-relay %'"
                cut = admin.execute(f"SELECT pg_terminate_backend(pid) FROM ({relays}) AS r").fetchall()
                assert len(cut) >= 3, cut  # at least each instance's listening connection
            # Nothing changed, but changes made meanwhile would have been lost: the stream hears of both lists.
            heard = [await asyncio.wait_for(anext(notes), timeout=20) for _ in range(2)]
            await subscription.aclose()
            return sorted(note.method for note in heard)

    assert asyncio.run(scenario()) == ["notifications/prompts/list_changed", "notifications/tools/list_changed"]
    test_a_change_on_one_instance_reaches_listeners_on_every_instance(deployment)  # and the relays are back


def test_the_official_conformance_suite_passes_through_the_balancer(  # type: ignore[no-untyped-def]
    deployment: Deployment, tmp_path: Path, terminal_report
) -> None:
    run_and_judge("server", ["--url", deployment.url], "2026-07-28", tmp_path, terminal_report, through="the balancer")


def test_the_official_python_sdk_client_works_through_the_balancer(deployment: Deployment) -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        async with (
            httpx.AsyncClient(timeout=10) as http,
            SDKClient(streamable_http_client(deployment.url, http_client=http), mode="auto") as client,
        ):
            tools = [tool.name for tool in (await client.list_tools()).tools]
            texts = []
            for region in ("eu", "us", "ap"):  # three calls, three instances
                result = await client.call_tool("test_custom_headers", {"region": region})
                texts.append(result.content[0].text)  # type: ignore[union-attr]
            return tools, texts

    tools, texts = asyncio.run(scenario())
    assert "test_custom_headers" in tools
    assert texts == ["Region: eu", "Region: us", "Region: ap"]


def test_our_client_lists_calls_answers_and_listens_through_the_balancer(deployment: Deployment) -> None:
    """`mcpref.client.Client` on the balancer's URL: every request may land anywhere, and each
    scenario still works; which instance answered what is read from `X-Mcpref-Instance`."""
    served: list[tuple[str, str]] = []  # (Mcp-Method, instance), in the order the answers came

    async def note(response: httpx.Response) -> None:
        served.append((response.request.headers.get("mcp-method", ""), response.headers["x-mcpref-instance"]))

    def name(params: dict[str, Any]) -> dict[str, Any]:
        asked = params["requestedSchema"]["properties"]
        return {"action": "accept", "content": {"name": "Ada"} if "name" in asked else {"color": "teal"}}

    async def scenario() -> tuple[list[str], str, str, str]:
        async with (
            httpx.AsyncClient(timeout=10, event_hooks={"response": [note]}) as http,
            Client(deployment.url, http=http, elicitation=name) as client,
        ):
            tools = [tool["name"] for tool in await client.list_tools()]
            simple = (await client.call_tool("test_simple_text", {}))["content"][0]["text"]
            rounds = await client.call_tool("test_input_required_result_multi_round", {})  # the MRTR loop
            async with client.listen(tools_list_changed=True) as subscription:
                heard = asyncio.create_task(anext(aiter(subscription)))
                await client.call_tool("test_trigger_tool_change", {})
                change = (await asyncio.wait_for(heard, timeout=20)).method
            return tools, simple, rounds["content"][0]["text"], change

    tools, simple, rounds, change = asyncio.run(scenario())
    assert "test_input_required_result_multi_round" in tools and simple.startswith("This is a simple")
    assert rounds == "Multi-round complete for Ada who likes teal"
    assert change == "notifications/tools/list_changed"
    mrtr = [instance for method, instance in served if method == "tools/call"][1:4]
    assert len(set(mrtr)) == 3, served  # its three rounds, on three instances
    [listened] = [instance for method, instance in served if method == "subscriptions/listen"]
    assert served[-1][0] == "tools/call" and served[-1][1] != listened, served  # the change crossed


async def refused_within(attempt: Any, tries: int = 25) -> str:
    """Try `attempt()` until it is refused for a fair share, as the instances' shared counts
    catch up (each refreshes every half second; 0.2 s between tries); the refusal's message."""
    for _ in range(tries):
        try:
            await attempt()
        except InternalError as refusal:
            return str(refusal)
        await asyncio.sleep(0.2)
    raise AssertionError(f"never refused in {tries} tries: the share is counted per instance")


def test_a_callers_listen_slots_are_counted_over_every_instance(deployment: Deployment) -> None:
    """32 streams per caller (every anonymous caller behind the balancer is HAProxy's address):
    about 11 on each instance, so only a count over all three can refuse the 33rd."""

    async def scenario() -> tuple[str, set[str]]:
        served: list[str] = []

        async def note(response: httpx.Response) -> None:
            if response.request.headers.get("mcp-method") == "subscriptions/listen" and response.status_code == 200:
                served.append(response.headers["x-mcpref-instance"])

        async with (
            httpx.AsyncClient(timeout=10, event_hooks={"response": [note]}) as http,
            Client(deployment.url, http=http) as client,
        ):
            held = [client.listen(tools_list_changed=True, max_reconnects=0) for _ in range(32)]
            for subscription in held:
                await subscription.start()
            spread = set(served)
            assert max(served.count(name) for name in spread) < 32, served

            async def one_more() -> None:
                extra = client.listen(tools_list_changed=True, max_reconnects=0)
                await extra.start()
                await extra.aclose()  # admitted: the others' counts had not arrived yet

            refusal = await refused_within(one_more)
            for subscription in held:
                await subscription.aclose()
            # Closed through the balancer, the slots are free again at once (the others' counts
            # within a refresh), not when each instance next writes a keep-alive, 15 s on.
            again: list[Any] = []
            for _ in range(30):
                while len(again) < 32:
                    subscription = client.listen(tools_list_changed=True, max_reconnects=0)
                    try:
                        await subscription.start()
                    except InternalError:
                        break
                    again.append(subscription)
                if len(again) == 32:
                    break
                await asyncio.sleep(0.1)
            for subscription in again:
                await subscription.aclose()
            assert len(again) == 32, f"only {len(again)} slots free again 3 s after closing 32"
            return refusal, spread

    refusal, spread = asyncio.run(scenario())
    assert spread == {"one", "two", "three"}
    assert "Too many open subscriptions for one caller (limit 32)" in refusal


def test_a_callers_live_tasks_are_counted_over_every_instance(deployment: Deployment) -> None:
    """16 live tasks per caller: started round-robin, each instance runs at most 9 even with the
    tries that get through, so only a count over all three can refuse one."""
    served: list[str] = []

    async def note(response: httpx.Response) -> None:
        if response.request.headers.get("mcp-name") == "slow_compute" and response.status_code == 200:
            served.append(response.headers["x-mcpref-instance"])

    async def scenario() -> str:
        async with (
            httpx.AsyncClient(timeout=10, event_hooks={"response": [note]}) as http,
            Client(deployment.url, http=http, tasks=True) as client,
        ):
            started = [(await client.start_tool("slow_compute", {"seconds": 60}))["taskId"] for _ in range(16)]

            async def one_more() -> None:
                started.append((await client.start_tool("slow_compute", {"seconds": 60}))["taskId"])

            try:
                return await refused_within(one_more, tries=10)
            finally:  # and gone, so that they count against nobody in the tests after this one
                for task_id in started:
                    await client.cancel_task(task_id)
                ended = await asyncio.gather(*map(client.wait_for_task, started), return_exceptions=True)
                assert all(isinstance(end, TaskCancelled) for end in ended), ended

    assert "Too many tasks running for one caller (limit 16)" in asyncio.run(scenario())
    assert max(served.count(name) for name in set(served)) < 16, served


def test_a_killed_instance_leaves_the_others_answering_and_its_tasks_reported_failed(postgres_dsn: str) -> None:
    needs_haproxy()
    lease = 3.0
    # A database of its own: on the module's, the shares count the tasks earlier tests left running
    # (a deployment sharing a database and a server name shares the callers' quotas, by design).
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS killed_instance")
        admin.execute("CREATE DATABASE killed_instance")
    own_dsn = postgres_dsn.rsplit("/", 1)[0] + "/killed_instance"
    with balanced(own_dsn, state_key="a deployment that loses one", task_lease=lease, share_lease=2.0) as deployment:
        victim = deployment.instances["two"]

        async def start() -> str:
            async with Client(victim.url, tasks=True) as client:
                return str((await client.start_tool("slow_compute", {"seconds": 60}))["taskId"])

        task_id = asyncio.run(start())

        async def slots_and_kill() -> tuple[str, float]:
            """The victim holds all 32 of the caller's listen slots, so instance one refuses a 33rd;
            once the victim is killed, they are free again when its shares' lease (2 s here) runs
            out, not before."""
            # From 127.0.0.2: a caller of its own, whatever the module's other tests left open.
            async with (
                httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(local_address="127.0.0.2")) as http,
                Client(victim.url, http=http) as on_victim,
                Client(deployment.instances["one"].url, http=http) as elsewhere,
            ):
                held = [on_victim.listen(tools_list_changed=True, max_reconnects=0) for _ in range(32)]
                for subscription in held:
                    await subscription.start()

                async def one_more() -> None:
                    extra = elsewhere.listen(tools_list_changed=True, max_reconnects=0)
                    await extra.start()
                    await extra.aclose()

                refusal = await refused_within(one_more)
                victim.proc.send_signal(signal.SIGKILL)
                victim.proc.wait(timeout=10)
                killed = time.monotonic()
                for _ in range(60):
                    try:
                        await one_more()
                        break
                    except InternalError:
                        await asyncio.sleep(0.2)
                else:
                    raise AssertionError("a killed instance's listen slots still count after 12 s")
                assert time.monotonic() - killed > 1, "freed before the lease ran out"
                return refusal, killed

        refusal, killed = asyncio.run(slots_and_kill())
        assert "Too many open subscriptions for one caller (limit 32)" in refusal
        with httpx.Client(timeout=10) as http:
            answers = [post(http, deployment.url, "tools/list", {}) for _ in range(6)]
        assert [answer.status_code for answer in answers] == [200] * 6
        assert {answer.headers["x-mcpref-instance"] for answer in answers} == {"one", "three"}

        async def poll() -> None:
            async with Client(deployment.url, tasks=True) as client:
                await asyncio.sleep(max(0.0, lease + 0.5 - (time.monotonic() - killed)))
                with pytest.raises(InternalError, match="stopped before it finished"):
                    await client.wait_for_task(task_id)

        asyncio.run(poll())
