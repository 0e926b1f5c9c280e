"""Runnable examples built on the mcpref core: servers, a multi-server host (`host`), a conformance
client and a local OAuth authorization server; importable from the repository root. The docs site
app that puts them on one origin is not one of them: it is `docsite.py`."""
