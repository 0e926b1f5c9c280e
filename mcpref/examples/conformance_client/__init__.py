"""The client the official conformance suite drives, built on `mcpref.client.Client`.

```sh
conformance client --command "sh mcpref/examples/conformance_client/run" --requirements 2026-07-28
```

For each scenario the suite starts a mock server and runs the command with the server's URL
as the last argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`; scenarios with data
pass it as JSON in `MCP_CONFORMANCE_CONTEXT`. `run` (a shell script) turns away the scenarios
this client cannot take part in, with the reason; the others go to
`python -m mcpref.examples.conformance_client <url>`, which runs the scenario's handler in
`scenarios.py`.

The suite judges what reaches its mock server, so each handler only does what an application
would do with the client: list, call, read, answer input requests. Header mirroring, `_meta`,
version retries, MRTR and dropping badly annotated tools are the client's own work. The client
runs in `auto` mode, as an application would: it probes with `server/discover` and falls back
to `initialize` when the mock server is a 2025-11-25 one.

The suite does not record the client's exit status when it runs a whole requirement set, so
the entry prints `DONE` as its last line once a scenario has run to its end; the pytest side
(tests/conformance/results.py) reads it from each scenario's `stdout.txt`.
"""

#: The last line of stdout when a scenario ran to its end.
DONE = "mcpref conformance client: done"
