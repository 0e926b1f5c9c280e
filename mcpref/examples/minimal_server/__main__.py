"""`python -m mcpref.examples.minimal_server [--stdio] [--port N]`."""

from mcpref.run import main

from . import app, server

main(server, app)
