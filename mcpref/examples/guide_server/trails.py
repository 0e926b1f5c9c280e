"""The guide server's data: a handful of made-up trails, so every answer is
the same on every run."""

from typing import TypedDict


class Trail(TypedDict):
    name: str
    region: str
    km: float
    climbM: int


TRAILS: dict[str, Trail] = {
    "ridge-loop": {
        "name": "Ridge Loop",
        "region": "north",
        "km": 12.5,
        "climbM": 640,
    },
    "lake-path": {
        "name": "Lake Path",
        "region": "south",
        "km": 4.0,
        "climbM": 30,
    },
    "fern-gully": {
        "name": "Fern Gully",
        "region": "south",
        "km": 7.2,
        "climbM": 210,
    },
    "summit-dash": {
        "name": "Summit Dash",
        "region": "north",
        "km": 9.8,
        "climbM": 1120,
    },
    "old-mill": {
        "name": "Old Mill Walk",
        "region": "east",
        "km": 3.1,
        "climbM": 15,
    },
}

#: A one-pixel, forest-green PNG: the "map" every trail has, small enough
#: to show as a blob on a page.
MAP_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c63d0ab35fa0f00039701ddcce65927"
    "0000000049454e44ae426082"
)

#: One silent sample of 16-bit mono WAV at 8 kHz: the trail's "soundscape",
#: as small as audio gets.
SOUNDSCAPE_WAV = bytes.fromhex(
    "524946462600000057415645"
    "666d74201000000001000100401f0000803e000002001000"
    "64617461020000000000"
)
