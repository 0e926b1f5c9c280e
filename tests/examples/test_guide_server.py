"""The guide server, step by step: each step keeps what the one before it
offered, and adds."""

import asyncio
import importlib

import httpx
import pytest

from mcpref.client import Client, EraCache, MissingRequiredClientCapability
from mcpref.examples.guide_server import (
    step1_first_tool,
    step6_input,
    step7_cache_and_pages,
)

PACKAGE = "mcpref.examples.guide_server"
STEPS = [
    "step1_first_tool",
    "step2_tools",
    "step3_resources",
    "step4_prompts",
    "step5_progress",
    "step6_input",
    "step7_cache_and_pages",
]


def run_with(app, work, **options):
    """What `work(client)` returns, run against `app` in-process."""
    url = "http://trailhead.test/mcp"
    transport = httpx.ASGITransport(app=app)

    async def session():
        async with (
            httpx.AsyncClient(transport=transport) as http,
            Client(
                url, http=http, era_cache=EraCache(), **options
            ) as client,
        ):
            return await work(client)

    return asyncio.run(session())


async def tool_names(client):
    return [tool["name"] for tool in await client.list_tools()]


def test_each_step_keeps_the_tools_before_it():
    assert run_with(step1_first_tool.app, tool_names) == ["greet"]
    assert run_with(step7_cache_and_pages.app, tool_names) == [
        "greet",
        "find_trails",
        "walking_time",
        "trail_card",
        "check_conditions",
        "book_shelter",
    ]


def test_each_step_offers_everything_the_step_before_it_did():
    offered = []
    for name in STEPS:
        step = importlib.import_module(f"{PACKAGE}.{name}")
        server = step.build()
        now = (
            [tool.name for tool in server.tools],
            [res.uri for res in server.resources.resources.values()],
            [prompt.name for prompt in server.prompts],
            sorted(server.capabilities()),
        )
        settings = (server.cache, server.page_size)
        if offered:
            before, _ = offered[-1]
            kept = zip(before, now, strict=True)
            assert all(set(b) <= set(a) for b, a in kept), f"{name} drops"
            assert (now, settings) != offered[-1], f"{name} adds nothing"
        offered.append((now, settings))


def test_steps_do_not_share_a_server():
    whole = step7_cache_and_pages
    assert whole.build() is not whole.server
    assert len(step1_first_tool.server.tools) == 1


async def book(client):
    return await client.call_tool("book_shelter", {"trail": "lake-path"})


def test_booking_needs_form_elicitation():
    with pytest.raises(MissingRequiredClientCapability):
        run_with(step6_input.app, book)


def test_a_declined_form_books_nothing():
    def decline(params):
        return {"action": "decline"}

    answer = run_with(step6_input.app, book, elicitation=decline)
    assert answer["content"][0]["text"] == "Nothing booked."
