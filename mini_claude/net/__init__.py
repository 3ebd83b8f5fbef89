"""Networking leaves shared by the MCP transports and OAuth: URL helpers, the process-wide TLS context, the strict
request-head reader of the loopback servers we run (`http_head`), and the
one place that turns an httpx exception into our error. Imports nothing of mini-claude above `errors`."""
