"""Per-request `_meta`: the required keys, version checks, capability checks."""

from __future__ import annotations

import pytest

from mcpref import meta
from mcpref.jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION, MCPError
from mcpref.meta import missing_capabilities, read_request_meta, require_capabilities
from tests.test_meta_keys import KEY

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"


def test_reads_every_known_key() -> None:
    meta = read_request_meta(
        {
            "_meta": {
                VERSION_KEY: "2026-07-28",
                CAPS_KEY: {"elicitation": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "io.modelcontextprotocol/logLevel": "info",
                "progressToken": 5,
            }
        }
    )
    assert meta.protocol_version == "2026-07-28"
    assert meta.client_capabilities == {"elicitation": {}}
    assert meta.client_info == {"name": "c", "version": "1"}
    assert (meta.log_level, meta.progress_token) == ("info", 5)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"_meta": None},
        {"_meta": {CAPS_KEY: {}}},
        {"_meta": {VERSION_KEY: "2026-07-28"}},
        {"_meta": {VERSION_KEY: 1, CAPS_KEY: {}}},
    ],
)
def test_missing_required_keys_are_invalid_params_with_400(params: dict) -> None:
    with pytest.raises(MCPError) as caught:
        read_request_meta(params)
    assert (caught.value.code, caught.value.http_status) == (INVALID_PARAMS, 400)


def test_unsupported_version_lists_what_is_supported() -> None:
    with pytest.raises(MCPError) as caught:
        read_request_meta({"_meta": {VERSION_KEY: "2025-11-25", CAPS_KEY: {}}})
    assert caught.value.code == UNSUPPORTED_PROTOCOL_VERSION
    assert caught.value.data == {"supported": ["2026-07-28"], "requested": "2025-11-25"}


def test_supported_none_reads_any_version_without_judging_it() -> None:
    meta = read_request_meta({"_meta": {VERSION_KEY: "v999.0.0", CAPS_KEY: {}}}, supported=None)
    assert meta.protocol_version == "v999.0.0"


@pytest.mark.parametrize(
    ("token", "named"),
    [
        (True, "a boolean"),
        (False, "a boolean"),
        (1.5, "the number 1.5"),
        (1.0, "the number 1.0"),
        (None, "null"),
        ({"id": 1}, "an object"),
        (["t"], "an array"),
    ],
)
def test_a_progress_token_that_is_no_string_or_integer_is_invalid_params(token: object, named: str) -> None:
    """basic/patterns/progress.mdx: a token MUST be a string or an integer. Refused, not ignored:
    silently sending no progress would leave the client waiting for what it asked for."""
    with pytest.raises(MCPError) as caught:
        read_request_meta({"_meta": {VERSION_KEY: "2026-07-28", CAPS_KEY: {}, "progressToken": token}})
    assert (caught.value.code, caught.value.http_status) == (INVALID_PARAMS, None)
    assert caught.value.message == (
        f"Invalid params: params._meta.progressToken must be a string or an integer, not {named}"
    )


@pytest.mark.parametrize("token", ["", "t", 0, -7, 2**63])
def test_any_string_or_integer_is_a_progress_token(token: object) -> None:
    meta = read_request_meta({"_meta": {VERSION_KEY: "2026-07-28", CAPS_KEY: {}, "progressToken": token}})
    assert meta.progress_token == token and type(meta.progress_token) is type(token)


def test_an_unsupported_version_message_names_every_supported_version() -> None:
    """A legacy client may show its user only the message: it names each version the server
    serves, in the server's order, not only the first."""
    error = meta.unsupported_version("2024-11-05", ("2026-07-28", "2025-11-25"))
    assert error.message == "Unsupported protocol version: 2024-11-05 (this server supports 2026-07-28, 2025-11-25)"


@pytest.mark.parametrize(
    ("required", "declared", "missing"),
    [
        ({"elicitation": {}}, {}, {"elicitation": {}}),
        ({"elicitation": {}}, {"elicitation": {"form": {}}}, {}),
        ({"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}),
        ({"sampling": {}, "roots": {}}, {"roots": {}}, {"sampling": {}}),
        ({"elicitation": {}}, {"elicitation": True}, {"elicitation": {}}),
        ({"elicitation": {"form": {}}}, {"elicitation": {}}, {}),
        ({"elicitation": {"url": {}}}, {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ({"elicitation": {}}, {"elicitation": {"url": {}}}, {"elicitation": {}}),
    ],
)
def test_missing_capabilities(required: dict, declared: dict, missing: dict) -> None:
    assert missing_capabilities(required, declared) == missing


def test_require_capabilities_raises_32021_with_the_missing_part() -> None:
    with pytest.raises(MCPError) as caught:
        require_capabilities({"sampling": {}}, {})
    assert caught.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert caught.value.data == {"requiredCapabilities": {"sampling": {}}}


def test_an_unknown_log_level_is_invalid_params() -> None:
    with pytest.raises(MCPError) as caught:
        read_request_meta(
            {"_meta": {VERSION_KEY: "2026-07-28", CAPS_KEY: {}, "io.modelcontextprotocol/logLevel": "loud"}}
        )
    assert caught.value.code == INVALID_PARAMS


def test_every_meta_key_mcpref_uses_follows_the_naming_rules() -> None:
    keys = [value for name, value in vars(meta).items() if name.endswith("_KEY") and isinstance(value, str)]
    assert len(keys) >= 6
    for key in keys:
        assert KEY.fullmatch(key), key
        prefix = key.partition("/")[0] if "/" in key else ""
        assert not prefix or prefix.split(".")[:2] == ["io", "modelcontextprotocol"], key  # reverse DNS
    for bad in ("1io/x", "io./x", "io.-x/y", "io/-x", "io/x-"):
        assert not KEY.fullmatch(bad), bad


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"_meta": None}, "params._meta is required and must be an object"),
        ({"_meta": {CAPS_KEY: {}}}, f'params._meta["{VERSION_KEY}"] is required and must be a string'),
        ({"_meta": {VERSION_KEY: "2026-07-28"}}, f'params._meta["{CAPS_KEY}"] is required and must be an object'),
    ],
)
def test_a_missing_key_is_named_in_the_error(params: dict, reason: str) -> None:
    with pytest.raises(MCPError) as caught:
        read_request_meta(params)
    assert caught.value.message == f"Invalid params: {reason}"


def test_an_unknown_log_level_error_lists_the_levels() -> None:
    with pytest.raises(MCPError) as caught:
        read_request_meta({"_meta": {VERSION_KEY: "2026-07-28", CAPS_KEY: {}, "io.modelcontextprotocol/logLevel": "x"}})
    assert "use one of debug, info, notice, warning, error, critical, alert, emergency" in caught.value.message


def test_the_whole_meta_is_kept_and_a_malformed_client_info_is_dropped() -> None:
    sent = {VERSION_KEY: "2026-07-28", CAPS_KEY: {}, "io.modelcontextprotocol/clientInfo": "c", "x.example/k": 1}
    read = read_request_meta({"_meta": sent})
    assert read.raw == sent
    assert read.client_info is None


@pytest.mark.parametrize(("requested", "echoed"), [("1999-01-01", "1999-01-01"), (5, ""), (None, "")])
def test_an_unsupported_version_echoes_only_a_string(requested: object, echoed: str) -> None:
    error = meta.unsupported_version(requested, ("2026-07-28",))
    assert error.code == UNSUPPORTED_PROTOCOL_VERSION
    assert error.data == {"supported": ["2026-07-28"], "requested": echoed}


@pytest.mark.parametrize("requested", [None, 5, {"v": 1}, ["2026-07-28"]])
def test_an_unsupported_version_message_never_shows_a_python_value(requested: object) -> None:
    """A modern-only server's answer to an `initialize` without a string version said
    "Unsupported protocol version: None" (or `{'v': 1}`): Python's spelling, which no client sent."""
    error = meta.unsupported_version(requested, ("2026-07-28",))
    assert error.message == "Unsupported protocol version: none named as a string (this server supports 2026-07-28)"


@pytest.mark.parametrize(
    ("required", "declared", "missing"),
    [
        ({"sampling": {"tools": {}}}, {"sampling": {}}, {"sampling": {"tools": {}}}),
        ({"sampling": {"tools": {}, "context": {}}}, {"sampling": {"tools": {}}}, {"sampling": {"context": {}}}),
    ],
)
def test_a_nested_capability_reports_only_what_is_lacking(required: dict, declared: dict, missing: dict) -> None:
    assert missing_capabilities(required, declared) == missing


def test_require_capabilities_names_them_in_order() -> None:
    with pytest.raises(MCPError) as caught:
        require_capabilities({"sampling": {}, "roots": {}}, {})
    assert caught.value.message == "Missing required client capability: roots, sampling"
