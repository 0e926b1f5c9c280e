"""Transports carry JSON-RPC messages to one `Server`: Streamable HTTP here, stdio to come."""
