"""The question to the user and what its answer decides: the `ask` callback called one question at a time (a lock,
so two concurrent calls never prompt at once), the refusal that names what would allow a call where nobody can be
asked, "yes" / "always" / "no: …" and a `PermissionAnswer` (answers.py: another input, rules to remember, a
refusal that interrupts), and ExitPlanMode's question, the only way out of plan mode. `Asking` is a base of
`PermissionGate` (gate.py), whose module docstring gives the order these answers take their place in; the gate's
`__init__` sets every attribute declared below.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from mini_claude.errors import ConfigError
from mini_claude.permissions.answers import (
    Answer,
    AskContext,
    AskFn,
    Decision,
    PermissionAnswer,
    takes_context,
)
from mini_claude.permissions.consent import _EDIT_TOOLS, ConsentChecks, _allowed_by, _call_of
from mini_claude.permissions.modes import PermissionMode
from mini_claude.permissions.rules import Rule, ToolCall
from mini_claude.sandbox.runtime import Sandbox
from mini_claude.settings import PROJECT_SETTINGS_DISPLAY, USER_SETTINGS_DISPLAY
from mini_claude.tools.base import Tool, input_is_ours
from mini_claude.tools.exit_plan_mode import NOT_IN_PLAN_MODE_TEXT
from mini_claude.tools.input_check import input_problem

__all__ = ["PLAN_ACCEPT_EDITS", "Asking"]

PLAN_ACCEPT_EDITS = "yes-accept-edits"  # ExitPlanMode's other yes: leave plan mode for acceptEdits

_NOT_APPROVED = "plan mode stays on: keep planning, and call ExitPlanMode again with the revised plan"


class Asking(ConsentChecks):
    """Asks the user about a call and turns the answer into a `Decision` (see the module docstring)."""

    ask: AskFn | None
    sandbox: Sandbox | None
    _ask_lock: asyncio.Lock

    def _refusal(self, tool: Tool, args: dict[str, Any], call: ToolCall) -> Decision | None:
        raise NotImplementedError  # PermissionGate's: steps 0 and 1, which an answer's updated input passes too

    def allow_for_session(self, rules: list[str]) -> None:
        """Add allow rules for the rest of this session (raises ConfigError on a malformed rule)."""
        self.rules = self.rules.with_allow(rules, source="session")

    async def _ask_user(self, tool: Tool, args: dict[str, Any], call: ToolCall, *, ask_rule: Rule | None,
                        hook_asks: str | None = None, leaving_sandbox: bool = False,
                        tool_use_id: str | None = None, view: str | None = None) -> Decision:
        if self.ask is None and leaving_sandbox:
            return self._deny(tool, "running a command outside the OS sandbox (dangerouslyDisableSandbox) needs the "
                                    "user's approval, which is not possible in non-interactive mode")
        if self.ask is None:
            if hook_asks is not None:
                return self._deny(tool, f"{hook_asks} (a PreToolUse hook asks the user first, which is not possible "
                                        "in non-interactive mode)")
            if ask_rule is not None:
                return self._deny(tool, f"rule {ask_rule.describe()} requires asking first, which is not possible "
                                        "in non-interactive mode; allow with --yolo")
            rules = ", ".join(f'"{r}"' for r in self.suggested_rules(tool, args))
            boundaries = self._boundaries(call)
            if boundaries:
                verb = "writing" if call.claude_name in _EDIT_TOOLS or call.claude_name == "Bash" else "reading"
                why = "; ".join(f"{b.path} {b.why()}" for b in boundaries)
                return self._deny(tool, f"{why}, so {verb} it needs the user's approval, which is not possible in "
                                        f"non-interactive mode; allow with --yolo or add {rules} to "
                                        f"permissions.allow in {USER_SETTINGS_DISPLAY}")
            return self._deny(tool, f"not allowed in non-interactive mode; allow with --yolo or add {rules} to "
                                    f"permissions.allow in {PROJECT_SETTINGS_DISPLAY}")
        async with self._ask_lock:
            if ask_rule is None and hook_asks is None and not leaving_sandbox:
                # An "always" given while this call waited for the prompt may already cover it.
                allowed = self._allowing_rules(call, self._env())
                if allowed:
                    return Decision(True, _allowed_by(allowed))
            def context() -> AskContext:
                why = (f"rule {ask_rule.describe()} requires asking first" if ask_rule is not None else hook_asks
                       or ("the command asks to run outside the OS sandbox" if leaving_sandbox else "")
                       or "; ".join(self.why_asking(tool, args)))
                boundaries = self._boundaries(call)
                return AskContext(() if leaving_sandbox else tuple(self.always_rules(tool, args)), why,
                                  boundaries[0].path if boundaries else None, tool_use_id, view)

            answer = await self._question(tool, args, context)
            if not isinstance(answer, str):
                return self._answered(tool, answer, remembering=not leaving_sandbox)
            if answer == "always" and leaving_sandbox:
                answer = "yes"  # leaving the sandbox is asked every time: nothing is remembered
            if answer == "always":
                remembered = self.always_rules(tool, args)
                if not remembered:  # a host or a multi-line command no rule can name: a yes for this call
                    what = "host" if call.host is not None else "command"
                    return Decision(True, f"allowed by the user (no rule can name this {what}: nothing is remembered)")
                self.allow_for_session(remembered)
                listed = ", ".join(f'"{r}"' for r in remembered)
                return Decision(True, f"allowed by the user; {listed} allowed for the rest of this session")
            if answer == "yes":
                return Decision(True, "allowed by the user")
        _, _, instead = answer.partition(":")
        if instead.strip():  # "no: use the test runner instead"
            return self._deny(tool, f"the user declined this tool call and said: {instead.strip()}")
        return self._deny(tool, "the user declined this tool call")

    async def _question(self, tool: Tool, args: dict[str, Any], context: Callable[[], AskContext]
                        ) -> Answer | object:
        """The `ask` callback's answer (`context()` passed only to a callback that takes it)."""
        ask: Any = self.ask
        answer: object = await (ask(tool, args, context()) if takes_context(ask) else ask(tool, args))
        return answer

    def _answered(self, tool: Tool, answer: object, *, remembering: bool) -> Decision:
        """What a `PermissionAnswer` decides (see the module docstring); anything else is a refusal."""
        if not isinstance(answer, PermissionAnswer):
            return self._deny(tool, f"the permission callback gave no answer (got {type(answer).__name__}, expected "
                                    "a string or a PermissionAnswer)")
        if not answer.allow:
            message = answer.message.strip() if isinstance(answer.message, str) else ""
            no = Decision(False, message) if message else self._deny(tool, "the user declined this tool call")
            return replace(no, interrupt=answer.interrupt is True)
        updated = answer.updated_input
        if updated is not None:
            if not isinstance(updated, dict):  # typed as a dict, but a user's callback may send anything
                return self._deny(tool, f"the answer's updated input is a {type(updated).__name__}, not an object")  # type: ignore[unreachable]
            problem = input_problem(tool.input_schema, updated) if input_is_ours(tool) else None
            call = _call_of(tool, updated)
            sandboxed = self.sandbox if call.claude_name == "Bash" and not call.is_mcp else None
            why = sandboxed.refusal(updated) if sandboxed is not None else None
            refused = (self._deny(tool, f"invalid updated input: {problem}") if problem
                       else self._deny(tool, why) if why else self._refusal(tool, updated, call))
            if refused is not None:
                return refused
        rules = [answer.remember] if isinstance(answer.remember, str) else list(answer.remember)
        note = ""
        if rules and not remembering:
            note = " (leaving the OS sandbox is asked every time: nothing is remembered)"
        elif rules:
            try:
                self.allow_for_session(rules)
            except ConfigError as exc:
                note = f"; nothing is remembered: {exc}"
            else:
                note = "; " + ", ".join(f'"{r}"' for r in rules) + " allowed for the rest of this session"
        return Decision(True, "allowed by the user" + note, updated_input=updated)

    async def _leave_plan_mode(self, tool: Tool, args: dict[str, Any], tool_use_id: str | None) -> Decision:
        """ExitPlanMode: the user's answer to the plan is the only way out of plan mode (see the module docstring)."""
        if not self._planning():
            return self._deny(tool, NOT_IN_PLAN_MODE_TEXT)
        if self.ask is None:
            return self._deny(tool, "leaving plan mode needs the user's approval of the plan, which is not possible in "
                                    "non-interactive mode; plan mode stays on: give the plan as your answer instead")
        async with self._ask_lock:
            if not self._planning():  # a plan approved (or the mode changed) while this call waited
                return self._deny(tool, NOT_IN_PLAN_MODE_TEXT)
            answer = await self._question(tool, args, lambda: AskContext(
                reason="leaving plan mode needs the user's approval of the plan", tool_use_id=tool_use_id))
            if not self._planning():  # the user changed the mode meanwhile: that mode stands
                return self._deny(tool, NOT_IN_PLAN_MODE_TEXT)
            if isinstance(answer, PermissionAnswer) and answer.allow:
                answer = "yes"  # a typed yes to the plan: to default mode (its input and rules mean nothing here)
            if answer in ("yes", "always", PLAN_ACCEPT_EDITS):
                # "always" from a question that does not know this tool: a yes for this plan, no rule saved
                self.mode = PermissionMode.ACCEPT_EDITS if answer == PLAN_ACCEPT_EDITS else PermissionMode.DEFAULT
                return Decision(True, f"plan approved by the user; permission mode: {self.mode.value}")
        if not isinstance(answer, str | PermissionAnswer):
            return self._answered(tool, answer, remembering=False)
        instead = answer.message if isinstance(answer, PermissionAnswer) else answer.partition(":")[2]
        no = isinstance(answer, PermissionAnswer) or answer.startswith("no")
        said = f" and said: {instead.strip()}" if no and isinstance(instead, str) and instead.strip() else ""
        return Decision(False, f"permission denied for {tool.name}: the user did not approve the plan{said}; "
                        f"{_NOT_APPROVED}", interrupt=isinstance(answer, PermissionAnswer) and answer.interrupt is True)

    def _planning(self) -> bool:
        return self.mode is PermissionMode.PLAN  # read anew after each await: the mode may change meanwhile

    @staticmethod
    def _deny(tool: Tool, why: str) -> Decision:
        return Decision(False, f"permission denied for {tool.name}: {why}")
