"""Assembling one agent session from its options, the environment and config files: model, tools, gate, MCP servers.

`start_session` is the one start every front end shares (the CLI's `-p` and REPL through cli/session_args.py, the
Python API through mini_claude/api): options → workspace trust, warnings about config problems, project-server approvals, the session, MCP servers starting in
the background.

Trust (`settle_trust`): until the folder is trusted (`mini_claude.trust`) what its project settings would widen is
dropped and its `.env` may give the model client only credentials and a model name, with one warning line saying
what was ignored. The session's environment — what MCP servers, shell commands, hooks, the apiKeyHelper and
`${VAR}` expansion see — is the real process environment with the settings' `env` on top (`settings.session_env`;
a repository's `env` only once the folder is trusted); `.env` values reach the model client alone, and the state
directory is always the real environment's.

The agent half (model client, gate, tools, hooks, sub-agents) is session/agent_half.py, imported while the servers
start; what both halves share (options, parts) is session/parts.py. The repository's git snapshot (branch,
status, recent commits: git_snapshot.py) is read meanwhile too, once per session.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_claude.errors import ConfigError
from mini_claude.mcp.approval import ApprovalStore, approval_hint, approval_state
from mini_claude.mcp.config import LoadedConfig, ServerConfig, disabled_servers, load_mcp_config
from mini_claude.mcp.host import HostUI
from mini_claude.mcp.manager import ServerState, ServerStatus
from mini_claude.mcp.pinning import PinReview
from mini_claude.mcp.tool_switches import switched_off_servers
from mini_claude.paths import state_dir, user_home
from mini_claude.session.mcp_half import additional_dirs, build_mcp
from mini_claude.session.parts import (
    SessionOptions,
    SessionParts,
    SessionUI,
    report_review,
    report_rule_problems,
)
from mini_claude.settings import (
    Settings,
    load_settings,
    read_flag_settings,
    session_env,
)
from mini_claude.settings_trust import without_project_widening
from mini_claude.trust import TrustDecision, TrustStore, check_trust, decide_trust, untrusted_line
from mini_claude.worktrees import shared_local_settings

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from mini_claude.permissions.answers import AskFn
    from mini_claude.session.parts import FrontUI

__all__ = [
    "AskTrustFn",
    "SessionOptions",
    "SessionParts",
    "additional_dirs",
    "build_env",
    "load_servers",
    "load_session_settings",
    "read_project_dotenv",
    "report_config_problems",
    "report_rule_problems",
    "resolve_approvals",
    "settle_trust",
    "start_session",
]

ApproveFn = Callable[[ServerConfig], Awaitable[str]]  # -> "approve" | "approve-all" | "deny"
AskTrustFn = Callable[[Path, list[str]], Awaitable[bool]]  # (folder, what trust would enable) -> trust it?


def build_env(cwd: Path | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The session's environment: `base` (the Python API's), else the real process environment without the agent's
    own virtualenv (own_venv.py: the user's commands find the user's python3), whatever folder `cwd` is. A
    project's `.env` deliberately never enters it (see `read_project_dotenv` and `settle_trust`)."""
    if base is not None:
        return dict(base)
    from mini_claude.own_venv import without_own_virtualenv

    return without_own_virtualenv(os.environ)


def read_project_dotenv(cwd: Path, home: Path, ui: SessionUI | None = None) -> dict[str, str]:
    """The working directory's `.env`, parsed (python-dotenv); {} when absent. A `.env` in the home directory is
    not a project's and is not read. One that cannot be read (too large, not a regular file, not UTF-8) costs a
    warning line through `ui` and is taken as empty: a repository file never stops the run."""
    from mini_claude.models.factory import load_dotenv

    path = cwd / ".env"
    try:
        if cwd.resolve() == home.resolve() or not path.is_file():
            return {}
    except OSError:
        return {}
    try:
        return load_dotenv(path)
    except ConfigError as exc:
        if ui is not None:
            ui.warn(f"{exc}; the project's .env is ignored")
        return {}


async def settle_trust(opts: SessionOptions, env: Mapping[str, str], settings: Settings, ui: SessionUI, *,
                       ask: AskTrustFn | None) -> tuple[Settings, dict[str, str], bool]:
    """Decide whether the folder is trusted (asking through `ask` when interactive and it matters) and return
    (settings to use, the model client's environment, trusted). Untrusted: the settings without what project files
    widen, and one warning line naming what was ignored and how to trust the folder."""
    from mini_claude.agent.commands import project_grants
    from mini_claude.models.factory import model_environment

    home, state = user_home(env), state_dir(env)
    trust = check_trust(opts.cwd, home=home, state=state)
    # a session that reads no project file (setting sources without "project") reads no project `.env` either
    reads_project = opts.setting_sources is None or "project" in opts.setting_sources
    dotenv = read_project_dotenv(opts.cwd, home, ui) if reads_project else {}
    restricted, ignored = without_project_widening(settings)
    untrusted_env = model_environment(env, dotenv, trusted=False)
    if untrusted_env.ignored:
        ignored.append(f".env {', '.join(untrusted_env.ignored)}")
    if reads_project and _has_project_styles(opts.cwd, home):  # their text would become system prompt
        ignored.append(".claude/output-styles")
    commands = project_grants(opts.cwd, home, opts.setting_sources) if reads_project and not trust.trusted else None
    if commands:  # a repository's commands' allowed-tools count only once it is trusted (agent/commands.py)
        ignored.append(commands)
    if ask is not None and not trust.trusted and "statusLine" in settings.user:
        # the user's own status line runs in this folder, and a stranger's `.git/config` can run code through the
        # git commands such lines use (core.fsmonitor, filters): it waits for trust, as git_snapshot.py does
        ignored.append("your statusLine command (it would run here, and this folder's git config could run code)")
    decision = decide_trust(trust, trust_flag=opts.trust, can_ask=ask is not None, has_widening=bool(ignored))
    if decision is TrustDecision.ASK:
        assert ask is not None
        decision = TrustDecision.REMEMBER if await ask(trust.folder, ignored) else TrustDecision.UNTRUSTED
    if decision is TrustDecision.REMEMBER:
        store = TrustStore.in_state_dir(state)
        store.record(trust.folder)
        ui.info(f"trusted {trust.folder} (remembered in {store.path})")
    if decision is TrustDecision.UNTRUSTED:
        if ignored:
            ui.warn(untrusted_line(trust.folder, ignored))
        return restricted, untrusted_env.env, False
    return settings, model_environment(env, dotenv, trusted=True).env, True


def _has_project_styles(cwd: Path, home: Path) -> bool:
    """Whether the folder has output style files of its own (agent/output_styles.py reads them once trusted; not
    imported here: the agent package loads in the background)."""
    folder = cwd / ".claude" / "output-styles"
    try:
        return folder.is_dir() and folder.resolve() != (home / ".claude" / "output-styles").resolve() \
            and any(folder.glob("*.md"))
    except OSError:
        return False


def load_servers(opts: SessionOptions, env: Mapping[str, str]) -> LoadedConfig:
    """The session's MCP servers: the config files and `--mcp-config` values, then the front end's in-process
    servers (which win over a file's server of the same name)."""
    config = load_mcp_config(cwd=opts.cwd, home=user_home(env), env=env, extra=opts.mcp_config,
                             strict=opts.strict_mcp_config, sources=opts.setting_sources)
    if opts.in_process:
        from mini_claude.mcp.config_entry import sdk_server_config

        for name, instance in opts.in_process.items():
            config.servers[name] = sdk_server_config(name, instance)
    return config


async def resolve_approvals(
    config: LoadedConfig,
    settings: Settings,
    *,
    cwd: Path,
    env: Mapping[str, str],
    trust_all: bool,
    ask: ApproveFn | None,
    trusted: bool = False,
) -> dict[str, tuple[ServerStatus, str]]:
    """Decide which project-level servers may start. Returns the servers held back, with status and reason.

    Interactive (`ask` given): each unknown server is asked once (approve / approve all / deny) and the answer
    is remembered with the server's fingerprint. Non-interactive: unknown servers are held with a hint that
    names the setting which approves them.

    The approval keys of settings (`enableAllProjectMcpServers`, `enabledMcpjsonServers`) count from the user's
    file always and from the project's files only when the folder is `trusted`; `disabledMcpjsonServers` counts
    from every file and wins over everything, the flag included (a repository may always switch its own servers
    off).
    """
    store = ApprovalStore.default(env)
    approval_keys = _approval_settings(settings, trusted)
    disabled = set(approval_keys["disabledMcpjsonServers"])
    held: dict[str, tuple[ServerStatus, str]] = {}
    approve_all = False
    switched_off = set(disabled_servers(cwd=cwd, home=user_home(env)))
    # `disabledMcpServers` of any settings file, trusted or not: switching off never needs trust
    shared = shared_local_settings(cwd)  # a linked worktree's: the main worktree's local file too (worktrees.py)
    in_settings = set(switched_off_servers((settings.user, settings.project, settings.local, settings.flag, shared)))
    disabled |= set(_names(shared.get("disabledMcpjsonServers")))
    for cfg in config.servers.values():
        if cfg.disabled:
            continue
        if cfg.name in in_settings:
            held[cfg.name] = (ServerStatus.DISABLED, f"switched off by disabledMcpServers in the settings "
                                                     f"(`mini-claude mcp enable {cfg.name} -s SCOPE`)")
            continue
        if cfg.name in switched_off:
            held[cfg.name] = (ServerStatus.DISABLED, f"disabled for this project (`mini-claude mcp enable "
                                                     f"{cfg.name}` or `/mcp enable {cfg.name}` turns it on)")
            continue
        state = approval_state(cfg, project=cwd, store=store, user_settings=approval_keys, trust_all=trust_all)
        if cfg.needs_project_approval() and cfg.name in disabled:
            state = "denied"
        if state == "approved":
            continue
        if state == "denied":
            held[cfg.name] = (ServerStatus.DISABLED, f"denied for this project (remove it from "
                                                     f"disabledMcpjsonServers or {store.path} to ask again)")
            continue
        if approve_all:
            store.record(cwd, cfg, "approved")
            continue
        if ask is None:
            held[cfg.name] = (ServerStatus.NEEDS_APPROVAL, approval_hint(cfg, store.prior(cwd, cfg)))
            continue
        answer = await ask(cfg)
        if answer in ("approve", "approve-all"):
            store.record(cwd, cfg, "approved")
            approve_all = answer == "approve-all"
        else:
            store.record(cwd, cfg, "denied")
            held[cfg.name] = (ServerStatus.DISABLED, "denied by you for this project")
    return held


def _approval_settings(settings: Settings, trusted: bool) -> dict[str, Any]:
    """The user's settings with the approval keys of every file merged in as the docstring of
    `resolve_approvals` says (lists joined)."""
    view = dict(settings.user)
    enabled = _names(settings.user.get("enabledMcpjsonServers"))
    disabled = _names(settings.user.get("disabledMcpjsonServers"))
    for raw in (settings.project, settings.local):
        disabled += _names(raw.get("disabledMcpjsonServers"))
        if trusted:
            enabled += _names(raw.get("enabledMcpjsonServers"))
            if raw.get("enableAllProjectMcpServers") is True:
                view["enableAllProjectMcpServers"] = True
    view["enabledMcpjsonServers"] = enabled
    view["disabledMcpjsonServers"] = disabled
    return view


def _names(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def load_session_settings(cwd: Path, env: Mapping[str, str], flag: str | None = None,
                          sources: tuple[str, ...] | None = None) -> Settings:
    """The settings files (of `sources`: --setting-sources), and `--settings` (`flag`: a file or a JSON string;
    ConfigError when unusable)."""
    layer = read_flag_settings(flag, cwd) if flag else None
    return load_settings(cwd=cwd, home=user_home(env), flag=layer, sources=sources)


def report_config_problems(ui: SessionUI, settings: Any, config: Any, rules: Any = None) -> None:
    """Warn about every problem found in the settings files, the MCP config and (once the session's gate exists)
    the permission rules: a malformed rule is dropped, so the user must hear about it."""
    for err in getattr(settings, "errors", []):
        ui.warn(f"settings: {err}")
    if rules is not None:
        report_rule_problems(ui, rules)
    for err in config.errors:
        ui.warn(f"MCP config: {err}")
    for warning in config.warnings:
        ui.warn(f"MCP config: {warning}")


async def start_session(
    opts: SessionOptions,
    ui: FrontUI,
    *,
    ask_server: ApproveFn | None = None,
    ask_permission: AskFn | None = None,
    on_server_change: Callable[[ServerState], None] | None = None,
    ask_trust: AskTrustFn | None = None,
    on_tools_review: Callable[[PinReview], None] | None = None,
    host_ui: HostUI | None = None,
    imports: Sequence[str] = (),
) -> SessionParts:
    """A session from `opts`, its MCP servers starting in the background (not waited for).

    An untrusted folder is asked about through `ask_trust` (the REPL), only when it holds something trust would
    change; without it (`-p`) it stays untrusted for this run. Project servers not yet approved are asked about
    through `ask_server` (the REPL); without it they are held back and a warning names the setting that approves
    them.

    Everything that can refuse the session (settings, trust, the MCP config, approvals, the model's key) is settled
    first; then the servers start, and the agent half (session/agent_half.py, and the caller's `imports`) is
    imported in a thread while the event loop spawns and answers them: a fleet boots on the machine's other cores
    while this process imports and builds the agent (bench/README.md, "A fleet of servers")."""
    from mini_claude.models.factory import api_key_helper, plan_model
    from mini_claude.session.preload import import_in_background

    cwd = opts.cwd
    env = build_env(cwd, opts.env)
    settings = load_session_settings(cwd, env, opts.settings, opts.setting_sources)
    full_settings = settings
    settings, model_env, trusted = await settle_trust(opts, env, settings, ui, ask=ask_trust)
    # the settings' env (a repository's only once trusted) for everything the session runs, and the model client
    env = session_env(env, settings)
    model_env = {**model_env, **settings.env}
    config = load_servers(opts, env)
    report_config_problems(ui, settings, config)
    for display, keys in full_settings.key_reports.items():  # --debug: once per file, what it sets to no effect
        log.debug("%s: %s (mini-claude does not act on them; `mini-claude doctor` says more)", display, keys.text())
    helper = api_key_helper(settings.api_key_helper, cwd=cwd, env=env) if settings.api_key_helper else None
    from mini_claude.models.catalog import ThinkingPrefs

    thinking = ThinkingPrefs.from_env(model_env, enabled=settings.always_thinking, effort=settings.effort_level,
                                      flag_effort=opts.effort)
    model = plan_model(opts.model, model_env, settings_model=settings.model, key_helper=helper, thinking=thinking,
                       pool=opts.http_pool)
    if model.warning:
        ui.warn(model.warning)
    held = await resolve_approvals(config, settings, cwd=cwd, env=env, trust_all=opts.trust_project_mcp,
                                   ask=ask_server, trusted=trusted)
    for status, reason in held.values():
        if status is ServerStatus.NEEDS_APPROVAL:
            ui.warn(reason)
    mcp = build_mcp(cwd, env=env, settings=settings, config=config, held=held, add_dirs=opts.add_dirs,
                    on_server_change=on_server_change, host_ui=host_ui, sources=opts.setting_sources,
                    apps=opts.apps)
    # a tool whose definition changed since it was accepted is withheld (mcp/pinning.py): the REPL asks about it
    # (`on_tools_review`); -p says so in one warning line per server
    mcp.manager.pins.on_review = on_tools_review or (lambda review: report_review(ui, review))
    # one client, built by whichever needs it first: the agent, or a server that samples before the agent exists
    session_model = functools.cache(model.build)
    mcp.agent_model = session_model  # the agent's own once it exists (build_session)
    mcp.manager.start()
    from mini_claude.git_snapshot import start_git_snapshot

    # branch, status and recent commits, read while the servers start and the agent half is imported; the first
    # model request waits for it (a bounded wait: git_snapshot.GIT_TIMEOUT_S)
    git = start_git_snapshot(cwd, env, trusted=trusted)
    from mini_claude.net.tls import plain_http, warm_tls_context

    if model.over_tls or any(cfg.url and not plain_http(cfg.url) for cfg in config.servers.values()):
        warm_tls_context()  # the CA bundle loads in a thread (holding no GIL) while the servers start
    try:
        await import_in_background("mini_claude.session.agent_half", *imports, warm=model.first_use_modules)
        from mini_claude.session.agent_half import rest_of_session

        return rest_of_session(opts, ui, mcp, session_model(), env=env, model_env=model_env, settings=settings,
                               full_settings=full_settings, config=config, trusted=trusted, held=held,
                               helper=helper, ask_permission=ask_permission, git=git)
    except BaseException:
        if git is not None:  # its git processes killed and reaped
            git.cancel()
            await asyncio.gather(git, return_exceptions=True)
        await mcp.manager.aclose()  # nothing left behind: the servers that started are stopped and reaped
        raise
