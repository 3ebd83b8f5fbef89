"""The permission question's two sides as data: what the gate tells the one it asks (`AskContext`), what it may
answer besides the CLI's words (`PermissionAnswer`), and the gate's `Decision`.

The ask callback (`PermissionGate(ask=...)`) is `ask(tool, args)` or `ask(tool, args, context)` — the gate passes
an `AskContext` only to a callback whose signature takes a third argument, so every two-argument caller keeps
working. It returns either a word (the CLI's prompts: "yes", "always", "no", "no: what to do instead", and
ExitPlanMode's `PLAN_ACCEPT_EDITS`) or a `PermissionAnswer`, which says what the Claude Agent SDK's
`PermissionResultAllow` / `PermissionResultDeny` say: allow, perhaps with another input to run and rules to remember
for the session, or deny with the text the model reads, perhaps ending the run. Nothing here asks or decides:
the gate does (asking.py asks and reads the answer, gate.py decides).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mini_claude.tools.base import Tool

__all__ = ["Answer", "AskContext", "AskFn", "Decision", "PermissionAnswer", "takes_context"]


@dataclass(frozen=True)
class Decision:
    """The gate's answer. `reason` is one line; on a denial it is what the model reads. `updated_input`: the input
    to run instead of the one checked (the answer's, already valid for the tool); `interrupt`: a denial that ends
    the run once this turn's results are in."""

    allowed: bool
    reason: str
    updated_input: dict[str, Any] | None = None
    interrupt: bool = False


@dataclass(frozen=True)
class AskContext:
    """What the gate knows about a question it asks (the SDK's `ToolPermissionContext`): `suggestions` are the allow
    rules an "always" would remember (`PermissionGate.always_rules`; none where nothing can be remembered), `reason`
    why it asks (an ask rule, a PreToolUse hook's reason, a path that needs consent, leaving the OS sandbox; ""
    when simply no rule allows the call), `blocked_path` the first path that needs consent, `tool_use_id` the
    call's id when the caller named it, and `view` the MCP server whose Apps view makes the call (None: the
    model's call; no model reads the answer to a view's)."""

    suggestions: tuple[str, ...] = ()
    reason: str = ""
    blocked_path: str | None = None
    tool_use_id: str | None = None
    view: str | None = None


@dataclass(frozen=True)
class PermissionAnswer:
    """A typed answer to the question. Allow: `updated_input` (run instead of the model's input; checked against
    the tool's schema and the deny rules) and `remember` (allow rules in our rule syntax, added for the session;
    a malformed one is reported in the decision's reason and none is added). Deny: `message` is what the model
    reads (a standard refusal when empty) and `interrupt` ends the run after this turn's results."""

    allow: bool
    updated_input: dict[str, Any] | None = None
    remember: Sequence[str] = field(default_factory=tuple)
    message: str = ""
    interrupt: bool = False


Answer = str | PermissionAnswer
AskFn = Callable[[Tool, dict[str, Any]], Awaitable[Answer]] | Callable[[Tool, dict[str, Any], AskContext],
                                                                        Awaitable[Answer]]


def takes_context(ask: Callable[..., Any]) -> bool:
    """Does `ask` take a third argument (the `AskContext`)? A callable whose signature cannot be read gets two."""
    try:
        inspect.signature(ask).bind(None, None, None)
    except (TypeError, ValueError):
        return False
    return True
