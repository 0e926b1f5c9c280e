"""Codes in the legacy range -32000..-32019 (basic/index.mdx §Error Codes) mean nothing in
particular to a receiver, except -32002, still read as a missing resource from older servers."""

from __future__ import annotations

import pytest

from mcpref.client import InvalidParams, MCPClientError
from mcpref.client._errors import error_from


@pytest.mark.parametrize("code", [-32000, -32001, -32010, -32019])
def test_legacy_range_codes_get_no_special_meaning(code: int) -> None:
    error = error_from({"code": code, "message": "implementation-defined"})
    assert type(error) is MCPClientError and error.code == code


def test_the_retired_resource_not_found_code_is_still_understood() -> None:
    assert type(error_from({"code": -32002, "message": "Resource not found"})) is InvalidParams
