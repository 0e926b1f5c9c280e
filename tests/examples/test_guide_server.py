"""The guide server, step by step: each step keeps what the one before it offered, and adds."""

import asyncio

import httpx
import pytest

from examples.guide_server import step1_first_tool, step6_input, step7_cache_and_pages
from mcpref.client import Client, EraCache, MissingRequiredClientCapability


def run_with(app, work, **options):
    """Run `work(client)` against `app` in-process, and return what it returns."""

    async def session():
        async with (
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as http,
            Client("http://trailhead.test/mcp", http=http, era_cache=EraCache(), **options) as client,
        ):
            return await work(client)

    return asyncio.run(session())


async def tool_names(client):
    return [tool["name"] for tool in await client.list_tools()]


def test_each_step_keeps_the_tools_before_it():
    assert run_with(step1_first_tool.app, tool_names) == ["greet"]
    assert run_with(step7_cache_and_pages.app, tool_names) == [
        "greet", "find_trails", "walking_time", "trail_card", "check_conditions", "book_shelter"
    ]


def test_steps_do_not_share_a_server():
    assert step7_cache_and_pages.build() is not step7_cache_and_pages.server
    assert len(step1_first_tool.server.tools) == 1


def test_booking_needs_form_elicitation():
    async def book(client):
        return await client.call_tool("book_shelter", {"trail": "lake-path"})

    with pytest.raises(MissingRequiredClientCapability):
        run_with(step6_input.app, book)


def test_a_declined_form_books_nothing():
    async def book(client):
        return await client.call_tool("book_shelter", {"trail": "lake-path"})

    answer = run_with(step6_input.app, book, elicitation=lambda params: {"action": "decline"})
    assert answer["content"][0]["text"] == "Nothing booked."
