"""Runnable example servers built on the mcpref core; importable from the repository root."""
