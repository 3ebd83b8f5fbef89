"""The terminal side of MCP: the `mini-claude mcp …` subcommands (command.py, with show.py, resources.py,
login.py, doctor.py, over world.py: the servers a session here would have) and the REPL's `/mcp` panel (panel.py).
The MCP host itself is `mini_claude.mcp`. Nothing is imported here: `-p` loads only what it uses."""
