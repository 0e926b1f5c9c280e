"""Transports carry JSON-RPC messages to one `Server`: Streamable HTTP (`http`, its SSE framing in
`sse`) and stdio (`stdio`). Each owns its wire; the dispatcher owns the protocol."""
