"""Synthetic weather: deterministic numbers derived from names, so every page frame is repeatable.

Only `issuedAt` depends on the clock; it is the value the docs write as a placeholder.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from mcpref import ResourceNotFound

STATIONS = ("lisbon", "nairobi", "oslo", "osaka", "zurich")
SUMMARIES = ("clear", "light rain", "overcast", "showers", "sunny spells", "windy")


def synthetic_number(*parts: str, low: int, high: int) -> int:
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return low + int.from_bytes(digest[:4], "big") % (high - low + 1)


def forecast(city: str, days: int) -> dict[str, Any]:
    """A forecast for any city name; the same name always gets the same weather."""
    key = city.strip().lower()
    outlook = []
    for day in range(1, days + 1):
        high = synthetic_number(key, str(day), "high", low=4, high=31)
        outlook.append(
            {
                "day": day,
                "summary": SUMMARIES[synthetic_number(key, str(day), "sky", low=0, high=len(SUMMARIES) - 1)],
                "highC": high,
                "lowC": high - synthetic_number(key, str(day), "spread", low=3, high=11),
            }
        )
    return {"city": city, "issuedAt": now(), "days": outlook}


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def station_report(station_id: str | None) -> str:
    """JSON text for one station, or for all of them when `station_id` is None."""
    if station_id is None:
        return json.dumps([{"id": s, "uri": f"weather://stations/{s}"} for s in STATIONS])
    if station_id not in STATIONS:
        raise ResourceNotFound(f"weather://stations/{station_id}")
    reading = {
        "id": station_id,
        "temperatureC": synthetic_number(station_id, "now", low=-5, high=30),
        "windKph": synthetic_number(station_id, "wind", low=0, high=60),
    }
    return json.dumps(reading)
