"""The binary payloads the fixtures hand out, as the base64 text the wire carries.

They are the same bytes the official conformance suite's own fixture server uses.
"""

from __future__ import annotations

import base64

#: A 1×1 red pixel.
RED_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

#: A one-sample, 8 kHz, 16-bit mono WAV file.
SILENT_WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="


def png_bytes() -> bytes:
    """The red pixel as raw bytes; a resource that returns `bytes` is sent as a base64 `blob`."""
    return base64.b64decode(RED_PIXEL_PNG)
