"""MCP Apps, the host half (extension `io.modelcontextprotocol/ui`, SEP-1865): a tool's `ui://` view served from a
loopback web server into a sandboxed browser frame, and the view's JSON-RPC bridged to the session.

Layout (one concern per file): `channel.py` the contract between the web side and the session side and the
extension's names; `meta.py` a `ui://` resource's `_meta.ui`; `csp.py` the Content-Security-Policy and permission
policy a view gets; `loopback.py` the web server (SSE + POST relay; knows nothing of MCP), with `http1.py` its
little HTTP and `pages.py` its two documents; `launcher.py` whether and how a browser opens; `views.py` / `bridge.py` / `service.py` one view's state, the host's answers to a
view, and the wiring to the MCP manager and the agent.
"""
