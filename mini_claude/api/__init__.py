"""mini-claude as a Python library: the agent and its MCP host in-process, with the Claude Agent SDK's names."""
