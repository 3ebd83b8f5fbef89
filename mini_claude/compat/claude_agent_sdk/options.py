"""`ClaudeAgentOptions`: the Claude Agent SDK's options, every field with its name and default, turned into ours
(`to_options`). A field we do not support, set to anything but its default, is a ConfigError naming it — never
silently dropped. `cli_path`, `max_buffer_size`, `debug_stderr`, `load_timeout_ms` and `client_app` are about the
SDK's subprocess and have no meaning in-process: they are accepted and unused. As in the SDK, `system_prompt=None`
means no built-in system prompt (the SDK sends Claude Code an empty one); `{"type": "preset", "preset":
"claude_code"}` asks for ours; and `setting_sources=None` reads every settings file, as the SDK's CLI does (our own
`Options` default to an isolated session)."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.api.options import AgentDefinition, Options
from mini_claude.errors import ConfigError

__all__ = ["ClaudeAgentOptions", "to_options"]


@dataclass
class ClaudeAgentOptions:
    tools: list[str] | dict[str, Any] | None = None
    allowed_tools: list[str] = field(default_factory=list)
    system_prompt: str | dict[str, Any] | None = None
    mcp_servers: dict[str, Any] | str | Path = field(default_factory=dict)
    strict_mcp_config: bool = False
    permission_mode: str | None = None
    continue_conversation: bool = False
    resume: str | None = None
    session_id: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    disallowed_tools: list[str] = field(default_factory=list)
    model: str | None = None
    fallback_model: str | None = None
    betas: list[str] = field(default_factory=list)
    permission_prompt_tool_name: str | None = None
    cwd: str | Path | None = None
    cli_path: str | Path | None = None
    settings: str | None = None
    add_dirs: list[str | Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    extra_args: dict[str, str | None] = field(default_factory=dict)
    max_buffer_size: int | None = None
    debug_stderr: Any = sys.stderr
    stderr: Callable[[str], None] | None = None
    can_use_tool: Any = None
    hooks: dict[str, list[Any]] | None = None
    user: str | None = None
    include_partial_messages: bool = False
    include_hook_events: bool = False
    forward_subagent_text: bool = False
    verbatim_prompts: bool = False
    fork_session: bool = False
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    agents: dict[str, AgentDefinition] | None = None
    setting_sources: list[str] | None = None
    skills: list[str] | str | None = None
    sandbox: dict[str, Any] | None = None
    plugins: list[Any] = field(default_factory=list)
    max_thinking_tokens: int | None = None
    thinking: dict[str, Any] | None = None
    effort: str | None = None
    output_format: dict[str, Any] | None = None
    enable_file_checkpointing: bool = False
    session_store: Any = None
    session_store_flush: str = "batched"
    load_timeout_ms: int = 60_000
    task_budget: Any = None
    client_app: str | None = None


# the SDK's fields ours share, by name
_SAME = ("allowed_tools", "system_prompt", "mcp_servers", "strict_mcp_config", "permission_mode",
         "continue_conversation", "resume", "max_turns", "max_budget_usd", "disallowed_tools", "model", "cwd",
         "settings", "add_dirs", "env", "stderr", "can_use_tool", "hooks", "include_partial_messages", "fork_session",
         "agents", "setting_sources", "effort", "output_format")
# accepted and unused: they configure the SDK's subprocess, which does not exist here
_SUBPROCESS_ONLY = ("cli_path", "max_buffer_size", "debug_stderr", "load_timeout_ms", "client_app",
                    "session_store_flush")


def to_options(sdk: ClaudeAgentOptions | None) -> Options:
    """Our Options for the SDK's (ConfigError naming each unsupported field that is set)."""
    if sdk is None:
        return Options()
    unsupported = [f.name for f in dataclasses.fields(sdk)
                   if f.name not in _SAME and f.name not in _SUBPROCESS_ONLY and _is_set(sdk, f)]
    if unsupported:
        names = ", ".join(unsupported)
        raise ConfigError(f"ClaudeAgentOptions: not supported by mini-claude: {names} (leave "
                          f"{'it' if len(unsupported) == 1 else 'them'} at the default; docs/API.md lists what "
                          "differs)")
    values: dict[str, Any] = {name: getattr(sdk, name) for name in _SAME}
    if values["setting_sources"] is None:  # the SDK's default: every settings file, as the CLI reads them
        values["setting_sources"] = ["user", "project", "local"]
    if values["system_prompt"] is None:  # the SDK's default: no built-in system prompt (a preset asks for ours)
        values["system_prompt"] = ""
    values["allowed_tools"] = list(values["allowed_tools"])
    values["disallowed_tools"] = list(values["disallowed_tools"])
    values["add_dirs"] = list(values["add_dirs"])
    values["env"] = dict(values["env"])
    if values["hooks"] is not None:
        values["hooks"] = {event: list(matchers) for event, matchers in values["hooks"].items()}
    if values["agents"] is not None:
        values["agents"] = {name: _agent(name, spec) for name, spec in values["agents"].items()}
    return Options(**values)


def _is_set(sdk: ClaudeAgentOptions, f: dataclasses.Field[Any]) -> bool:
    value = getattr(sdk, f.name)
    if f.default is not dataclasses.MISSING:
        return bool(value != f.default)
    if f.default_factory is not dataclasses.MISSING:
        return bool(value != f.default_factory())
    return value is not None


def _agent(name: str, spec: Any) -> AgentDefinition:
    if isinstance(spec, AgentDefinition):
        return spec
    if isinstance(spec, Mapping):
        return AgentDefinition(description=str(spec.get("description", "")), prompt=str(spec.get("prompt", "")),
                               tools=spec.get("tools"), model=spec.get("model"))
    raise ConfigError(f"ClaudeAgentOptions.agents.{name}: an AgentDefinition")
