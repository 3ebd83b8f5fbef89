"""mini-claude: a terminal coding agent with a first-class MCP client.

Nothing happens at import time; the CLI lives in `mini_claude.cli.main`.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
