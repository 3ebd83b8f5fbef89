"""`claude_agent_sdk.types`: the same names as the package (programs import them from either)."""

from __future__ import annotations

from typing import Any

from mini_claude.compat import claude_agent_sdk as _package
from mini_claude.compat.claude_agent_sdk.hooks import HookInput, HookJSONOutput

__all__ = ["HookInput", "HookJSONOutput"]


def __getattr__(name: str) -> Any:
    return getattr(_package, name)
