"""The client the official conformance suite drives, built on `mcpref.client.Client`.

```sh
conformance client --command "python -m examples.conformance_client" --requirements 2026-07-28
```

For each scenario the suite starts a mock server and runs the command with the server's URL
as the last argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`; scenarios with data
pass it as JSON in `MCP_CONFORMANCE_CONTEXT`. The suite judges what reaches its mock server,
so each handler below only does what an application would do with the client: list, call,
read, answer input requests. Header mirroring, `_meta`, version retries, MRTR and dropping
badly annotated tools are the client's own work, not this module's.

The client runs in `auto` mode, as an application would: it probes with `server/discover`
and falls back to `initialize` when the mock server is a 2025-11-25 one.

The suite does not record the client's exit status when it runs a whole requirement set, so
the entry prints `DONE` as its last line once a scenario has run to the end; the pytest side
(tests/conformance/results.py) reads it from each scenario's `stdout.txt`. The scenarios live in
`scenarios.py`; this package imports nothing, so that the scenarios this client cannot take
part in (`cannot`) cost a bare interpreter start and no more.
"""

#: The last line of stdout when a scenario ran to its end.
DONE = "mcpref conformance client: done"

#: Scenarios the client cannot take part in, by name or by prefix ending in "/", and why.
CANNOT = {
    "auth/": "mcpref.client does not do OAuth yet",
    # Tried: the mock then waits 60 s for an answer that never comes, so the entry does not try.
    "elicitation-sep1034-client-defaults": (
        "a 2025-11-25 server asks for elicitation with a request of its own on the response stream; "
        "mcpref.client answers input requests only as 2026-07-28 does, through MRTR"
    ),
}


def cannot(name: str) -> str | None:
    """Why the client cannot take part in scenario `name`, or None if it can."""
    for key, reason in CANNOT.items():
        if name == key or (key.endswith("/") and name.startswith(key)):
            return reason
    return None
