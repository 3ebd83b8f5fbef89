"""One turn's tool calls, from the model's tool_use blocks to the tool_results: admitting each call (its tool
found, its input checked, PreToolUse hooks, the permission gate), running consecutive read-only calls together
and every other call alone, PostToolUse hooks, and the one user message that answers every call — whatever
happened to it. `ToolCalls` is the base `Agent` (agent/loop.py) runs them through; it owns no state of its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

from mini_claude.agent.calls import (
    Call,
    Verdict,
    batches,
    masked,
    tool_name,
    tool_result_block,
    unknown_text,
    wrong_input,
)
from mini_claude.agent.checkpoints import Checkpoints
from mini_claude.agent.hook_points import HookPoints
from mini_claude.agent.ui import AgentUI
from mini_claude.hooks.outcomes import BeforeTool, HookPermission
from mini_claude.secrets import mask
from mini_claude.tools.base import Tool, ToolContext, ToolResult, own_server

__all__ = ["CANCEL_GRACE_S", "INTERRUPTED_TEXT", "STOPPED_TEXT", "Gate", "ToolCalls"]

log = logging.getLogger(__name__)

INTERRUPTED_TEXT = "The user interrupted this tool call before it finished."
CANCEL_GRACE_S = 10.0
STOPPED_TEXT = "Not run: the user refused another call of this turn and stopped the run."


class Gate(Protocol):
    """The permission gate as the loop sees it (mini_claude.permissions.gate.PermissionGate fits)."""

    async def check(self, tool: Tool, args: dict[str, Any], *, hook: HookPermission | None = None,
                    tool_use_id: str | None = None, view: str | None = None) -> Verdict:
        ...  # `hook`: a PreToolUse hook's decision; `tool_use_id`: the call's and `view`: the MCP server whose
        # Apps view makes the call (None: the model), both for the permission question


class ToolCalls:
    """Runs one turn's calls for `Agent`, which sets every attribute below (its `__init__`) and keeps the history
    (`_append_user`)."""

    gate: Gate
    ctx: ToolContext
    ui: AgentUI
    hooks: HookPoints | None
    _result_cap: Callable[[ToolResult, ToolContext, str], ToolResult] | None
    _explain_unknown: Callable[[str], str | None] | None
    _resolve_unknown: Callable[[str], Tool | None] | None
    _hook_stop: str | None
    _interrupted: bool
    _results_last: bool
    _denials: list[dict[str, Any]]
    checkpoints: Checkpoints | None = None  # the session's (session/resume.py): files saved before a write tool

    def _append_user(self, blocks: list[dict[str, Any]]) -> None:
        raise NotImplementedError  # Agent's: the history's bookkeeping

    async def _run_tool_calls(self, calls: list[Call]) -> None:
        try:
            for batch in batches(calls):
                if self._interrupted:  # a refusal stopped the run: nothing more of this turn runs
                    break
                await self._run_batch(batch)
        finally:
            # runs on success, error and cancellation alike: every tool_use gets its tool_result
            blocks, asides = [], []
            for call in calls:
                # a refusal's reason (a hook's, say) is masked too; a result that ran was masked as it came
                result = masked(call.result or ToolResult.error(STOPPED_TEXT if self._interrupted
                                                                else INTERRUPTED_TEXT))
                blocks.append(tool_result_block(call.block.get("id", ""), result))
                for aside in (result.aside, call.notes):
                    if aside:  # hooks' notes may quote what the user's hooks see (secret-looking variables too)
                        asides.append({"type": "text", "text": mask(aside)})
            self._append_user([*blocks, *asides])  # text after every result: the API wants results first
            self._results_last = True

    async def _run_batch(self, batch: list[Call]) -> None:
        runnable: list[Call] = []
        for call in batch:  # permission prompts one at a time, before anything in the batch runs
            if self._interrupted:
                break
            if await self._admit(call):
                runnable.append(call)
        if self._interrupted:  # admitted before the refusal that stopped the run: not run either
            for call in runnable:
                call.result = ToolResult.error(STOPPED_TEXT)
                self._show_rejected(tool_name(call.block), call.args, call.result)
            return
        if not runnable:
            return
        if len(runnable) == 1:
            await self._run_one(runnable[0])
            return
        tasks = [asyncio.ensure_future(self._run_one(c)) for c in runnable]
        try:
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks, timeout=CANCEL_GRACE_S)
            raise

    async def _admit(self, call: Call) -> bool:
        name = tool_name(call.block)
        args = call.block.get("input")
        if call.result is not None:  # settled before it could run (cut at the output limit)
            self._show_rejected(name, args, call.result)
            return False
        if call.tool is None:
            call.result = ToolResult.error(unknown_text(name, self._explain_unknown))
            self._show_rejected(name, args, call.result)
            return False
        if not isinstance(args, dict):
            call.result = ToolResult.error(f"tool input must be a JSON object, got {type(args).__name__}")
            self._show_rejected(name, args, call.result)
            return False
        problem = wrong_input(call.tool, args, name)
        if problem:  # one reading of every input: what the gate would check is exactly what the tool would run
            call.result = ToolResult.error(problem)
            self._show_rejected(name, args, call.result)
            return False
        before = await self._before_tool(call, name, args)
        permission = before.permission if before is not None else None
        if before is not None and before.updated_input is not None:  # a hook's changed input, checked as the model's
            problem = wrong_input(call.tool, before.updated_input, f"{name} (a PreToolUse hook's updatedInput)")
            if problem:
                call.result = ToolResult.error(problem)
                self._show_rejected(name, args, call.result)
                return False
            args = before.updated_input
        decision = await self.gate.check(call.tool, args, hook=permission, tool_use_id=call.block.get("id"))
        if not decision.allowed:
            call.result = ToolResult.error(decision.reason)
            self._denials.append({"tool_name": name, "tool_use_id": call.block.get("id"), "tool_input": args})
            self._interrupted = self._interrupted or decision.interrupt
            self.ui.tool_started(name, args)
            self.ui.tool_finished(name, call.result)
            return False
        call.args = decision.updated_input if decision.updated_input is not None else args
        return True

    def _find_tool(self, offered: dict[str, Tool], name: str) -> Tool | None:
        tool = offered.get(name)
        if tool is None and self._resolve_unknown is not None:
            tool = self._resolve_unknown(name)
        return tool

    def _show_rejected(self, name: str, args: Any, result: ToolResult) -> None:
        """Show a call that never reached its tool (unknown name, bad input), so the user sees what the model
        tried and why it failed, as for any other tool error."""
        self.ui.tool_started(name, args if isinstance(args, dict) else {"input": args})
        self.ui.tool_finished(name, result)

    async def _run_one(self, call: Call) -> None:
        assert call.tool is not None
        name, args = call.tool.name, call.args if call.args is not None else call.block["input"]
        self.ui.tool_started(name, args)
        if self.checkpoints is not None and not call.tool.read_only:  # what /rewind puts back
            self.checkpoints.before_tool(name, args, self.ctx)
        try:
            result = await call.tool.run(args, self.ctx)
        except asyncio.CancelledError:
            call.result = ToolResult.error(INTERRUPTED_TEXT)
            self.ui.tool_finished(name, call.result)
            raise
        except Exception as exc:  # a tool bug or failure becomes an is_error result the model can read
            log.debug("tool %s raised", name, exc_info=True)
            result = ToolResult.error(f"{name} failed: {exc}" if str(exc) else f"{name} failed: {exc!r}")
        result = masked(result)  # before anything sees it, the cap's spilled file included
        if self._result_cap is not None:
            result = self._result_cap(result, self.ctx, name)
        call.result = result
        self.ui.tool_finished(name, result)
        if self.hooks is not None and not result.is_error:
            after = await self.hooks.post_tool_use(name, args, call.block.get("id", ""), result.content,
                                                   result.as_text(), server=own_server(call.tool, args))
            call.notes = "\n".join(n for n in (call.notes, after.context) if n)
            self._hook_stop = after.stop if after.stop is not None else self._hook_stop

    async def _before_tool(self, call: Call, name: str, args: dict[str, Any]) -> BeforeTool | None:
        """PreToolUse: the hooks' permission decision and changed input for the gate; their notes kept for beside
        the results."""
        if self.hooks is None:
            return None
        before = await self.hooks.pre_tool_use(name, args, call.block.get("id", ""), server=own_server(call.tool, args))
        call.notes = before.context
        self._hook_stop = before.stop if before.stop is not None else self._hook_stop
        return before

