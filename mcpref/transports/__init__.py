"""Transports carry JSON-RPC messages to one `Server`: Streamable HTTP (`http`) and stdio (`stdio`)."""
