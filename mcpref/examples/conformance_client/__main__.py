"""`MCP_CONFORMANCE_SCENARIO=<name> python -m mcpref.examples.conformance_client <server-url>`."""

import asyncio
import os
import sys

from . import DONE
from .scenarios import run

name = os.environ.get("MCP_CONFORMANCE_SCENARIO")
if name is None or len(sys.argv) < 2:
    sys.exit("usage: MCP_CONFORMANCE_SCENARIO=<scenario> python -m mcpref.examples.conformance_client <server-url>")
asyncio.run(run(name, sys.argv[-1]))
print(DONE)
