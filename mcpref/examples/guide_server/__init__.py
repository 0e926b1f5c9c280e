"""The server the "Build a server with mcpref" guide builds, step by step.

Each step imports the one before it and adds to the same `Server`, so every
file runs on its own and shows exactly what that step added:
`python -m mcpref.examples.guide_server.step3_resources` serves steps 1 to
3 over HTTP, `--stdio` over stdin/stdout. `step7_cache_and_pages` is the
whole server.
"""
