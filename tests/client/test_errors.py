"""Each JSON-RPC error code becomes its own exception, raised from what our real server answers."""

from __future__ import annotations

import httpx
import pytest

from bench.procs import free_port
from mcpref import Server, StreamableHTTP
from mcpref.client import (
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MCPClientError,
    MethodNotFound,
    MissingRequiredClientCapability,
    ParseError,
    ProtocolError,
    TransportError,
    UnsupportedProtocolVersion,
    error_from,
)
from tests.client.conftest import connect

pytestmark = pytest.mark.anyio

server = Server("errors-server", "1.0.0")


@server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
def echo(text: str = "") -> str:
    return text


@server.tool(requires={"elicitation": {"form": {}}})
def confirm() -> str:
    return "confirmed"


@server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
def miscount() -> dict:
    return {"n": "not a number"}


@server.resource("memo://one")
def one() -> str:
    return "1"


app = StreamableHTTP(server, max_body_bytes=2048)


async def test_unknown_tool_is_invalid_params(url):
    async with connect(url) as (client, _):
        with pytest.raises(InvalidParams) as caught:
            await client.call_tool("nope")
    assert caught.value.code == -32602
    assert "nope" in caught.value.message


async def test_missing_resource_is_invalid_params_with_the_uri(url):
    async with connect(url) as (client, _):
        with pytest.raises(InvalidParams) as caught:
            await client.read_resource("memo://two")
    assert caught.value.data == {"uri": "memo://two"}


async def test_feature_the_server_does_not_offer_is_method_not_found(url):
    async with connect(url) as (client, _):
        with pytest.raises(MethodNotFound) as caught:
            await client.list_prompts()
    assert caught.value.code == -32601
    assert caught.value.status_code == 404


async def test_missing_capability_names_what_is_required(url):
    async with connect(url) as (client, _):
        with pytest.raises(MissingRequiredClientCapability) as caught:
            await client.call_tool("confirm")
    assert caught.value.required_capabilities == {"elicitation": {"form": {}}}
    assert caught.value.status_code == 400


async def test_declaring_the_capability_lets_the_call_through(url):
    async with connect(url, elicitation=lambda params: {"action": "decline"}) as (client, traffic):
        result = await client.call_tool("confirm")
    assert result["content"][0]["text"] == "confirmed"
    capabilities = traffic.bodies[-1]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert capabilities == {"elicitation": {"form": {}, "url": {}}}


async def test_pinned_unsupported_version_lists_what_the_server_speaks(url):
    async with connect(url, version="2099-01-01") as (client, traffic):
        with pytest.raises(UnsupportedProtocolVersion) as caught:
            await client.list_tools()
    assert caught.value.supported == ["2026-07-28"]
    assert caught.value.requested == "2099-01-01"
    assert traffic.methods == ["tools/list"]  # pinned: no probe, no retry with another version


async def test_a_proxy_rewriting_a_header_gets_header_mismatch(url):
    async def rewrite(request: httpx.Request) -> None:
        if "mcp-name" in request.headers:
            request.headers["Mcp-Name"] = "something-else"

    async with connect(url, version="2026-07-28", hooks=[rewrite]) as (client, _):
        with pytest.raises(HeaderMismatch) as caught:
            await client.call_tool("echo", {"text": "hi"})
    assert caught.value.code == -32020


async def test_server_bug_is_internal_error(url):
    async with connect(url) as (client, _):
        with pytest.raises(InternalError) as caught:
            await client.call_tool("miscount")
    assert caught.value.code == -32603


async def test_oversized_request_is_invalid_request(url):
    async with connect(url, version="2026-07-28") as (client, _):
        with pytest.raises(InvalidRequest) as caught:
            await client.call_tool("echo", {"text": "x" * 4096})
    assert caught.value.status_code == 413


async def test_an_answer_that_is_not_mcp_is_a_transport_error(url):
    async with connect(url.removesuffix("/mcp") + "/elsewhere", version="2026-07-28") as (client, _):
        with pytest.raises(TransportError) as caught:
            await client.list_tools()
    assert caught.value.status_code == 404
    assert caught.value.body == "Not Found"


async def test_nothing_listening_is_a_transport_error():
    async with connect(f"http://127.0.0.1:{free_port()}/mcp") as (client, traffic):
        with pytest.raises(TransportError) as caught:
            await client.list_tools()
    assert caught.value.status_code is None
    assert traffic.methods == ["server/discover"]  # a network failure says nothing about the era


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (-32700, ParseError),
        (-32600, InvalidRequest),
        (-32601, MethodNotFound),
        (-32602, InvalidParams),
        (-32603, InternalError),
        (-32020, HeaderMismatch),
        (-32021, MissingRequiredClientCapability),
        (-32022, UnsupportedProtocolVersion),
        (-32002, InvalidParams),  # the retired resource-not-found code, still accepted from old servers
    ],
)
def test_every_code_has_its_class(code, cls):
    error = error_from({"code": code, "message": "m", "data": {"x": 1}})
    assert type(error) is cls
    assert (error.code, error.message, error.data) == (code, "m", {"x": 1})


def test_undefined_codes_and_malformed_errors():
    unknown = error_from({"code": -32099, "message": "odd"})
    assert type(unknown) is MCPClientError
    assert unknown.code == -32099
    assert isinstance(error_from({"message": "no code"}), ProtocolError)
    assert isinstance(error_from({"code": True, "message": "a bool is not a code"}), ProtocolError)


def test_typed_data_accessors_survive_missing_data():
    assert UnsupportedProtocolVersion("m").supported == []
    assert UnsupportedProtocolVersion("m", data={"supported": ["a", 1]}).supported == ["a"]
    assert MissingRequiredClientCapability("m", data="junk").required_capabilities == {}


def test_the_retired_resource_not_found_code_still_reads_as_not_found():
    # Servers of earlier revisions answer -32002; clients accept it as -32602 (server/resources.mdx).
    error = error_from({"code": -32002, "message": "Resource not found", "data": {"uri": "memo://gone"}})
    assert isinstance(error, InvalidParams) and error.code == -32002


async def test_a_protected_server_without_auth_says_so():
    """A client without `auth=` meets a 401: the error names authorization and the server's
    challenge, instead of only "expected a JSON-RPC response but got HTTP 401 (none): ''"."""
    from mcpref.examples.secure_server.demo import SECURE_PATH, AuthDemo
    from tests.conftest import running

    with running(AuthDemo()) as base:
        async with connect(base + SECURE_PATH, version="2026-07-28") as (client, _):
            with pytest.raises(TransportError) as caught:
                await client.list_tools()
    assert caught.value.status_code == 401
    assert "authorization" in str(caught.value)
    assert "resource_metadata=" in str(caught.value)  # the challenge, which says where to start


@pytest.mark.parametrize("message", [None, 42, ["m"]])
def test_an_error_without_a_text_message_is_named_by_its_code(message):
    error = error_from({"code": -32603, "message": message})
    assert type(error) is InternalError
    assert error.message == str(error) == "error -32603"


@pytest.mark.parametrize("error", [{"code": -32602, "message": "bad"}, {"code": -32099, "message": "odd"}, "junk"])
def test_the_http_status_an_error_came_with_is_kept(error):
    assert error_from(error, status_code=400).status_code == 400
    assert error_from(error).status_code is None


def test_a_malformed_error_object_is_shown_as_it_came():
    error = error_from({"message": "no code"})
    assert str(error) == "malformed JSON-RPC error object: {'message': 'no code'}"
    assert error.code is None


def test_an_errors_repr_shows_its_class_code_message_and_data():
    error = error_from({"code": -32602, "message": "Unknown tool", "data": {"name": "x"}})
    assert repr(error) == "InvalidParams(code=-32602, message='Unknown tool', data={'name': 'x'})"


def test_the_version_a_refused_request_asked_for_is_read_from_the_data():
    refused = UnsupportedProtocolVersion("m", data={"supported": "2026-07-28", "requested": "2025-01-01"})
    assert refused.requested == "2025-01-01"
    assert refused.supported == []  # not a list: nothing usable
    assert UnsupportedProtocolVersion("m", data=["junk"]).requested is None
    needed = MissingRequiredClientCapability("m", data={"requiredCapabilities": {"sampling": {}}})
    assert needed.required_capabilities == {"sampling": {}}
    assert MissingRequiredClientCapability("m", data={"requiredCapabilities": ["sampling"]}).required_capabilities == {}


def test_an_error_made_without_a_code_keeps_its_class_code():
    assert UnsupportedProtocolVersion("m").code == -32022
    assert MCPClientError("m").code is None
    assert TransportError("m").code is None and TransportError("m").timed_out is False
    assert ProtocolError("m", status_code=502).status_code == 502


def test_an_error_class_gets_its_code_from_its_class_statement():
    # Called in the test's body: classes made at import time are made before mutmut picks a mutant.
    class Refused(MCPClientError, code=-32050):
        pass

    class Plain(Refused):
        pass

    assert Refused.code == Refused("m").code == -32050
    assert Plain.code == -32050  # no code given: the parent's
    assert Refused("m", code=-32051).code == -32051
