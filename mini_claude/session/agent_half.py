"""The agent half of a session: the model client, gate, tools, hooks, sub-agents and commands over a session's
MCP half (session/mcp_half.py).

`session/start.py` starts a session's servers first and imports this module in a thread meanwhile
(`session/preload.py`), so the machine's other cores boot the servers while this process imports and builds the
agent; `build_session` is also the demo's and the tests' way to an agent over parts they made themselves.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_claude.agent.commands import load_commands
from mini_claude.agent.compaction import ContextWindow, context_tokens
from mini_claude.agent.loop import Agent, AgentUI
from mini_claude.agent.memory import load_memory
from mini_claude.agent.opening import Opening
from mini_claude.agent.output_styles import StyleChoice, find_style, is_default, load_output_styles
from mini_claude.agent.subagents import SubagentParts, Subagents, acting_subagent, load_subagent_types
from mini_claude.agent.system_prompt import PLAN_MODE_PROMPT, PromptPart, git_branch, join_parts, system_parts
from mini_claude.errors import ConfigError
from mini_claude.hooks import Hooks, HookSession
from mini_claude.mcp.config import LoadedConfig
from mini_claude.mcp.host import HostUI
from mini_claude.mcp.manager import McpManager, ServerState, ServerStatus
from mini_claude.models.base import LoadsReferencedTools, Model, ToolCounter, ToolSpec
from mini_claude.models.catalog import ThinkingPrefs
from mini_claude.models.factory import create_model
from mini_claude.paths import state_dir, user_home
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions.answers import Answer, AskContext, AskFn, takes_context
from mini_claude.permissions.rules import CLAUDE_TOOL_NAMES
from mini_claude.sandbox.runtime import Sandbox
from mini_claude.secrets import EnvPolicy
from mini_claude.session.mcp_half import McpParts, build_mcp
from mini_claude.session.parts import SessionOptions, SessionParts, SessionUI, report_rule_problems
from mini_claude.session.state_sweep import sweep_in_background
from mini_claude.settings import Settings
from mini_claude.tools.base import Tool, ToolContext
from mini_claude.tools.mcp_resources import resource_tools
from mini_claude.tools.mcp_tool import McpToolAdapters
from mini_claude.tools.skill import SkillTool
from mini_claude.tools.tool_search import DeferredTools, ToolSearchTool

if TYPE_CHECKING:
    from mini_claude.git_snapshot import GitSnapshot
    from mini_claude.models.credentials import ApiKeyHelper
    from mini_claude.session.parts import FrontUI

__all__ = ["MAX_RESULT_CHARS", "build_session", "rest_of_session"]

MAX_RESULT_CHARS = 200_000


def rest_of_session(opts: SessionOptions, ui: FrontUI, mcp: McpParts, model: Model, *, env: dict[str, str],
                    model_env: dict[str, str], settings: Settings, full_settings: Settings, config: LoadedConfig,
                    trusted: bool, held: dict[str, tuple[ServerStatus, str]], helper: ApiKeyHelper | None,
                    ask_permission: AskFn | None,
                    git: asyncio.Future[GitSnapshot | None] | None = None) -> SessionParts:
    """The model client, gate, tools, sub-agent types and commands of a session whose servers are starting
    (`git`: the repository's snapshot being read meanwhile, git_snapshot.py)."""
    cwd = opts.cwd
    parts = build_session(opts, model=model, env=env, ui=ui, held=held, config=config, settings=settings,
                          ask_permission=ask_permission, mcp=mcp, git=git)
    # the gate's rule set (whose `errors` are the malformed rules, dropped) exists only from here
    report_rule_problems(ui, parts.gate.rules)
    for warning in parts.memory.warnings if parts.memory is not None else ():
        ui.warn(f"memory: {warning}")
    parts.trusted = trusted
    kinds, troubles = load_subagent_types(cwd, user_home(env), trusted=trusted, sources=opts.setting_sources)
    kinds.update(opts.agents)  # the front end's own types win over files of the same name
    if parts.subagents is not None:
        parts.subagents.kinds = kinds
        thinking = ThinkingPrefs.from_env(model_env, enabled=settings.always_thinking, effort=settings.effort_level)
        parts.subagents.parts.model_for = lambda name: create_model(name, model_env, key_helper=helper,
                                                                    thinking=thinking)
    for trouble in troubles:
        ui.warn(f"sub-agent: {trouble}")
    _choose_style(parts, cwd, user_home(env), settings, trusted, opts.setting_sources, ui)
    parts.commands, problems = load_commands(cwd, user_home(env), opts.setting_sources)
    for problem in problems:
        ui.warn(f"custom command: {problem}")
    if settings is not full_settings:  # a malformed rule the folder's distrust dropped is still worth fixing
        shown = {str(err) for err in parts.gate.rules.errors}
        for err in RuleSet.from_settings(full_settings).errors:
            if str(err) not in shown:
                ui.warn(f"permissions: {err} (rule ignored)")
    return parts


def build_session(
    opts: SessionOptions,
    *,
    model: Model,
    env: dict[str, str],
    ui: AgentUI,
    held: dict[str, tuple[ServerStatus, str]],
    config: LoadedConfig,
    settings: Settings,
    ask_permission: AskFn | None,
    on_server_change: Callable[[ServerState], None] | None = None,
    host_ui: HostUI | None = None,
    mcp: McpParts | None = None,
    git: asyncio.Future[GitSnapshot | None] | None = None,
) -> SessionParts:
    """The agent and its parts over `mcp` (built here when not given: `held`, `on_server_change` and `host_ui` are
    for that case); its servers are not started (`parts.manager.start()`). `git`: the repository's snapshot
    (git_snapshot.start_git_snapshot), awaited before the first request; without it the conversation opens with
    the memory files alone."""
    from mini_claude.tools.builtins import builtin_tools
    from mini_claude.tools.output import cap_result
    from mini_claude.tools.shell import BashTool
    from mini_claude.tools.web_search import WebSearchTool

    if mcp is None:
        mcp = build_mcp(opts.cwd, env=env, settings=settings, config=config, held=held, add_dirs=opts.add_dirs,
                        on_server_change=on_server_change, host_ui=host_ui)
    manager, host, skills, dirs = mcp.manager, mcp.host, mcp.skills, mcp.dirs
    mcp.agent_model = lambda: agent.model
    skill_tool = SkillTool(skills)
    mode_name = opts.mode or settings.default_mode or "default"
    try:
        mode = PermissionMode.parse(mode_name)
    except ValueError as exc:
        raise ConfigError(str(exc), key="permissions.defaultMode") from exc
    rules = RuleSet.from_settings(settings)
    if opts.allowed_tools or opts.disallowed_tools:
        rules = rules.with_cli(allow=opts.allowed_tools, deny=opts.disallowed_tools)
    spill_dir = state_dir(env) / "tool-output" / uuid.uuid4().hex[:12]
    home = user_home(env)  # the gate and the tools read `~` alike
    ask = _naming_subagents(ask_permission, ui) if ask_permission is not None else None
    sandbox = Sandbox(settings.sandbox, work_dirs=[opts.cwd, *dirs], home=home, state_dir=state_dir(env), env=env,
                      warn=lambda line: _warn(ui, line))  # probed at the first Bash command, not here
    gate = PermissionGate(mode, rules, ask=ask, cwd=opts.cwd, server_of=manager.server_of,
                          additional_dirs=dirs, home=home, state_dir=state_dir(env),
                          own_dirs=[spill_dir, home / ".claude" / "skills"],  # readable: ours, the user's skills
                          sandbox=sandbox)
    from mini_claude.mcp.tool_switches import ToolSwitches, disabled_tools
    from mini_claude.worktrees import shared_local_settings

    # `disabledMcpTools` from every file, trusted or not: a repository may switch tools off, never on (and a
    # linked worktree's local choices are the main worktree's too: worktrees.py)
    switches = ToolSwitches(disabled_tools((settings.user, settings.project, settings.local, settings.flag,
                                            shared_local_settings(opts.cwd))))
    mcp_tools = McpToolAdapters(manager, host, switches, apps=mcp.apps)

    def explain_unknown(name: str) -> str | None:  # a switched-off tool says so, not "no such tool"
        return mcp_tools.switched_off(name) or manager.explain_unavailable(name)

    mcp.listeners.append(lambda state: mcp_tools.server_ready(state.name) if state.status is ServerStatus.READY
                         else None)  # each server's tools wrapped as it comes up, not all before the request
    for state in manager.states.values():  # and those of the servers that came up while this half was imported
        if state.status is ServerStatus.READY:
            mcp_tools.server_ready(state.name)

    window = ContextWindow(context_tokens(env, model.name))  # the model's window (the table's), or the setting
    # tool search keeps its own base (the setting, else 200k): deferring MCP tools saves tokens whatever the window
    deferred = DeferredTools(mcp_tools, setting=env.get("MINI_CLAUDE_TOOL_SEARCH", "auto"),
                             context_tokens=context_tokens(env), native=_native_loading(model, env))
    search_tool = ToolSearchTool(deferred)

    def tools() -> list[Tool]:
        offered = deferred.offered()
        searching = [search_tool] if deferred.deferring() else []
        own = [*builtins, *([skill_tool] if skills.available() else []), *resource_tools(host.resources), *searching]
        if opts.tools is not None:  # --tools: the built-ins offered, by name
            own = [tool for tool in own if tool.name in opts.tools]
        return [*own, *offered]

    memory = load_memory(opts.cwd, user_home(env), opts.setting_sources)
    styles = StyleChoice()  # the built-ins; the files and the setting's choice once trust is known (rest_of_session)
    branch = git_branch(opts.cwd)  # once: the prompt's parts are built before every model request
    shell = _shell_name(env)

    def prompt_parts() -> list[PromptPart]:
        """The system prompt's parts for the next request (the model can change between requests: /model)."""
        if opts.system_prompt is not None:  # `--system-prompt ""` (the Agent SDK's default): no built-in prompt
            parts = [PromptPart("custom system prompt (--system-prompt)", opts.system_prompt)]
        else:
            listed = [(skill.name, skill.description) for skill in skills.available()]
            parts = system_parts(opts.cwd, model=agent.model.name, server_instructions=manager.instructions(),
                                 skills=listed, branch=branch, shell=shell, style=styles.current)
        parts.append(PromptPart("deferred MCP tool names", deferred.prompt_section()))
        if gate.mode is PermissionMode.PLAN:
            parts.append(PromptPart("plan mode", PLAN_MODE_PROMPT))
        if sandbox.enabled:
            parts.append(PromptPart("OS sandbox", SANDBOX_PROMPT))
        if opts.output_schema is not None:
            parts.append(PromptPart("structured output", STRUCTURED_PROMPT))
        if opts.append_system_prompt:
            parts.append(PromptPart("appended (--append-system-prompt)", opts.append_system_prompt))
        return [part for part in parts if part.text]

    def system() -> str:
        return join_parts(prompt_parts())

    opening = Opening(memory, git)

    ctx = ToolContext(cwd=opts.cwd, spill_dir=spill_dir, is_denied=gate.is_denied, is_secret=gate.is_secret,
                      is_private=gate.is_private, home=home)

    def cap(result: Any, context: ToolContext, name: str) -> Any:
        return cap_result(result, context, tool_name=name, max_chars=MAX_RESULT_CHARS)

    async def before_request() -> None:
        await manager.settle_lists()  # a list_changed that came with a tool result is applied first
        counter = agent.model
        if isinstance(counter, ToolCounter):  # the API's own count, where the estimate is near the threshold
            await deferred.calibrate(lambda tools: counter.count_tool_tokens(
                [ToolSpec(t.name, t.description, t.input_schema) for t in tools]))

    sweep_in_background(state_dir(env), keep_spill=ctx.spill_dir)  # the daily clean-up, off the start-up path
    hooks = _session_hooks(settings, opts, env, gate, manager, ui, lambda: parts)
    subagents = Subagents(SubagentParts(model=model, tools=tools, gate=gate, ctx=ctx, ui=ui, cwd=opts.cwd,
                                        max_turns=opts.max_turns, context_tokens=window.tokens, result_cap=cap,
                                        before_request=before_request, resolve_unknown=deferred.resolve,
                                        loading=deferred, hooks=hooks, mcp_tools=mcp_tools,
                                        explain_unknown=explain_unknown,
                                        report=lambda run, on: agent.absorb(run, on),
                                        checkpoints=lambda: agent.checkpoints))
    # commands get the user's passThrough and what a settings file's env set (never the agent's credentials)
    policy = EnvPolicy(tuple(settings.shell_pass_through), frozenset(settings.env))
    builtins = [BashTool(env=env, policy=policy) if isinstance(tool, BashTool) else tool
                for tool in builtin_tools(subagents)]
    for tool in builtins:
        if isinstance(tool, BashTool):
            tool.sandbox = sandbox
    builtins = [WebSearchTool(lambda: agent.model) if isinstance(tool, WebSearchTool) else tool for tool in builtins]
    structured = None
    if opts.output_schema is not None:
        from mini_claude.tools.structured_output import StructuredOutputTool, check_schema

        structured = StructuredOutputTool(check_schema(opts.output_schema, "output schema"))
        builtins.append(structured)
    agent = Agent(model=model, tools=tools, gate=gate, ctx=ctx, system=system, ui=ui, max_turns=opts.max_turns,
                  result_cap=cap, explain_unknown=explain_unknown, before_request=before_request,
                  context=window, resolve_unknown=deferred.resolve, loading=deferred, hooks=hooks, prelude=opening)
    agent.on_reset = deferred.forget
    if isinstance(ui, SessionUI):
        agent.context.on_compact = ui.info
    parts = SessionParts(agent=agent, manager=manager, settings=settings, config=config, gate=gate, env=env,
                         skills=skills, host=host, memory=memory, deferred=deferred, hooks=hooks, subagents=subagents,
                         prompt_parts=prompt_parts, opening=opening, structured=structured, styles=styles,
                         tool_switches=switches, apps=mcp.apps)
    if mcp.apps is not None:  # a view's tool call passes the same gate and hooks as the model's
        from mini_claude.session.apps_gate import SessionViewGate

        mcp.apps.gate = SessionViewGate(gate, hooks, mcp_tools)
    return parts


def _choose_style(parts: SessionParts, cwd: Path, home: Path, settings: Settings, trusted: bool,
                  sources: tuple[str, ...] | None, ui: FrontUI) -> None:
    """Load the output styles (a project's only in a trusted folder) and put `outputStyle`'s in force."""
    if parts.styles is None:
        return
    loaded, troubles = load_output_styles(cwd, home, trusted=trusted, sources=sources)
    parts.styles.styles, parts.styles.skipped = loaded.styles, loaded.skipped
    for trouble in troubles:
        ui.warn(f"output style: {trouble}")
    wanted = settings.output_style
    if wanted is None or is_default(wanted):
        return
    parts.styles.current = find_style(loaded.styles, wanted)
    if parts.styles.current is None:
        hint = (" (the project's .claude/output-styles are not read until the folder is trusted)"
                if loaded.skipped else "")
        ui.warn(f"output style {wanted!r} (outputStyle) not found; the default style is used{hint}")


def _naming_subagents(ask: AskFn, ui: AgentUI) -> AskFn:
    """The user's permission question, preceded by a line naming the sub-agent that asks (`acting_subagent`); the
    gate's AskContext passed on to a question that takes it."""
    with_context = takes_context(ask)

    async def asking(tool: Tool, args: dict[str, Any], context: AskContext | None = None) -> Answer:
        who = acting_subagent()
        if who is not None and isinstance(ui, SessionUI):
            ui.warn(f"The {who} sub-agent asks to use {tool.name}:")
        if with_context:
            return await ask(tool, args, context if context is not None else AskContext())  # type: ignore[call-arg]
        return await ask(tool, args)  # type: ignore[call-arg]
    return asking


def _session_hooks(settings: Settings, opts: SessionOptions, env: dict[str, str], gate: PermissionGate,
                   manager: McpManager, ui: AgentUI, parts: Callable[[], SessionParts]) -> Hooks | None:
    """The user's hooks (settings already filtered for trust), run in the user's own environment (never a
    repository's .env) with `CLAUDE_PROJECT_DIR`; a failing hook is one warning line through the terminal's door."""
    if not settings.hooks and not opts.hook_callables and not opts.hooks_from_code:
        return None

    def report(line: str) -> None:
        if isinstance(ui, SessionUI):
            ui.warn(f"hook: {line}")

    def transcript() -> str:
        log = parts().session_log
        return str(log.path) if log is not None else ""

    session = HookSession(cwd=opts.cwd, home=user_home(env), env=env, session_id=lambda: parts().session_id,
                          transcript_path=transcript, permission_mode=lambda: gate.mode.value,
                          tool_names=CLAUDE_TOOL_NAMES, server_of=manager.server_of)
    return Hooks(settings.hooks, session, report, callables=opts.hook_callables)


SANDBOX_PROMPT = (
    "Bash commands run in an OS sandbox: they may write only in the working folder, the added folders and /tmp (a "
    "private one), never to .git/config, .git/hooks, .claude/, .mcp.json or CLAUDE.md; the user's credentials (~/.ssh, "
    "~/.aws, ...) look empty; the network is off except the domains the user allowed. A result that begins a line "
    "with [sandbox] was stopped by it. Work inside these limits; set dangerouslyDisableSandbox only when a command "
    "truly needs more, and say why: the user is asked every time.")


STRUCTURED_PROMPT = (
    "This session needs its final answer in a fixed shape: when the task is done, call the StructuredOutput tool once "
    "with the answer as its input, matching its input schema exactly.")


def _warn(ui: AgentUI, line: str) -> None:
    """One warning line: the terminal's, else stderr (-p's output formats keep stdout for the result)."""
    if isinstance(ui, SessionUI):
        ui.warn(line)
    else:
        print(f"warning: {line}", file=sys.stderr, flush=True)


def _shell_name(env: Mapping[str, str]) -> str:
    """The shell the Bash tool runs (tools/shell.py: bash, else sh), by name."""
    found = shutil.which("bash", path=env.get("PATH"))
    return os.path.basename(found) if found else "sh"


def _native_loading(model: Model, env: Mapping[str, str]) -> bool:
    """Whether found MCP tools are loaded by the API (`tool_reference`; tools/tool_search.py): by default only on
    Anthropic's own API; `MINI_CLAUDE_TOOL_SEARCH_NATIVE=1` or `0` says so for any Anthropic backend (a proxy, the
    mock model in tests)."""
    if not isinstance(model, LoadsReferencedTools):
        return False
    forced = env.get("MINI_CLAUDE_TOOL_SEARCH_NATIVE", "").strip().lower()
    if forced in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return forced in ("1", "true", "yes", "on")
    return model.live


