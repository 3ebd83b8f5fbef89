"""The MCP client stack, written on the wire format (JSON-RPC 2.0), no MCP SDK.

Layers, lowest first: transports (bytes <-> JSON messages), jsonrpc (ids, pending futures, dispatch),
client (one server's MCP lifecycle), manager (many servers). A lower layer never imports a higher one.
"""
