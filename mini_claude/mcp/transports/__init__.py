"""Transports move JSON-RPC messages (dicts) to and from a server; they know nothing of MCP methods."""

from mini_claude.mcp.transports.base import Transport

__all__ = ["Transport"]
