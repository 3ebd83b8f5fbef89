"""The SDK's error names. `ClaudeSDKError` is our root error and `CLIConnectionError` the error of a session that
cannot be used (not connected, disconnected, options refused), so `except` clauses written for the SDK catch what
mini-claude raises. The others name failures of the SDK's subprocess, which does not exist here: they are never
raised, and are defined so the programs that catch them still import."""

from __future__ import annotations

from mini_claude.errors import ConfigError, MiniClaudeError

__all__ = ["CLIConnectionError", "CLIJSONDecodeError", "CLINotFoundError", "ClaudeSDKError", "MessageParseError",
           "ProcessError"]

ClaudeSDKError = MiniClaudeError
CLIConnectionError = ConfigError


class CLINotFoundError(CLIConnectionError):
    """Never raised: there is no CLI to find."""


class ProcessError(MiniClaudeError):
    """Never raised: there is no subprocess."""


class CLIJSONDecodeError(MiniClaudeError):
    """Never raised: no JSON is read from a subprocess."""


class MessageParseError(MiniClaudeError):
    """Never raised: messages are built in this process, not parsed."""
