"""Where the agent loop calls the user's hooks: the `HookPoints` protocol (mini_claude.hooks.Hooks fits it; the
session passes one, or none), and the loop's side of each point.

    UserPromptSubmit   Agent.run, before the prompt joins the history: a block ends the run with no model request
    PreToolUse         before the permission gate; its decision is weighed by the gate (`check(..., hook=)`)
                       and its `updatedInput` (schema-checked) is what the gate checks and the tool runs
    PostToolUse        after a tool call that succeeded; what the hooks say goes beside the results
    Stop               when the model answers without tool calls; a block sends the reason and asks again
    SubagentStop       the same, for a sub-agent (`Agent(subagent=True, agent=(type, id))`, agent/subagents.py):
                       its matcher is the agent type, its payload names the type and the run's id
    PreCompact         ContextWindow.compact, before the summary request (trigger `manual` for /compact, else `auto`)

SessionStart, SessionEnd and Notification belong to the session, not the loop: the CLI fires them.
"""

from __future__ import annotations

from typing import Any, Protocol

from mini_claude.hooks.outcomes import AfterTool, BeforeTool, PromptVerdict, StopVerdict

__all__ = ["HookPoints"]


class HookPoints(Protocol):
    """The hooks as the loop sees them. Every method runs the matching hooks and waits for them (each bounded by
    its timeout); none raises for a hook's failure."""

    async def user_prompt(self, prompt: str) -> PromptVerdict: ...

    # `server`: an MCP tool's own server (tools.base.own_server), else found from the name
    async def pre_tool_use(self, name: str, args: dict[str, Any], tool_use_id: str, *,
                           server: str | None = None) -> BeforeTool: ...

    async def post_tool_use(self, name: str, args: dict[str, Any], tool_use_id: str, content: list[dict[str, Any]],
                            text: str, *, server: str | None = None) -> AfterTool: ...

    async def stop(self, last_text: str, active: bool) -> StopVerdict: ...

    async def subagent_stop(self, last_text: str, active: bool, agent_type: str = "",
                            agent_id: str = "") -> StopVerdict: ...

    async def pre_compact(self, trigger: str, custom_instructions: str) -> None: ...
