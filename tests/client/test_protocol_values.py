"""The client spells no protocol value of its own: each comes from its one home, shared with the
server (`mcpref.jsonrpc` error codes, `mcpref.headers.ACCEPT`, `mcpref.meta` keys,
`mcpref.subscriptions.LIST_FLAGS`), so the two sides cannot drift apart."""

from __future__ import annotations

import ast
from pathlib import Path

from mcpref import headers, meta
from mcpref.subscriptions import LIST_FLAGS
from tests.conftest import ROOT

#: Values the client must import rather than write: the Accept string, the `_meta` keys, the
#: listen filter flags and the notifications they turn on.
HOMED = {
    headers.ACCEPT,
    *(value for name, value in vars(meta).items() if name.endswith("_KEY") and value.startswith("io.")),
    *LIST_FLAGS,
    *(notification for _, notification in LIST_FLAGS.values()),
}


def literals(path: Path) -> list[tuple[int, object]]:
    """Every string and number written in the code (docstrings aside), with its line."""
    tree = ast.parse(path.read_text("utf-8"))
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    found: list[tuple[int, object]] = []
    for node in ast.walk(tree):
        negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
        if negative and isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, int):
            found.append((node.lineno, -node.operand.value))
        elif isinstance(node, ast.Constant) and id(node) not in docstrings:
            found.append((node.lineno, node.value))
    return found


def test_the_client_imports_protocol_values_from_their_homes() -> None:
    written = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for path in sorted((ROOT / "mcpref" / "client").glob("*.py"))
        for line, value in literals(path)
        # JSON-RPC reserves -32768 to -32000 for error codes; they live in mcpref.jsonrpc.
        if value in HOMED or (type(value) is int and -32768 <= value <= -32000)
    ]
    assert written == []


def test_the_check_sees_a_code_and_a_key(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""Docstrings may say -32002 and io.modelcontextprotocol/serverInfo."""\n'
        'CODE = -32002\nKEY = "io.modelcontextprotocol/serverInfo"\n'
    )
    assert (2, -32002) in literals(sample) and (3, meta.SERVER_INFO_KEY) in literals(sample)
    assert meta.SERVER_INFO_KEY in HOMED and headers.ACCEPT in HOMED and "toolsListChanged" in HOMED
