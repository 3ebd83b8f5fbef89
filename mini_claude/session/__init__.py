"""One agent session, assembled for any front end: settings and trust, the model client, the permission gate, the
tools, the MCP host and its servers, hooks, sub-agents and commands.

    parts.py        SessionOptions (what a front end asks for), SessionParts (what it gets back), SessionUI
    start.py        start_session: options → trust → config → approvals → servers starting → the agent half
    mcp_half.py     the host, server manager and skill registry
    agent_half.py   the model client, gate, tools, hooks, sub-agents (imported while the servers start)
    preload.py      importing the agent half in a thread while the event loop boots the servers
    state_sweep.py  the daily clean-up of the state folder

The CLI (mini_claude/cli) and the Python API (mini_claude/api) are the front ends above it; this layer never
imports them. Nothing is imported here: `-p` loads only what its start needs, when it needs it.
"""
