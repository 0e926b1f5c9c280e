"""The everything server: every fixture the official MCP conformance suite expects, on the mcpref core.

`tests/conformance/` runs `conformance server --requirements 2026-07-28` and
`--requirements 2025-11-25` (a legacy client, served statelessly) against it. It is also
a tour of the core's API, one small module per kind of thing a server offers:

- `tools.py`: text, image, audio, embedded and mixed content; `isError`; progress; logging;
  a tool that needs a client capability; a JSON Schema 2020-12 tool; an `x-mcp-header` argument;
  tools that announce list changes to `subscriptions/listen` streams.
- `resources.py`: a text resource, a binary resource and a URI template.
- `prompts.py`: prompts with no arguments, required arguments (with completion), an embedded
  resource and an image.
- `input_required.py`: tools and a prompt that ask the client for input (a form, an LLM
  completion, its roots) over several round trips, with state sealed in `requestState`.
- `client_requests.py`: the tools the 2025-11-25 suite expects to send the client a request
  mid-call (sampling, elicitation); they ask with MRTR instead.
- `tasks.py`: tools that may answer with a task (the `io.modelcontextprotocol/tasks` extension):
  slow work, a tool error, a protocol error, input asked mid-task, MRTR before a task. Tasks are
  kept in SQLite: in memory by default, in the file `MCPREF_TASKS_DB` names if set.

Run it with `uvicorn mcpref.examples.everything_server:app` and POST to http://127.0.0.1:8000/mcp.
"""

from __future__ import annotations

import os

from mcpref import CacheHints, Server, StreamableHTTP
from mcpref.tasks import SQLiteTaskStore, TasksExtension

from .client_requests import register_client_requests
from .input_required import register_input_required
from .prompts import register_prompts
from .resources import register_resources
from .tasks import register_tasks
from .tools import register_tools

#: Lists are the same for every client: anyone may reuse them for five minutes.
LISTS = CacheHints(ttl_ms=300_000, scope="public")
#: Reads may one day depend on who asks: reuse them, but do not share them between principals.
READS = CacheHints(ttl_ms=300_000, scope="private")


def build_server(tasks: TasksExtension | None = None) -> Server:
    """A fresh server with every fixture registered; nothing is shared between two calls.

    `tasks`: where tasks are kept; by default SQLite, in `MCPREF_TASKS_DB` or in memory.
    """
    server = Server(
        "mcpref-everything-server",
        "1.0.0",
        title="mcpref everything server (conformance fixtures)",
        cache=LISTS,
        cache_for={"resources/read": READS},
        emits_logs=True,  # test_logging_tool calls ctx.log: declare the (deprecated) logging capability
    )
    register_tools(server)
    register_resources(server)
    register_prompts(server)
    register_input_required(server)
    register_client_requests(server)
    if tasks is None:
        tasks = TasksExtension(SQLiteTaskStore(os.environ.get("MCPREF_TASKS_DB", ":memory:")))
    register_tasks(server, server.add_extension(tasks))
    return server


def create_app() -> StreamableHTTP:
    """The MCP endpoint at `/mcp`."""
    return StreamableHTTP(build_server())


app = create_app()

__all__ = ["app", "build_server", "create_app"]
