"""What the reference server's pages cannot show: expiry, and answers a client gets wrong.

The pages run the happy paths and the refusals a reader meets; these check the rest of the tools
added for them (`mcpref/examples/reference_server/asking.py` and `handles.py`), through the same
dispatcher, one fresh server per test.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpref import MCPError
from mcpref.examples.reference_server import build_server
from mcpref.examples.reference_server.handles import HandleRefused, HandleSigner
from mcpref.jsonrpc import INVALID_PARAMS, Request
from mcpref.meta import read_request_meta

FORM = {"elicitation": {"form": {}}}


@pytest.fixture(autouse=True)
def one_deployment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every server these tests build shares a key, as the instances of a deployment do."""
    monkeypatch.setenv("MCP_STATE_KEY", "reference-server-tests")


def call(name: str, arguments: dict[str, Any], capabilities: dict[str, Any], **mrtr: Any) -> dict[str, Any]:
    server = build_server()
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    params = {"name": name, "arguments": arguments, **mrtr, "_meta": meta}
    request = Request(1, "tools/call", params)
    return asyncio.run(server.handle(request, meta=read_request_meta(params)))


def test_a_handle_expires_and_is_bound_to_its_purpose() -> None:
    drafts = HandleSigner("alert-draft", key=b"k", ttl_seconds=60)
    handle = drafts.mint({"station": "oslo"}, principal=None)
    assert drafts.redeem(handle, None) == {"station": "oslo"}
    with pytest.raises(HandleRefused, match="someone else"):
        drafts.redeem(handle, "another-principal")
    with pytest.raises(HandleRefused, match="signature"):
        HandleSigner("invoice", key=b"k").redeem(handle, None)
    with pytest.raises(HandleRefused, match="not a handle"):
        drafts.redeem("abcde.f", None)
    expired = HandleSigner("alert-draft", key=b"k", ttl_seconds=-1).mint({"station": "oslo"}, None)
    with pytest.raises(HandleRefused, match="expired"):
        drafts.redeem(expired, None)


def test_a_handle_is_bound_to_the_server_that_minted_it() -> None:
    """Two servers of one deployment share the key; each refuses the other's handles."""
    handle = HandleSigner("alert-draft", key=b"k", issuer="weather-desk").mint({"station": "oslo"}, None)
    assert HandleSigner("alert-draft", key=b"k", issuer="weather-desk").redeem(handle, None) == {"station": "oslo"}
    with pytest.raises(HandleRefused, match="another server"):
        HandleSigner("alert-draft", key=b"k", issuer="tides").redeem(handle, None)


def test_a_handle_is_no_request_state_and_a_request_state_no_handle() -> None:
    """Handles and requestState are sealed with one deployment key, for different purposes."""
    handle = call("draft_alert", {"station": "oslo", "message": "gusts"}, {})["structuredContent"]["handle"]
    with pytest.raises(MCPError, match="requestState refused: its signature does not match"):
        call("schedule_visit", {"station": "oslo"}, FORM, requestState=handle)
    state = call("schedule_visit", {"station": "oslo"}, FORM)["requestState"]
    refused = call("issue_alert", {"handle": state}, {})
    assert refused["isError"] is True
    assert refused["content"][0]["text"] == (
        "This handle cannot be used: its signature does not match. Draft the alert again."
    )


def test_a_sampled_answer_must_be_text_and_roots_must_include_a_folder() -> None:
    both = {"sampling": {}, "roots": {}}
    picture = {"role": "assistant", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}, "model": "m"}
    roots = {"roots": [{"uri": "file:///tmp"}]}
    with pytest.raises(MCPError) as caught:
        call("write_bulletin", {"city": "Oslo"}, both, inputResponses={"headline": picture, "roots": roots})
    assert caught.value.code == INVALID_PARAMS
    text = {"role": "assistant", "content": {"type": "text", "text": "Rain."}, "model": "m"}
    no_folder = call(
        "write_bulletin", {"city": "Oslo"}, both, inputResponses={"headline": text, "roots": {"roots": []}}
    )
    assert no_folder["isError"] is True
    with pytest.raises(MCPError):
        call("write_bulletin", {"city": "Oslo"}, both, inputResponses={"headline": text, "roots": {"roots": "x"}})


def test_a_visit_checks_the_day_against_the_sealed_offer_and_takes_no_for_an_answer() -> None:
    asked = call("schedule_visit", {"station": "oslo"}, FORM)
    offered = asked["inputRequests"]["day"]["params"]["requestedSchema"]["properties"]["day"]["enum"]
    other = next(day for day in ("Mon", "Tue", "Wed", "Thu", "Fri") if day not in offered)
    state = asked["requestState"]
    with pytest.raises(MCPError, match="not one of the days offered"):
        call(
            "schedule_visit",
            {"station": "oslo"},
            FORM,
            requestState=state,
            inputResponses={"day": {"action": "accept", "content": {"day": other}}},
        )
    declined = call(
        "schedule_visit", {"station": "oslo"}, FORM, requestState=state, inputResponses={"day": {"action": "decline"}}
    )
    assert declined["content"][0]["text"] == "No visit booked."


def test_a_declined_feed_link_is_not_linked() -> None:
    url = {"elicitation": {"url": {}}}
    asked = call("link_station_feed", {"station": "oslo"}, url)
    answer = call(
        "link_station_feed",
        {"station": "oslo"},
        url,
        requestState=asked["requestState"],
        inputResponses={"sign_in": {"action": "decline"}},
    )
    assert answer["content"][0]["text"] == "The oslo feed was not linked."
    again = call("link_station_feed", {"station": "oslo"}, url, requestState=asked["requestState"])
    assert again["inputRequests"]["sign_in"]["params"]["url"] == asked["inputRequests"]["sign_in"]["params"]["url"]
