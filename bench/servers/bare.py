"""The limit of the stack: a bare Starlette route that reads the body and returns a fixed
JSON-RPC result, the one `echo` returns for the benchmark's request. It checks nothing."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bench.messages import ECHO_TEXT, SERVER_INFO_KEY

RESULT = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {
        "resultType": "complete",
        "content": [{"type": "text", "text": ECHO_TEXT}],
        "_meta": {SERVER_INFO_KEY: {"name": "bench-bare", "version": "1.0.0"}},
    },
}


async def mcp(request: Request) -> JSONResponse:
    await request.body()
    return JSONResponse(RESULT)


app = Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])
