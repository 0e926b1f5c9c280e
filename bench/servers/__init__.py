"""The servers the benchmark starts, one module each so a cold start imports only its own stack.

Every one serves the same `echo` tool on POST /mcp and is run the same way: one uvicorn worker,
uvloop and httptools, no access log (see `bench.procs`).
"""
