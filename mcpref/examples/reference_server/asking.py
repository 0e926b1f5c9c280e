"""Tools that need something from the client mid-call: multi round-trip requests (MRTR).

A server never sends a request of its own in 2026-07-28 (basic/patterns/mrtr.mdx). Each tool here
finishes its call with an `input_required` result naming what it needs, and finishes the work when
the client calls again with the answers. One wire behaviour per tool:

- `write_bulletin`: two input requests in one round, of two kinds (`sampling/createMessage` and
  `roots/list`), and no `requestState` at all: the arguments come back with the retry, and that is
  all the tool needs. A retry that answers only one of them is asked again for the other.
- `link_station_feed`: elicitation in URL mode, with the tool's own correlation id in the sealed
  `requestState` (2026-07-28 dropped `elicitationId`).
- `schedule_visit`: three rounds, a new sealed state in each, and the answer checked against what
  the server offered.

None of them declares `requires=`: the core checks, when a tool asks, that the request declared
the capability the input request needs, and answers -32021 if it did not.
"""

from __future__ import annotations

import uuid
from typing import Any

from mcpref import (
    INVALID_PARAMS,
    InputRequired,
    MCPError,
    RequestContext,
    Server,
    ToolError,
    create_message,
    elicit_form,
    elicit_url,
    list_roots,
)

from .data import STATIONS, forecast, synthetic_number

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")
STATION = {"type": "string", "enum": list(STATIONS)}


def register_asking_tools(server: Server) -> None:
    @server.tool(
        title="Write a radio bulletin",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
    def write_bulletin(city: str, ctx: RequestContext) -> str | InputRequired:
        """Ask the client's model for a headline and the client's roots for where to save it."""
        headline, roots = ctx.input_response("headline"), ctx.input_response("roots")
        if headline is None or roots is None:
            # Whatever is still missing is asked for again, rather than refused (mrtr.mdx §Error Handling).
            wanted: dict[str, dict[str, Any]] = {}
            if headline is None:
                day = forecast(city, 1)["days"][0]
                prompt = f"One-line radio headline: {city} tomorrow, {day['summary']}, high {day['highC']}°C."
                wanted["headline"] = create_message(prompt, max_tokens=40)
            if roots is None:
                wanted["roots"] = list_roots()
            return InputRequired(wanted)
        folder = next((root["uri"] for root in _roots(roots) if root["uri"].startswith("file://")), None)
        if folder is None:
            raise ToolError("The client shared no file:// root to save the bulletin in.")
        return f"{_sampled_text(headline)} (save as {folder.rstrip('/')}/{city.lower()}-bulletin.txt)"

    @server.tool(
        title="Link a station's live feed",
        input_schema={"type": "object", "properties": {"station": STATION}, "required": ["station"]},
    )
    def link_station_feed(station: str, ctx: RequestContext) -> str | InputRequired:
        """Send the user to the feed provider's site to approve the link (URL elicitation)."""
        answer = ctx.input_response("sign_in")
        if ctx.state is None or answer is None:
            # Our own id for this sign-in, kept in the sealed state so the retry can look it up.
            link = ctx.state["link"] if ctx.state else str(uuid.uuid4())
            page = f"https://feeds.weather-desk.example/link/{link}"
            ask = elicit_url(f"Approve the {station} feed at the provider's site.", page)
            return InputRequired({"sign_in": ask}, state={"link": link})
        if answer.get("action") != "accept":
            return f"The {station} feed was not linked."
        # A real server would now ask the provider whether link ctx.state["link"] was approved, and
        # answer input_required again if not yet. The reference desk has no provider to ask.
        return f"The {station} feed is linked."

    @server.tool(
        title="Book a technician visit",
        input_schema={"type": "object", "properties": {"station": STATION}, "required": ["station"]},
    )
    def schedule_visit(station: str, ctx: RequestContext) -> str | InputRequired:
        """Two questions, one round each: which of the offered days, then whether the slot suits."""
        state = ctx.state or {"offered": _offered_days(station)}
        if "day" not in state:
            answer = ctx.input_response("day")
            if answer is None:
                return _ask_day(station, state["offered"])
            if answer.get("action") != "accept":
                return "No visit booked."
            day = (answer.get("content") or {}).get("day")
            if not isinstance(day, str) or day not in state["offered"]:
                # The form limits the choice, but the answer comes from the client: check it.
                raise MCPError(INVALID_PARAMS, f"Invalid params: {day!r} is not one of the days offered")
            slot = f"{synthetic_number(station, day, low=8, high=15):02d}:00"
            question = f"The technician can be at {station} on {day} at {slot}. Book it?"
            confirm = elicit_form(question, {"book": {"type": "boolean", "title": "Book"}}, ["book"])
            return InputRequired({"confirm": confirm}, state={"day": day, "slot": slot})
        answer = ctx.input_response("confirm")
        if answer is None:
            question = f"The technician can be at {station} on {state['day']} at {state['slot']}. Book it?"
            confirm = elicit_form(question, {"book": {"type": "boolean", "title": "Book"}}, ["book"])
            return InputRequired({"confirm": confirm}, state=state)
        if answer.get("action") == "accept" and (answer.get("content") or {}).get("book"):
            return f"Visit to {station} booked for {state['day']} at {state['slot']}."
        return "No visit booked."


def _offered_days(station: str) -> list[str]:
    first = synthetic_number(station, "visit", low=0, high=2)
    return [WEEKDAYS[first], WEEKDAYS[first + 2]]


def _ask_day(station: str, offered: list[str]) -> InputRequired:
    day = {"type": "string", "title": "Day", "enum": offered}
    form = elicit_form(f"Which day should the technician visit {station}?", {"day": day}, ["day"])
    return InputRequired({"day": form}, state={"offered": offered})


def _sampled_text(result: dict[str, Any]) -> str:
    """The text of a `CreateMessageResult`; anything else is a malformed answer (-32602)."""
    content = result.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts = [block.get("text") for block in blocks if isinstance(block, dict) and block.get("type") == "text"]
    strings = [text for text in texts if isinstance(text, str)]
    if not strings or len(strings) < len(texts):
        raise MCPError(INVALID_PARAMS, "Invalid params: inputResponses.headline must be a sampled text message")
    return " ".join(strings).strip()


def _roots(result: dict[str, Any]) -> list[dict[str, str]]:
    roots = result.get("roots")
    if not isinstance(roots, list) or not all(isinstance(r, dict) and isinstance(r.get("uri"), str) for r in roots):
        raise MCPError(INVALID_PARAMS, "Invalid params: inputResponses.roots must be a ListRootsResult")
    return roots
