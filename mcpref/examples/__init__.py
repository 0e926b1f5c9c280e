"""Runnable examples built on the mcpref core: servers, a multi-server host (`host`), a conformance
client and a local OAuth authorization server. They are installed with the package, so what the
pages run runs from `pip install` alone (the authorization server and the demo built on it need the
`demo` extra, Starlette). The docs site app that puts them on one origin is not one of them: it is
`docsite.py`."""
