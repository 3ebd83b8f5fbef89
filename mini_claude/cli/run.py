"""Running the agent from the command line: one-shot print mode and the interactive REPL's setup."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from mini_claude.cli.render import TerminalUI
from mini_claude.cli.session import (
    SessionOptions,
    SessionParts,
    build_env,
    build_session,
    load_servers,
    load_session_settings,
    resolve_approvals,
)
from mini_claude.mcp.manager import ServerState, ServerStatus

__all__ = ["options_from_args", "report_config_problems", "report_rule_problems", "run_interactive", "run_print"]


def options_from_args(args: argparse.Namespace, cwd: Path) -> SessionOptions:
    mode = args.permission_mode
    if args.yolo:
        mode = "bypassPermissions"
    elif args.plan:
        mode = "plan"
    return SessionOptions(
        cwd=cwd, model=args.model, mode=mode, max_turns=args.max_turns, mcp_config=list(args.mcp_config),
        strict_mcp_config=args.strict_mcp_config, trust_project_mcp=args.trust_project_mcp,
        allowed_tools=list(args.allowed_tools), disallowed_tools=list(args.disallowed_tools),
    )


def report_config_problems(ui: TerminalUI, settings: Any, config: Any, rules: Any = None) -> None:
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


def report_rule_problems(ui: TerminalUI, rules: Any) -> None:
    """Warn about each malformed permission rule (RuleSet.errors); the rule itself was dropped."""
    for err in getattr(rules, "errors", ()):
        ui.warn(f"permissions: {err} (rule ignored)")


def server_line(state: ServerState) -> str:
    detail = state.summary()
    return f"{state.name}: {state.status.label}" + (f" ({detail})" if detail else "")


def run_print(args: argparse.Namespace) -> int:
    prompt = args.prompt
    if prompt is None:
        if sys.stdin.isatty():
            sys.stderr.write("mini-claude: -p needs a prompt (as an argument or on stdin)\n")
            return 2
        prompt = sys.stdin.read()
    if not prompt.strip():  # the API rejects an empty user message: say so here, in one line
        sys.stderr.write("mini-claude: -p needs a non-empty prompt (as an argument or on stdin)\n")
        return 2
    return asyncio.run(_print_main(args, prompt))


async def _print_main(args: argparse.Namespace, prompt: str) -> int:
    from mini_claude.models.factory import create_model

    cwd = Path.cwd()
    env = build_env(cwd)
    opts = options_from_args(args, cwd)
    ui = TerminalUI(print_mode=True)
    settings = load_session_settings(cwd, env)
    config = load_servers(opts, env)
    report_config_problems(ui, settings, config)
    model = create_model(opts.model or settings.model, env)
    held = await resolve_approvals(config, settings, cwd=cwd, env=env, trust_all=opts.trust_project_mcp, ask=None)
    for _name, (status, reason) in held.items():
        if status is ServerStatus.NEEDS_APPROVAL:
            ui.warn(reason)
    parts = build_session(opts, model=model, env=env, ui=ui, held=held, config=config, settings=settings,
                          ask_permission=None)
    # the gate's rule set (whose `errors` are the malformed rules, dropped) exists only from here
    report_rule_problems(ui, parts.gate.rules)
    parts.manager.start()
    try:
        await parts.manager.wait_started()
        if parts.skills is not None:
            await parts.skills.settle()  # MCP skills are listed as servers come up; the first prompt lists them
        for state in parts.manager.states.values():
            if state.status is ServerStatus.FAILED:
                ui.warn(f"MCP server {state.name} failed: {state.error}")
        outcome = await parts.agent.run(prompt)
    finally:
        await parts.manager.aclose()
    sys.stdout.write(outcome.text.rstrip("\n") + "\n")
    sys.stdout.flush()
    if outcome.stop == "max_turns":
        ui.warn(f"stopped after --max-turns {opts.max_turns} turns")
        return 1
    return 0


def run_interactive(args: argparse.Namespace) -> int:
    if not sys.stdin.isatty():
        sys.stderr.write("mini-claude: the interactive REPL needs a terminal on stdin; "
                         "for scripts use -p \"prompt\" (or pipe the prompt into -p)\n")
        return 2
    from mini_claude.cli.repl import Repl

    return asyncio.run(Repl(args).run())


async def start_interactive_session(args: argparse.Namespace, ui: TerminalUI, ask_server: Any,
                                    ask_permission: Any, on_server_change: Any) -> SessionParts:
    from mini_claude.models.factory import create_model

    cwd = Path.cwd()
    env = build_env(cwd)
    opts = options_from_args(args, cwd)
    settings = load_session_settings(cwd, env)
    config = load_servers(opts, env)
    report_config_problems(ui, settings, config)
    model = create_model(opts.model or settings.model, env)
    held = await resolve_approvals(config, settings, cwd=cwd, env=env, trust_all=opts.trust_project_mcp,
                                   ask=ask_server)
    parts = build_session(opts, model=model, env=env, ui=ui, held=held, config=config, settings=settings,
                          ask_permission=ask_permission, on_server_change=on_server_change)
    report_rule_problems(ui, parts.gate.rules)
    parts.manager.start()
    return parts
