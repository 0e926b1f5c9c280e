"""Runnable examples built on the mcpref core: servers, a multi-server host (`host`), a conformance
client and a local OAuth authorization server. They are installed with the package, so what the
pages run runs from `pip install` alone (the authorization server and the demo built on it need the
`demo` extra, Starlette). `mcpref.demo` puts them on one origin (`mcpref demo`); the docs site
app, `docsite.py`, adds the built pages on top."""
