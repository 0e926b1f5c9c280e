"""The docs harness: every fenced block on every page under docs/ runs, or is visibly marked.

- `messages`: reading ```http blocks (and SSE bodies) into requests and responses.
- `placeholders`: the one convention for volatile values, `<<kind>>`, each kind checked.
- `compare`: structural comparison of a page's frame with what the server sent, and its report.
- `schema`: every JSON-RPC message checked against the official 2026-07-28 schema.
- `pages`: the sybil parser that turns a page into examples, and their evaluators.
- `update`: `--update-frames`, rewriting response blocks from the real server.
"""
