"""The benchmark: mcpref against a bare Starlette route and the official Python SDK, as real processes.

Run it with `./scripts/bench` (quick, a few minutes) or `./scripts/bench --full`. It prints
figures, never a verdict on the code: see bench/RESULTS.md for a recorded run and what the
profile says.
"""
