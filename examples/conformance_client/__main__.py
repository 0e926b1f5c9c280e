"""`MCP_CONFORMANCE_SCENARIO=<name> python -m examples.conformance_client <server-url>`."""

import asyncio
import os
import sys

from . import DONE, cannot

name = os.environ.get("MCP_CONFORMANCE_SCENARIO")
if name is None or len(sys.argv) < 2:
    sys.exit("usage: MCP_CONFORMANCE_SCENARIO=<scenario> python -m examples.conformance_client <server-url>")
reason = cannot(name)
if reason is not None:
    sys.exit(f"{name}: cannot take part: {reason}")

from .scenarios import run  # noqa: E402  (imported only now: the scenarios above need no client)

asyncio.run(run(name, sys.argv[-1]))
print(DONE)
