"""Other libraries' public names over mini-claude's Python API, so a program written for them moves over by changing
one import line: `claude_agent_sdk` (the Claude Agent SDK). Nothing here has behaviour of its own."""
