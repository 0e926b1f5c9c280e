"""`python -m mcpref`: the `mcpref` command (`mcpref.cli`)."""

from .cli import main

main()
