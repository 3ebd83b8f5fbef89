"""What a program asks of a session: `Options`, with the Claude Agent SDK's field names where the meaning is the same,
and how they become the session layer's `SessionOptions` (`session_options`).

The differences from the CLI's defaults are deliberate, for programs: `setting_sources=None` is an isolated session
(no user or project file is read: settings, CLAUDE.md, commands, agents, skills, MCP configs), as in the SDK; the
session's environment is `os.environ` with `env` on top (`inherit_env=False`: `env` alone), and `os.environ` itself
is never written; the working folder is `cwd`, whatever the process's is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_claude.errors import ConfigError

if TYPE_CHECKING:
    from mini_claude.mcp.host import FormAnswer, FormRequest, SamplingRequest
    from mini_claude.session.parts import SessionOptions

__all__ = ["AgentDefinition", "Options", "session_options"]

SETTING_SOURCES = ("user", "project", "local")


@dataclass
class AgentDefinition:
    """A sub-agent type given in code (the SDK's name and fields): what the Agent tool may start."""

    description: str
    prompt: str
    tools: list[str] | None = None
    model: str | None = None


@dataclass
class Options:
    """A session's options. Every field is optional; see docs/API.md for each one's meaning."""

    cwd: str | Path | None = None
    model: str | None = None
    # a string replaces the built-in system prompt; {"type": "preset", "preset": "claude_code", "append": "..."}
    # keeps it and appends
    system_prompt: str | dict[str, Any] | None = None
    append_system_prompt: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    permission_mode: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    # name -> a server config (the .mcp.json shapes, or create_sdk_mcp_server's in-process one), or a config file
    mcp_servers: Mapping[str, Any] | str | Path = field(default_factory=dict)
    strict_mcp_config: bool = False
    setting_sources: Sequence[str] | None = None
    settings: str | None = None  # a settings file or JSON string, on top of the sources
    env: Mapping[str, str] = field(default_factory=dict)
    inherit_env: bool = True
    add_dirs: list[str | Path] = field(default_factory=list)
    agents: Mapping[str, AgentDefinition] | None = None
    resume: str | None = None
    continue_conversation: bool = False
    fork_session: bool = False
    # {"type": "json_schema", "schema": {...}}: the final answer is validated against the schema (one retry)
    output_format: Mapping[str, Any] | None = None
    include_partial_messages: bool = False
    stderr: Callable[[str], None] | None = None  # the session's notices and warnings, a line each
    hooks: Mapping[str, Sequence[Any]] | None = None  # event -> [HookMatcher]
    can_use_tool: Callable[..., Awaitable[Any]] | None = None
    # what servers may ask of the program (the SDK has no such callbacks): answers to forms, sampling consent
    on_elicitation: Callable[[FormRequest], Awaitable[FormAnswer | dict[str, Any]]] | None = None
    on_sampling: Callable[[SamplingRequest], Awaitable[bool]] | None = None
    on_progress: Callable[[str, float, float | None, str | None], None] | None = None
    effort: str | None = None
    trust: bool = False  # trust the folder (its project settings apply) — only meaningful with project sources


def session_options(options: Options) -> SessionOptions:
    """The session layer's options for `options` (ConfigError naming the field when one is unusable)."""
    from mini_claude.api.hooks import callable_hooks
    from mini_claude.session.parts import SessionOptions

    cwd = Path(options.cwd).expanduser() if options.cwd is not None else Path.cwd()
    if not cwd.is_dir():
        raise ConfigError(f"Options.cwd: {cwd} is not a folder")
    cwd = cwd.resolve()
    sources = None if options.setting_sources is None else tuple(options.setting_sources)
    for source in sources or ():
        if source not in SETTING_SOURCES:
            raise ConfigError(f"Options.setting_sources: unknown source {source!r} (expected user, project, local)")
    if options.trust and "project" not in (sources or ()):
        raise ConfigError('Options.trust: trusting the folder means reading its project settings: add "project" to '
                          'setting_sources (or leave trust off)')
    system, append = _system_prompt(options)
    if options.max_turns is not None and options.max_turns < 1:
        raise ConfigError("Options.max_turns: must be at least 1")
    base = dict(os.environ) if options.inherit_env else {}
    env = {**base, **{str(k): str(v) for k, v in options.env.items()}}
    return SessionOptions(
        cwd=cwd, model=options.model, mode=options.permission_mode,
        max_turns=options.max_turns if options.max_turns is not None else 50,
        mcp_config=_mcp_config(options.mcp_servers), strict_mcp_config=options.strict_mcp_config,
        allowed_tools=list(options.allowed_tools), disallowed_tools=list(options.disallowed_tools),
        trust=options.trust, add_dirs=[Path(d) for d in options.add_dirs], system_prompt=system,
        append_system_prompt=append, settings=options.settings, effort=options.effort, env=env,
        setting_sources=sources if sources is not None else (), output_schema=_output_schema(options.output_format),
        agents=_agents(options.agents or {}),
        in_process={name: cfg["instance"] for name, cfg in in_process_servers(options.mcp_servers).items()},
        hook_callables=callable_hooks(options.hooks),
    )


def _agents(agents: Mapping[str, AgentDefinition]) -> dict[str, Any]:
    from mini_claude.agent.subagents import SubagentType

    kinds = {}
    for name, spec in agents.items():
        if not isinstance(spec, AgentDefinition) or not spec.description.strip() or not spec.prompt.strip():
            raise ConfigError(f"Options.agents.{name}: an AgentDefinition with a description and a prompt")
        tools = tuple(spec.tools) if spec.tools is not None else None
        model = spec.model if spec.model not in (None, "inherit") else None
        kinds[name] = SubagentType(name=name, description=spec.description, prompt=spec.prompt, tools=tools,
                                   model=model, source="sdk")
    return kinds


def _output_schema(output_format: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if output_format is None:
        return None
    schema = output_format.get("schema") if isinstance(output_format, Mapping) else None
    if not isinstance(output_format, Mapping) or output_format.get("type") != "json_schema" or schema is None:
        raise ConfigError('Options.output_format: {"type": "json_schema", "schema": {...}}')
    from mini_claude.tools.structured_output import check_schema

    return check_schema(schema, "Options.output_format.schema")


def _system_prompt(options: Options) -> tuple[str | None, str | None]:
    prompt = options.system_prompt
    append = options.append_system_prompt
    if prompt is None or isinstance(prompt, str):
        return prompt, append
    if isinstance(prompt, Mapping) and prompt.get("type") == "preset":
        extra = prompt.get("append")
        joined = "\n\n".join(part for part in (extra, append) if isinstance(part, str) and part)
        return None, joined or None
    raise ConfigError('Options.system_prompt: a string, or {"type": "preset", "preset": "claude_code", '
                      '"append": "..."}')


def _mcp_config(servers: Mapping[str, Any] | str | Path) -> list[str]:
    """`mcp_servers` as --mcp-config values: a file path as it is, a dict as one JSON document (in-process servers
    are taken out first: `in_process_servers`)."""
    if isinstance(servers, (str, Path)):
        return [str(servers)]
    plain = {name: dict(cfg) for name, cfg in servers.items() if not _in_process(cfg)}
    return [json.dumps({"mcpServers": plain})] if plain else []


def in_process_servers(servers: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    """The in-process servers among `mcp_servers` (create_sdk_mcp_server's configs), by name."""
    if isinstance(servers, (str, Path)):
        return {}
    return {name: cfg for name, cfg in servers.items() if _in_process(cfg)}


def _in_process(cfg: Any) -> bool:
    return isinstance(cfg, Mapping) and cfg.get("type") == "sdk" and "instance" in cfg
