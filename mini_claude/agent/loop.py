"""The agent loop: user text → model → tool calls → tool results → … until the model stops.

Invariants the rest of the product relies on:

* Every `tool_use` the model emits gets exactly one `tool_result` in the next user message — when the tool ran,
  failed, raised, was denied, was unknown, or was interrupted. A history the API would reject cannot be built.
* A turn cut at the output limit (`max_tokens`) runs none of its tool calls: each gets an is_error result saying
  so (its input may be cut short), and the run ends with stop "max_tokens" as a cut answer does.
* Consecutive read-only tool calls of one turn run concurrently; any other call runs alone, in order.
* Interrupting (cancelling the task running `run`) cancels running tools, completes the history with
  "interrupted" results, and re-raises `CancelledError`; the next `run` continues on a valid history.
* The user's hooks (`hooks`: hook_points.py says where each fires) can block a prompt, refuse or allow a call
  through the gate, change its input, add text beside results, or send the model back to work when it stops.
* A call runs with the input the gate last checked: the model's, a PreToolUse hook's `updatedInput`, or the input
  the permission answer gave (each checked against the tool's schema first); the history keeps the model's.
* A refusal that interrupts (the permission answer's `interrupt`) runs nothing more of its turn: every other call
  still gets a result, and the run ends with stop "permission_interrupt" once the results are in.

This module owns the conversation: the model requests, how a run stops, the history. One turn's tool calls
(admitting, running and answering each) are `ToolCalls` in agent/tool_calls.py, the base `Agent` inherits them from.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from mini_claude.agent.calls import CUT_TEXT, Call, last_text, prompt_text, storable, tool_name
from mini_claude.agent.compaction import ContextWindow, is_prompt_too_long
from mini_claude.agent.hook_points import HookPoints
from mini_claude.agent.tool_calls import INTERRUPTED_TEXT, STOPPED_TEXT, Gate, ToolCalls
from mini_claude.agent.ui import AgentUI, Shown, SilentUI, retry_arguments, showing
from mini_claude.errors import ModelError
from mini_claude.models.base import AssistantTurn, Model, PlanAware, ToolSpec, Usage
from mini_claude.secrets import mask
from mini_claude.tools.base import Tool, ToolContext, ToolResult

__all__ = ["INTERRUPTED_TEXT", "STOPPED_TEXT", "Agent", "AgentUI", "Gate", "RunOutcome", "SilentUI"]

DEFAULT_MAX_TURNS = 50
# Prefixed to the next user text when the previous request ended without a final answer from the model.
INTERRUPTED_NOTE = "[The previous request was interrupted by the user.]"
MAX_TURNS_NOTE = "[The previous request stopped at the turn limit before you answered.]"
CUT_NOTE = "[Your previous reply stopped at the output token limit; its tool calls did not run.]"


class DeferredLoading(Protocol):
    """Tools the API loads where a tool result references them (`defer_loading`; tools/tool_search.py)."""

    def deferred_names(self) -> Collection[str]: ...

    def refused(self, error: ModelError) -> bool:
        """The API refused a request: True if it was over deferred loading, now given up (retry the request)."""
        ...


@runtime_checkable
class ModalGate(Protocol):
    """A gate with a permission mode (PermissionGate's `mode`; "plan" is plan mode)."""

    mode: str


@dataclass
class RunOutcome:
    """How one `run` ended: the final assistant text and why it stopped (`end_turn`, `max_turns`, ...)."""

    text: str
    stop: str
    turns: int
    usage: Usage = field(default_factory=Usage)
    # the calls the permission gate refused in this run (its sub-agents' too): {"tool_name", "tool_use_id",
    # "tool_input"}
    denials: list[dict[str, Any]] = field(default_factory=list)
    # what the sub-agents it started spent (`absorb`): their model requests, and their usage by the model that
    # served it (a type may name its own), beside this run's own
    subagent_turns: int = 0
    subagent_usage: list[tuple[Model, Usage]] = field(default_factory=list)


class Agent(ToolCalls):
    """Holds one conversation. `tools` is called before each model request, so tools can join mid-session
    (MCP servers finishing their startup)."""

    def __init__(
        self,
        *,
        model: Model,
        tools: Callable[[], Sequence[Tool]],
        gate: Gate,
        ctx: ToolContext,
        system: str | Callable[[], str],
        ui: AgentUI | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        result_cap: Callable[[ToolResult, ToolContext, str], ToolResult] | None = None,
        explain_unknown: Callable[[str], str | None] | None = None,
        before_request: Callable[[], Awaitable[None]] | None = None,
        context: ContextWindow | None = None,
        resolve_unknown: Callable[[str], Tool | None] | None = None,
        loading: DeferredLoading | None = None,
        hooks: HookPoints | None = None,
        subagent: bool = False,
        agent: tuple[str, str] = ("", ""),
        prelude: Callable[[list[dict[str, Any]]], Awaitable[list[dict[str, Any]]]] | None = None,
    ) -> None:
        self.model = model
        self._tools = tools
        self.gate = gate
        self.ctx = ctx
        self._system = system
        self.ui = ui or SilentUI()
        self.max_turns = max_turns
        self._result_cap = result_cap
        # why a tool name is not callable (e.g. McpManager.explain_unavailable: its server failed mid-session)
        self._explain_unknown = explain_unknown
        # awaited before each model request (McpManager.settle_lists: a tools/list_changed that came with a tool
        # result is applied before the model is asked again)
        self.before_request = before_request
        self.context = context or ContextWindow()
        # a tool the model named that was not offered but exists (a deferred MCP tool: tools/tool_search.py)
        self._resolve_unknown = resolve_unknown
        self._loading = loading
        self.hooks = hooks
        self._subagent = subagent  # its end fires SubagentStop instead of Stop
        self._agent = agent  # a sub-agent's (type, id), for its SubagentStop hooks
        if hooks is not None:
            self.context.before_compact = hooks.pre_compact
        # given the history, the blocks to put before a prompt's text: what opens a conversation (CLAUDE.md, the
        # git status; compaction puts them before its summary) or what changed in it (agent/opening.py)
        self._prelude = self.context.prelude = prelude
        self._hook_stop: str | None = None  # a hook's `"continue": false` in this run
        self._interrupted = False  # a refusal in this run said to stop (Decision.interrupt)
        self._compacted = False
        # called with the history after every change to it (SessionLog.sync saves the conversation as it goes)
        # (`rewritten`: not only the end changed — compaction)
        self.on_history: Callable[[list[dict[str, Any]], bool], None] | None = None
        # called with the history after `/clear` or a compaction (DeferredTools.forget: found tools are sent again
        # only once found again, or while the kept history still uses them)
        self.on_reset: Callable[[list[dict[str, Any]]], None] | None = None
        self.history: list[dict[str, Any]] = []
        self.usage = Usage()
        self._unanswered_note = INTERRUPTED_NOTE
        self._results_last = False  # the history ends with tool results the model has not answered yet
        self._denials: list[dict[str, Any]] = []
        self._spent = RunOutcome("", "", 0)  # what this run's sub-agents spent (`absorb`)

    # ---- public ------------------------------------------------------------------------------------------------

    def tools(self) -> Sequence[Tool]:
        """The tools the next model request would offer."""
        return self._tools()

    def absorb(self, child: RunOutcome, model: Model) -> None:
        """Count a sub-agent's run on `model` (started by a tool of this run) in this run's outcome and the
        session's usage."""
        self._spent.subagent_turns += child.turns + child.subagent_turns
        self._spent.subagent_usage += [(model, child.usage), *child.subagent_usage]
        self._denials.extend(child.denials)
        self.usage.add(child.usage)

    async def run(self, user: str | list[dict[str, Any]]) -> RunOutcome:
        """One user turn: text, or content blocks (a server prompt, attached resources) that start with text.

        If the turn fails with an error (the model API refused or could not be reached), the history is put back as
        it was before this prompt, so the next prompt does not carry this one; an interruption keeps what happened
        (see the module docstring)."""
        mark = len(self.history)
        tail = len(self.history[-1]["content"]) if self.history and self.history[-1]["role"] == "user" else None
        note, results_last = self._unanswered_note, self._results_last
        self._compacted = False
        self._hook_stop = None
        self._interrupted = False
        try:
            return await self._run(user)
        except Exception:
            if not self._compacted:  # a compacted history cannot be put back; it stays, valid, as it is
                del self.history[mark:]
                if tail is not None:
                    del self.history[-1]["content"][tail:]
                self._unanswered_note, self._results_last = note, results_last
                self._history_changed()
            raise

    async def _run(self, user: str | list[dict[str, Any]]) -> RunOutcome:
        blocks = [{"type": "text", "text": user}] if isinstance(user, str) else list(user)
        self._denials, self._spent = [], RunOutcome("", "", 0)
        if self.hooks is not None and not self._subagent:  # a sub-agent's prompt is the model's, not the user's
            verdict = await self.hooks.user_prompt(prompt_text(blocks))
            if verdict.blocked is not None:  # nothing reaches the model
                return self._outcome(verdict.blocked, "hook_blocked", 0, Usage())
            if verdict.context:  # hooks see the user's secret-looking variables: what they say is masked
                blocks.append({"type": "text", "text": mask(verdict.context)})
        if self._prelude is not None:
            blocks = [*await self._prelude(self.history), *blocks]
        self._append_user(blocks)
        usage = Usage()
        stop_active = False
        for turn_no in range(1, self.max_turns + 1):
            if self.before_request is not None:
                await self.before_request()
            self._hear_background()
            turn, tools = await self._request(self.system_prompt())
            usage.add(turn.usage)
            self.usage.add(turn.usage)
            self.history.append({"role": "assistant", "content": storable(turn.content)})
            self._history_changed()
            self.ui.assistant_done(turn)
            if not turn.tool_uses:
                feedback = await self._stop_feedback(turn.text, stop_active)
                if feedback is None:
                    return self._outcome(turn.text, turn.stop_reason or "end_turn", turn_no, usage)
                self._append_user([{"type": "text", "text": mask(feedback)}])  # a Stop hook sends the model back
                stop_active = True
                continue
            cut = turn.stop_reason == "max_tokens"  # a call cut mid-input never runs
            await self._run_tool_calls([Call(b, None if cut else self._find_tool(tools, tool_name(b)),
                                             ToolResult.error(CUT_TEXT) if cut else None) for b in turn.tool_uses])
            if cut:
                self._unanswered_note = CUT_NOTE
                return self._outcome(turn.text, "max_tokens", turn_no, usage)
            if self._interrupted:
                return self._outcome(last_text(self.history), "permission_interrupt", turn_no, usage)
            if self._hook_stop is not None:
                return self._outcome(last_text(self.history), "hook_stopped", turn_no, usage)
        self._unanswered_note = MAX_TURNS_NOTE  # not an interruption: say so to the model on the next run
        return self._outcome(last_text(self.history), "max_turns", self.max_turns, usage)

    def _outcome(self, text: str, stop: str, turns: int, usage: Usage) -> RunOutcome:
        return RunOutcome(text, stop, turns, usage, self._denials, self._spent.subagent_turns,
                          self._spent.subagent_usage)

    async def _request(self, system: str) -> tuple[AssistantTurn, dict[str, Tool]]:
        """One model request, the history first fitted into the context window; a "prompt is too long" refusal
        compacts and retries once. Returns the answer and the tools it was offered (after a compaction, the tools
        are asked for again: what ToolSearch had found may be forgotten)."""
        tools, specs = self._offer()
        if await self._fit(system, specs, force=False):
            tools, specs = self._offer()
        if isinstance(self.model, PlanAware) and isinstance(self.gate, ModalGate):
            self.model.set_planning(self.gate.mode == "plan")  # `opusplan` follows plan mode
        compacted = reloaded = False  # each retry at most once: at most three requests
        while True:
            estimated = self.context.estimate(system, self.history, specs)
            try:
                async with showing(self.ui, estimated):
                    turn = await self.model.complete(system=system, messages=self.history, tools=specs,
                                                     on_text=self.ui.text_delta, **retry_arguments(self.ui))
            except ModelError as exc:
                if not reloaded and self._loading is not None and self._loading.refused(exc):
                    reloaded = True  # the same request with the found tools sent in full (larger: fit it again)
                    tools, specs = self._offer()
                    if await self._fit(system, specs, force=False):
                        tools, specs = self._offer()
                    continue
                if compacted or not is_prompt_too_long(exc) or not await self._fit(system, specs, force=True):
                    raise
                compacted = True
                tools, specs = self._offer()
                continue
            self.context.observed(estimated, turn.usage.prompt_tokens)  # cached input counts too
            return turn, tools

    async def compact(self, focus: str = "") -> bool:
        """`/compact [focus]`: summarise the older part of the conversation now."""
        return await self._fit(self.system_prompt(), self._offer()[1], force=True, focus=focus, trigger="manual")

    def clear(self) -> None:
        self.history.clear()
        self._unanswered_note = INTERRUPTED_NOTE
        self._reset()

    def system_prompt(self) -> str:
        return self._system() if callable(self._system) else self._system

    # ---- hooks -------------------------------------------------------------------------------------------------

    async def _stop_feedback(self, text: str, active: bool) -> str | None:
        """Stop (SubagentStop for a sub-agent): the text that sends the model back to work, or None to stop."""
        if self.hooks is None or self._hook_stop is not None:
            return None
        verdict = await (self.hooks.subagent_stop(text, active, *self._agent) if self._subagent else self.hooks.stop(text, active))
        return verdict.block

    # ---- history -----------------------------------------------------------------------------------------------

    def _hear_background(self) -> None:
        """Notes on background tasks that ended since this agent's last request (tools/background.py), after the
        last user message's blocks; the main agent hears of its sub-agents' leftovers too."""
        notes = self.ctx.background.take_notices(self.ctx, everyone=not self._subagent)
        if notes:
            self.history[-1]["content"].extend({"type": "text", "text": note} for note in notes)
            self._history_changed()

    def _append_user(self, blocks: list[dict[str, Any]]) -> None:
        """Add user content, merging into a trailing user message (after an interruption) so roles alternate."""
        if self.history and self.history[-1]["role"] == "user":
            previous = self.history[-1]["content"]
            # tool results went unanswered (in this session, or in a resumed one: no text beside them)
            if blocks and blocks[0].get("type") == "text" and (
                    self._results_last or not any(b.get("type") == "text" for b in previous)):
                blocks = [{"type": "text", "text": self._unanswered_note}, *blocks]
            previous.extend(blocks)
        else:
            self.history.append({"role": "user", "content": list(blocks)})
        self._results_last = False
        if blocks and blocks[0].get("type") == "text":
            self._unanswered_note = INTERRUPTED_NOTE
        self._history_changed()

    def _offer(self) -> tuple[dict[str, Tool], list[ToolSpec]]:
        tools = {t.name: t for t in self._tools()}
        late = self._loading.deferred_names() if self._loading is not None else ()
        return tools, [ToolSpec(t.name, t.description, t.input_schema, defer_loading=t.name in late)
                       for t in tools.values()]

    async def _fit(self, system: str, specs: list[ToolSpec], *, force: bool, focus: str = "",
                   trigger: str = "auto") -> bool:
        """Fit the history into the window; True if it changed. Only a compaction (a summary replacing turns, not
        old results cleared) resets what the session had loaded (`on_reset`)."""
        before = self.context.compactions
        summarising = Shown(self.model, self.ui, "Compacting conversation",  # the summary request shows too
                             lambda system, messages: self.context.estimate(system, messages, []))
        if not await self.context.fit(summarising, system, self.history, specs, force=force, focus=focus,
                                      trigger=trigger):
            return False
        self._compacted = True
        self._history_changed(rewritten=True)
        if self.context.compactions != before:
            self._reset()
        return True

    def _reset(self) -> None:
        if self.on_reset is not None:
            self.on_reset(self.history)

    def _history_changed(self, rewritten: bool = False) -> None:
        if self.on_history is not None:
            self.on_history(self.history, rewritten)
