"""The docs harness: every fenced block on every page under docs/ runs, or is visibly marked.

- `messages`: reading ```http blocks (and SSE bodies) into requests and responses.
- `placeholders`: the one convention for volatile values, `<<kind>>`, each kind checked.
- `variance`: each placeholder proved to stand for a value that varies (the frame sent twice).
- `compare`: structural comparison of a page's frame with what the server sent, and its report.
- `schema`: every JSON-RPC message checked against the official 2026-07-28 schema.
- `exchange`, `shared`: sending a page's requests to fresh or shared apps, open streams included.
- `rendered`: code a reader sees on the rendered page must be one of its fenced blocks.
- `pages`: the sybil parser that turns a page into examples, and their evaluators.
- `update`: `--update-frames`, rewriting response blocks from the real server.
- `recorder`: `./scripts/record`, real traffic written as frames.
"""
