"""The client's SSE reader (`mcpref.client._sse`) on the event stream format's own cases (HTML
§9.2.6): every line ending, split anywhere between chunks, and each field. The reader takes the
body as chunks of bytes, so these feed it chunks; tests/client/test_http.py and test_limits.py
read streams from a real server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mcpref.client._sse import Event, EventTooLarge, events

pytestmark = pytest.mark.anyio


async def read(*chunks: bytes, limit: int = 1000) -> list[Event]:
    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return [event async for event in events(body(), limit)]


STREAM = b"event: message\ndata: one\ndata:  two\nid: 7\nretry: 300\n\n: a comment\ndata\nfoo: ignored\n\n"
EXPECTED = [Event("message", b"one\n two", "7", 300), Event("", b"", "7", 300)]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
async def test_every_line_ending_split_at_every_byte_gives_the_same_events(ending: bytes) -> None:
    stream = STREAM.replace(b"\n", ending)
    assert await read(stream) == EXPECTED
    for cut in range(1, len(stream)):
        assert await read(stream[:cut], stream[cut:]) == EXPECTED, cut
    assert await read(*(stream[i : i + 1] for i in range(len(stream)))) == EXPECTED


async def test_a_blank_line_without_data_dispatches_nothing_and_resets_the_event_type() -> None:
    assert await read(b"event: ping\n\ndata: x\n\n") == [Event("", b"x")]


async def test_an_id_with_nul_and_a_retry_that_is_no_number_are_ignored() -> None:
    assert await read(b"id: 1\ndata: a\n\nid: 2\x003\nretry: soon\ndata: b\n\n") == [
        Event("", b"a", "1"),
        Event("", b"b", "1"),
    ]


async def test_an_event_the_stream_ends_in_is_dropped() -> None:
    assert await read(b"data: a\n\ndata: b\n") == [Event("", b"a")]


async def test_the_bound_counts_every_line_of_one_event_and_starts_again_after_it() -> None:
    assert await read(b"data: 12\n\n" * 5, limit=8) == [Event("", b"12")] * 5
    with pytest.raises(EventTooLarge) as caught:
        await read(b"data: 1\n", b"data: 2\n", limit=10)
    assert (caught.value.limit, caught.value.size) == (10, 14)
    with pytest.raises(EventTooLarge):  # a line still arriving counts too
        await read(b"data: 1", b"2345", limit=10)
