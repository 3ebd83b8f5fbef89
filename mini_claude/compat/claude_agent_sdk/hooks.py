"""The SDK's hook names: the Python API's (api/hooks.py), with `HookJSONOutput` as what a callback returns."""

from __future__ import annotations

from typing import Any

from mini_claude.api.hooks import HookCallback, HookContext, HookMatcher

__all__ = ["HookCallback", "HookContext", "HookInput", "HookJSONOutput", "HookMatcher"]

HookJSONOutput = dict[str, Any]
HookInput = dict[str, Any]
