"""What the hooks of one event decided, as plain data for the agent loop (`mini_claude.agent.hook_points`) and the
permission gate (`HookPermission`). No behaviour: the engine (engine.py) fills them in, the callers read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["AfterTool", "BeforeTool", "HookPermission", "PromptVerdict", "StopVerdict"]


@dataclass(frozen=True)
class HookPermission:
    """A PreToolUse hook's decision on one call, weighed by `PermissionGate.check(..., hook=)`: `deny` refuses (the
    model reads `reason`), `allow` counts as an allow rule for this one call, `ask` asks the user (refused where
    nobody can be asked). `updated_input`: the input the hook decided on (its `updatedInput`); an `allow` holds
    only for a call checked with exactly that input, so a caller that does not run it cannot run the original
    under the hook's allow."""

    decision: Literal["allow", "deny", "ask"]
    reason: str
    updated_input: dict[str, Any] | None = None


@dataclass(frozen=True)
class BeforeTool:
    """PreToolUse: the permission decision (None: the hooks said nothing), text for the model beside the results
    (`additionalContext`), `stop` — a hook's `"continue": false` (its `stopReason`, maybe empty): the run ends
    once this turn's results are in — and `updated_input`: the input to check and run instead of the model's (a
    hook's `updatedInput`; never with a deny)."""

    permission: HookPermission | None = None
    context: str = ""
    stop: str | None = None
    updated_input: dict[str, Any] | None = None


@dataclass(frozen=True)
class AfterTool:
    """PostToolUse: text for the model beside the results (exit-2 stderr, a `block` reason, `additionalContext`),
    and `stop` as in `BeforeTool`."""

    context: str = ""
    stop: str | None = None


@dataclass(frozen=True)
class PromptVerdict:
    """UserPromptSubmit: `blocked` is the text shown instead of an answer (nothing reaches the model); else
    `context` joins the prompt (with any SessionStart context still waiting)."""

    blocked: str | None = None
    context: str = ""


@dataclass(frozen=True)
class StopVerdict:
    """Stop / SubagentStop: `block` is why the model must go on (sent to it as the next user text); None lets it
    stop."""

    block: str | None = None
