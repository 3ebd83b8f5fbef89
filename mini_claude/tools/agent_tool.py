"""The `Agent` tool: Claude Code's name and input shape (`description`, `prompt`, `subagent_type`, `model`,
`run_in_background`; not its `isolation`), handing a task to a fresh sub-agent whose final text comes back as the
result. `run_in_background` is accepted so a model trained to send it is not refused, and the sub-agent still runs to
its end before the result comes back (there are no background sub-agents here).

The tool only checks the input and names the type; running the child belongs to the agent layer
(mini_claude.agent.subagents.Subagents fits `SubagentRunner`), so this lower layer never imports the loop. It is
`read_only` as far as the loop's batching and the gate go: starting an agent changes nothing by itself — every call
the child makes goes through the same permission gate — so several Agent calls of one turn run concurrently, and
none asks the user.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from mini_claude.tools.base import ToolContext, ToolResult

__all__ = ["DEFAULT_SUBAGENT_TYPE", "AgentTool", "SubagentKind", "SubagentRunner"]

DEFAULT_SUBAGENT_TYPE = "general-purpose"


class SubagentKind(Protocol):
    """A sub-agent type as the tool lists it."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def tools_text(self) -> str: ...


class SubagentRunner(Protocol):
    """Runs sub-agents: the types it knows, and one run of a type on a prompt (its report as the result)."""

    def types(self) -> Mapping[str, SubagentKind]: ...

    async def run(self, kind_name: str, description: str, prompt: str, model: str | None = None) -> ToolResult: ...


INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
        "prompt": {"type": "string", "description": "The task for the agent to perform"},
        "subagent_type": {"type": "string",
                          "description": "The type of specialized agent to use for this task"},
        "model": {"type": "string", "enum": ["sonnet", "opus", "haiku"],
                  "description": "Optional model for this agent, over its type's; else the type's, or the session's"},
        "run_in_background": {"type": "boolean",
                              "description": "Accepted for compatibility: the agent always finishes before its "
                                             "result is returned"},
    },
    "required": ["description", "prompt"],
    "additionalProperties": False,
}


class AgentTool:
    """The tool the model calls to start a sub-agent (see the module docstring)."""

    name = "Agent"
    read_only = True

    def __init__(self, runner: SubagentRunner) -> None:
        self.runner = runner
        self.input_schema = INPUT_SCHEMA

    @property
    def description(self) -> str:
        listed = "\n".join(f"- {kind.name}: {kind.description} (Tools: {kind.tools_text()})"
                           for kind in self.runner.types().values())
        return ("Start an agent with a fresh context on a multi-step task (`subagent_type`, default "
                "general-purpose). Its final message is your tool result (the user does not see it). Several "
                f"calls in one message run concurrently.\n\nAgent types:\n{listed}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        kind = args.get("subagent_type") or DEFAULT_SUBAGENT_TYPE
        known = self.runner.types()
        if kind not in known:
            return ToolResult.error(f"Agent type '{kind}' not found. Available agents: {', '.join(known)}")
        prompt = args["prompt"]
        if not prompt.strip():
            return ToolResult.error("prompt is empty: say what the agent should do")
        return await self.runner.run(kind, args["description"], prompt, args.get("model"))
