"""Sub-agents: the types a model may start with the `Agent` tool (tools/agent_tool.py), where they come from, and
how one runs — one more `Agent` loop over the session's own parts.

Types, as Claude Code names them: the built-in `general-purpose` (every tool) and `Explore` (read-only: only the
tools that change nothing — Read, Glob, Grep, WebFetch, MCP tools the server marks read-only —, and its gate refuses
any other call; Claude Code's Explore keeps Bash and relies on its prompt), then `~/.claude/agents/*.md` (the user's) and
`.claude/agents/*.md` (the project's; it wins over the user's of the same name, as in Claude Code). Front matter:
`name`, `description` (both required), `tools` (Claude Code's names, `Read, Grep, mcp__server__tool`; absent: every
tool), `model`; the body is the child's system prompt. Files are read through jsonfile's bounded door and
frontmatter's one YAML door; a bad file is a warning, never a stop.

A child is never more than its parent: it gets the parent's tools filtered by its list (the parent's MCP
connections included: callable, not only listed; a type's own list is sent whole even while the main agent defers
MCP tools behind ToolSearch), never the Agent tool (one level: Claude Code 2.1.197 lets a general-purpose child
start another, mini-claude does not), the parent's permission gate itself (same mode, rules
and "always" answers) behind `SubagentGate`, which names the sub-agent for the user's questions (`acting_subagent`),
its own context window and history, and its hooks with `SubagentStop` instead of `Stop`. Trust: a project's agent
files load in an untrusted folder too — their tool list only narrows and their text is a prompt — but their `model`
counts only once the folder is trusted (`trusted=False` drops it), as a repository must not pick what the user pays.
A project file that leads outside the project (symlinks resolved) is not read, as memory files are not: a link to
a note of the user's with the right front matter would send it to the model as a sub-agent's prompt.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mini_claude.agent.checkpoints import Checkpoints
from mini_claude.agent.compaction import ContextWindow
from mini_claude.agent.hook_points import HookPoints
from mini_claude.agent.loop import Agent, DeferredLoading, Gate, RunOutcome
from mini_claude.agent.ui import AgentUI, RetryNotices
from mini_claude.claude_folders import markdown_files
from mini_claude.errors import ConfigError
from mini_claude.frontmatter import parse_frontmatter, split_frontmatter
from mini_claude.hooks.outcomes import HookPermission
from mini_claude.jsonfile import read_regular_text
from mini_claude.models.base import AssistantTurn, Model, RetryNotice
from mini_claude.permissions import Decision
from mini_claude.permissions.rules import claude_tool_name
from mini_claude.tools.base import Tool, ToolContext, ToolResult
from mini_claude.tools.exit_plan_mode import EXIT_PLAN_MODE_TOOL_NAME
from mini_claude.tools.todo import TodoWriteTool
from mini_claude.trust import TRUST_HINT

__all__ = ["AGENT_TOOL_NAME", "BUILTIN_TYPES", "SubagentGate", "SubagentParts", "SubagentType", "Subagents",
           "acting_subagent", "load_subagent_types"]

AGENT_TOOL_NAME = "Agent"
MAX_AGENT_FILE_BYTES = 64 * 1024
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # fullmatch: `$` would let a trailing newline through
_acting: ContextVar[str | None] = ContextVar("mini_claude_subagent", default=None)


@dataclass(frozen=True)
class SubagentType:
    """One kind of sub-agent. `tools`: Claude Code names it may use (None: all); `excluded`: names it may not."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    excluded: tuple[str, ...] = ()
    model: str | None = None  # None or "inherit": the session's model
    read_only: bool = False  # only tools that declare `read_only` (offered, and let through its gate)
    source: str = "built-in"  # "built-in" | "user" | "project"
    path: Path | None = None

    def allows(self, tool_name: str) -> bool:
        name = claude_tool_name(tool_name)
        if name in (AGENT_TOOL_NAME, EXIT_PLAN_MODE_TOOL_NAME) or name in self.excluded:
            return False  # no sub-agent starts another, nor ends the session's plan mode
        return self.tools is None or name in self.tools or tool_name in self.tools

    def offers(self, tool: Tool) -> bool:
        return self.allows(tool.name) and (tool.read_only or not self.read_only)

    def tools_text(self) -> str:
        if self.read_only:
            return "read-only ones"
        if self.tools is not None:
            return ", ".join(self.tools)
        return f"All tools except {', '.join(self.excluded)}" if self.excluded else "*"


_REPORT = ("When you are done, answer with a concise report of what you did and found: the agent that started "
           "you reads your final message as the result, the user does not see it.")
BUILTIN_TYPES: tuple[SubagentType, ...] = (
    SubagentType("general-purpose",
                 "Researching questions, searching code, multi-step tasks.",
                 "You are a sub-agent of mini-claude, a coding agent in the terminal. Use the tools available to "
                 f"complete the task you are given, fully but without gold-plating. {_REPORT}"),
    SubagentType("Explore",
                 "Read-only search across many files when you need the conclusion, not the file dumps.",
                 "You are a read-only search sub-agent of mini-claude. Locate the code, files and facts the task "
                 "asks about with the search and read tools; never change files or state. " + _REPORT,
                 excluded=(AGENT_TOOL_NAME, "Edit", "Write", "NotebookEdit"), read_only=True),
)


_BUILTIN_NAMES = frozenset(t.name for t in BUILTIN_TYPES)


def load_subagent_types(cwd: Path, home: Path, *, trusted: bool, sources: Collection[str] | None = None
                        ) -> tuple[dict[str, SubagentType], list[str]]:
    """The types by name (built-ins, then the user's files, then the project's) and one warning per file that could
    not be used. `trusted`: whether the folder is trusted (a project file's `model` counts only then, and only then
    may a project file replace a user's type of the same name). `sources`:
    the scopes whose files are read (`--setting-sources`; None: user and project)."""
    found = {t.name: t for t in BUILTIN_TYPES}
    folders, warnings = markdown_files("agents", cwd, home, sources=sources)
    for source, paths in folders:
        for path in paths:
            try:
                kind = _read(path, source)
            except (OSError, ConfigError) as exc:  # FrontmatterError too
                warnings.append(f"{path}: {exc}" if not isinstance(exc, ConfigError) or not exc.file else str(exc))
                continue
            if kind is None:
                continue
            if source == "project" and not trusted and kind.model not in (None, "inherit"):
                warnings.append(f"{path}: `model: {kind.model}` ignored (the session's model is used) until the "
                                f"folder is trusted — {TRUST_HINT}")
                kind = replace(kind, model=None)
            if source == "project" and kind.name in _BUILTIN_NAMES:
                # a repository must not swap the read-only Explore (or general-purpose) for a type of its own
                warnings.append(f"{path}: a project agent may not replace the built-in {kind.name!r} type; ignored "
                                "(name it differently, or put it in ~/.claude/agents)")
                continue
            mine = found.get(kind.name)
            if source == "project" and not trusted and mine is not None and mine.source == "user":
                # an untrusted repository must not swap the user's own type (its tools list, its prompt) for its own
                warnings.append(f"{path}: replaces your own {kind.name!r} agent type, which is used until the "
                                f"folder is trusted — {TRUST_HINT}")
                continue
            found[kind.name] = kind
    return found, warnings


def _read(path: Path, source: str) -> SubagentType | None:
    text = read_regular_text(path, str(path), max_bytes=MAX_AGENT_FILE_BYTES)
    if text is None:
        return None
    meta = parse_frontmatter(text)
    _, body = split_frontmatter(text)
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError("front matter `name` missing or not a name of letters, digits, '-' and '_'",
                          file=str(path), key="name")
    if not isinstance(description, str) or not description.strip():
        raise ConfigError("front matter `description` missing or empty", file=str(path), key="description")
    tools = meta.get("tools")
    listed: tuple[str, ...] | None = None
    if isinstance(tools, str):
        listed = tuple(t.strip() for t in tools.split(",") if t.strip())
    elif isinstance(tools, list):
        listed = tuple(str(t).strip() for t in tools if str(t).strip())
    elif tools is not None:
        raise ConfigError("front matter `tools` must be a comma-separated list", file=str(path), key="tools")
    if listed is not None and "*" in listed:
        listed = None
    model = meta.get("model")
    model = model.strip() if isinstance(model, str) and model.strip() else None
    return SubagentType(name, description.strip(), body.strip(), listed, model=model, source=source, path=path)


def acting_subagent() -> str | None:
    """The sub-agent whose permission check is running in this task, or None for the main agent."""
    return _acting.get()


@contextmanager
def _acting_as(label: str) -> Iterator[None]:
    token = _acting.set(label)
    try:
        yield
    finally:
        _acting.reset(token)


class SubagentGate:
    """The parent's gate for a sub-agent's calls: the same decisions (`read_only`: a call of a tool that is not
    read-only is refused first); while it checks, `acting_subagent()` names the sub-agent, so a question reaching the
    user says who asks (the session's ask callback reads it)."""

    def __init__(self, gate: Gate, label: str, *, read_only: bool = False) -> None:
        self._gate, self.label, self.read_only = gate, label, read_only

    async def check(self, tool: Tool, args: dict[str, Any], *, hook: HookPermission | None = None,
                    tool_use_id: str | None = None, view: str | None = None) -> Any:
        if self.read_only and not tool.read_only:
            return Decision(False, f"permission denied for {tool.name}: the {self.label} agent is read-only")
        with _acting_as(self.label):
            return await self._gate.check(tool, args, hook=hook, tool_use_id=tool_use_id, view=view)


class _LabelledUI:
    """The parent's UI for a child: its tool calls shown under the sub-agent's name; its text is its report,
    which the parent's model receives (not shown as it streams)."""

    def __init__(self, ui: AgentUI, label: str) -> None:
        self._ui, self._label = ui, label

    def text_delta(self, text: str) -> None:
        pass

    def assistant_done(self, turn: AssistantTurn) -> None:
        pass

    def tool_started(self, name: str, args: dict[str, Any]) -> None:
        self._ui.tool_started(f"{self._label} › {name}", args)

    def tool_finished(self, name: str, result: ToolResult) -> None:
        self._ui.tool_finished(f"{self._label} › {name}", result)

    def model_retrying(self, notice: RetryNotice) -> None:
        """A sub-agent's request waiting to be retried is shown as the parent's would be."""
        if isinstance(self._ui, RetryNotices):
            self._ui.model_retrying(notice)


@dataclass
class SubagentParts:
    """What the session shares with its sub-agents (the parent `Agent`'s own parts)."""

    model: Model
    tools: Callable[[], Sequence[Tool]]
    gate: Gate
    ctx: ToolContext
    ui: AgentUI
    cwd: Path
    max_turns: int
    context_tokens: int
    result_cap: Callable[[ToolResult, ToolContext, str], ToolResult] | None = None
    before_request: Callable[[], Awaitable[None]] | None = None
    resolve_unknown: Callable[[str], Tool | None] | None = None
    loading: DeferredLoading | None = None
    hooks: HookPoints | None = None
    # why a tool name is not callable (McpManager.explain_unavailable), for a name the type does not exclude
    explain_unknown: Callable[[str], str | None] | None = None
    # every MCP tool, deferred behind ToolSearch or not: a type that lists its tools is offered those in full
    mcp_tools: Callable[[], Sequence[Tool]] | None = None
    # a type's `model` (not "inherit"): the model to use; None: every child uses the session's model
    model_for: Callable[[str], Model] | None = None
    # the parent agent counts a child's run on a model in its own (Agent.absorb); set once the parent exists
    report: Callable[[RunOutcome, Model], None] | None = None
    # each child as it starts (observers: tests, a view of running agents)
    on_child: Callable[[Agent], None] | None = None
    # the session's checkpoints of file changes (the parent's, once saving started): a child's writes join them
    checkpoints: Callable[[], Checkpoints | None] | None = None


@dataclass
class Subagents:
    """The sub-agent types of a session and the runner the `Agent` tool calls (tools/agent_tool.SubagentRunner)."""

    parts: SubagentParts
    kinds: Mapping[str, SubagentType] = field(default_factory=lambda: {t.name: t for t in BUILTIN_TYPES})
    _models: dict[str, Model] = field(default_factory=dict)  # one client per model a type names

    def types(self) -> Mapping[str, SubagentType]:
        return self.kinds

    async def run(self, kind_name: str, description: str, prompt: str, model: str | None = None) -> ToolResult:
        """Run a fresh `kind_name` agent on `prompt` (on `model`, when the call names one: as in Claude Code it
        wins over the type's); its final text is the result."""
        kind = self.kinds[kind_name]
        child = self._child(replace(kind, model=model) if model else kind)
        if self.parts.on_child is not None:
            self.parts.on_child(child)
        try:
            outcome = await child.run(prompt)
        except BaseException:
            if self.parts.report is not None:  # what it spent before it failed or was interrupted still counts
                self.parts.report(RunOutcome("", "interrupted", 0, child.usage), child.model)
            raise
        if self.parts.report is not None:
            self.parts.report(outcome, child.model)
        if outcome.stop == "max_turns":
            return ToolResult.error(f"the {kind.name} agent ({description}) stopped at its turn limit "
                                    f"({outcome.turns}) before reporting; its last text: {outcome.text}")
        return ToolResult.text(outcome.text or f"(the {kind.name} agent ended without a report)")

    def _child(self, kind: SubagentType) -> Agent:
        p = self.parts
        model = p.model
        if kind.model is not None and kind.model != "inherit" and p.model_for is not None:
            model = self._models.get(kind.model) or self._models.setdefault(kind.model, p.model_for(kind.model))

        listed = kind.tools is not None  # its own short list: sent in full, never deferred behind ToolSearch

        own_todos = TodoWriteTool()  # its own working plan: a child's list never replaces the parent's

        def tools() -> list[Tool]:
            offered = {t.name: own_todos if isinstance(t, TodoWriteTool) else t for t in p.tools() if kind.offers(t)}
            for tool in p.mcp_tools() if listed and p.mcp_tools is not None else ():
                if kind.offers(tool):
                    offered.setdefault(tool.name, tool)
            return list(offered.values())

        def resolve(name: str) -> Tool | None:
            tool = p.resolve_unknown(name) if p.resolve_unknown is not None and kind.allows(name) else None
            return tool if tool is not None and kind.offers(tool) else None

        def explain(name: str) -> str | None:
            exists = [*p.tools(), *(p.mcp_tools() if p.mcp_tools is not None else ())]
            if any(t.name == name and not kind.offers(t) for t in exists):
                return (f"No such tool available: {name}. {name} exists but is not enabled for the {kind.name} "
                        f"agent. Use one of the available tools instead.")
            return p.explain_unknown(name) if p.explain_unknown is not None else None

        ctx = replace(p.ctx, read_files=dict(p.ctx.read_files))  # its own record of what it has read
        system = _system_prompt(kind, p.cwd)
        gate = SubagentGate(p.gate, kind.name, read_only=kind.read_only)
        child = Agent(model=model, tools=tools, gate=gate, ctx=ctx, system=system,
                      ui=_LabelledUI(p.ui, kind.name), max_turns=p.max_turns, result_cap=p.result_cap,
                      explain_unknown=explain, before_request=p.before_request,
                      context=ContextWindow(p.context_tokens), resolve_unknown=resolve,
                      loading=None if listed else p.loading,
                      hooks=p.hooks, subagent=True, agent=(kind.name, uuid.uuid4().hex))
        child.checkpoints = p.checkpoints() if p.checkpoints is not None else None
        return child


def _system_prompt(kind: SubagentType, cwd: Path) -> str:
    return (f"{kind.prompt}\n\nNotes:\n- Share file paths (absolute) that matter to the task in your final "
            f"response.\n- Your final message is your report to the agent that started you.\n\n"
            f"<env>\nWorking directory: {cwd}\n</env>")
