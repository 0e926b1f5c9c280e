"""The hostile suite's server over stdio, as a real child process, with a 64 KiB line limit so
an oversized line is cheap to send: `python -m tests.hostile.stdio_server`."""

import asyncio

from mcpref.transports.stdio import StdioServerTransport
from tests.hostile.conftest import hostile_server

LINE_LIMIT = 64 * 1024

if __name__ == "__main__":
    asyncio.run(StdioServerTransport(hostile_server(), max_line_bytes=LINE_LIMIT).run())
