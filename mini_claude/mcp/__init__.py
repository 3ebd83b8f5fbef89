"""The MCP client stack, written on the wire format (JSON-RPC 2.0), no MCP SDK.

Layers, lowest first: transports (bytes <-> JSON messages), jsonrpc (ids, pending futures, dispatch),
client (one server's MCP lifecycle), manager (many servers). A lower layer never imports a higher one.
Beside the client, `server/` is a small MCP server of our own for tools living in this process (`"type": "sdk"`
servers), reached through `transports/inprocess.py` like any other server.
"""
