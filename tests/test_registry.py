"""The registry tools, prompts and resources share: keys, order, visibility and change callbacks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from mcpref.jsonrpc import INVALID_PARAMS, MCPError
from mcpref.registry import Registry


@dataclass
class Entry:
    name: str
    visible: Any = None


def only_alice(principal: str | None) -> bool:
    return principal == "alice"


def registry() -> tuple[Registry[Entry], list[int]]:
    entries: Registry[Entry] = Registry("widget", lambda entry: entry.name)
    changes: list[int] = []
    entries.on_change = lambda: changes.append(len(entries))
    return entries, changes


def test_entries_keep_their_order_and_each_change_is_announced() -> None:
    entries, changes = registry()
    for name in ("b", "a", "c"):
        entries.add(Entry(name))
    entries.remove("a")
    assert [entry.name for entry in entries] == ["b", "c"] and len(entries) == 2
    assert changes == [1, 2, 3, 2]


def test_a_key_is_registered_once() -> None:
    entries, changes = registry()
    entries.add(Entry("a"))
    with pytest.raises(ValueError, match="widget 'a' is already registered"):
        entries.add(Entry("a"))
    assert changes == [1]


def test_a_list_depends_on_who_asks_only_while_some_entry_is_gated() -> None:
    entries, _ = registry()
    entries.add(Entry("open"))
    shown, per_principal = entries.visible_to("bob")
    assert [e.name for e in shown] == ["open"] and not per_principal
    entries.add(Entry("secret", visible=only_alice))
    assert [e.name for e in entries.visible_to("alice")[0]] == ["open", "secret"]
    shown, per_principal = entries.visible_to("bob")
    assert [e.name for e in shown] == ["open"] and per_principal
    entries.remove("secret")
    assert entries.visible_to("bob")[1] is False


@pytest.mark.parametrize("key", ["secret", "nope", ["a", "list"], {"an": "object"}, 7, None])
def test_hidden_absent_and_malformed_keys_are_all_unknown(key: Any) -> None:
    entries, _ = registry()
    entries.add(Entry("secret", visible=only_alice))
    assert entries.find(key, "bob") is None
    with pytest.raises(MCPError) as caught:
        entries.require(key, "bob")
    assert (caught.value.code, caught.value.message) == (INVALID_PARAMS, f"Unknown widget: {key}")
    if key == "secret":
        assert entries.require(key, "alice") is entries.get(key) is entries.find(key, "alice")


def test_a_registry_nobody_listens_to_still_changes() -> None:
    entries: Registry[Entry] = Registry("widget", lambda entry: entry.name)
    entries.add(Entry("a"))
    entries.remove("a")
    assert len(entries) == 0


def test_every_gated_entry_counts_until_it_is_removed() -> None:
    entries, _ = registry()
    entries.add(Entry("secret", visible=only_alice))
    entries.add(Entry("hidden", visible=only_alice))
    entries.add(Entry("open"))
    shown, per_principal = entries.visible_to("bob")
    assert [e.name for e in shown] == ["open"] and per_principal
    entries.remove("secret")
    shown, per_principal = entries.visible_to("bob")
    assert [e.name for e in shown] == ["open"] and per_principal


@pytest.mark.parametrize("key", [["a", "list"], {"an": "object"}, 7, None])
def test_get_reads_a_key_that_is_not_a_string_as_none(key: Any) -> None:
    entries, _ = registry()
    entries.add(Entry("7"))
    assert entries.get(key) is None
