"""Claude Code's hooks: the user's own commands run at points of the agent's work (before and after a tool call, on
each prompt, when the model stops, at session start and end, before a compaction, on a notification).

    settings.py      parses the `hooks` section of each settings file (`SettingsHook`: event, matcher, command,
                     timeout, file and key); a repository's hooks count only once its folder is trusted
    matching.py      a group's `matcher`, read as Claude Code reads it
    runner.py        one command: `/bin/sh -c`, JSON on stdin, its own process group, bounded output and waits
    callables.py     a hook that is a Python callable (registered by code, never by settings): the same input as a
                     command's stdin, a dict read as a command's JSON, bounded by its timeout
    replies.py       what one run said: exit code 0 / 2 / other, JSON output
    claude_form.py   tool calls in Claude Code's names and input keys (what a user's hook script reads)
    engine.py        `Hooks`: the session's hooks fired by event, in parallel, folded into outcomes
    outcomes.py      the plain data the agent loop and the permission gate act on

The agent loop calls hooks through `mini_claude.agent.hook_points.HookPoints` (which `Hooks` fits); the permission
gate weighs a PreToolUse decision through `PermissionGate.check(..., hook=HookPermission)`; the CLI fires
SessionStart, SessionEnd and Notification, and `/hooks` lists `Hooks.hooks`.
"""

from mini_claude.hooks.callables import CallableHook, HookCallback, HookContext
from mini_claude.hooks.engine import DEFAULT_TIMEOUT_S, Hooks, HookSession
from mini_claude.hooks.matching import matcher_matches
from mini_claude.hooks.outcomes import AfterTool, BeforeTool, HookPermission, PromptVerdict, StopVerdict

__all__ = ["DEFAULT_TIMEOUT_S", "AfterTool", "BeforeTool", "CallableHook", "HookCallback", "HookContext",
           "HookPermission", "HookSession", "Hooks", "PromptVerdict", "StopVerdict", "matcher_matches"]
