"""`python -m mcpref.examples.robustness_server`: the robustness server through `mcpref.run`, with the
HTTP server's bounds (`scripts/load --hostile` runs it this way)."""

from mcpref.run import main

from . import app, server

main(server, app)
