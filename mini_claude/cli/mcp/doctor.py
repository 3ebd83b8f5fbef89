"""`mini-claude mcp doctor [NAME] [--json] [--call TOOL [JSON_ARGS]] [--timeout S]`: try each configured server as a
session here would (same config discovery, trust, approvals and host capabilities; `world.project_view`) and
print, per server, what was found and each problem with its fix (`mini_claude.mcp.doctor` finds them). Then the MCP
switches of every settings scope (`mini_claude.mcp.switch_doctor`): a problem about a diagnosed server joins its
report (a `disabledMcpTools` entry naming a tool the server, reached, does not offer); the others are shown per
settings file (with `--json`: an entry `{"server": null, "type": "settings", "source": FILE, "problems": …}` each).
Exit 0 when there is no problem, 1 otherwise. Every piece of server text goes through `clean`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from mini_claude.cli.mcp.world import ProjectView, host_for, project_view
from mini_claude.cli.terminal.render import clean, json_text
from mini_claude.errors import ConfigError
from mini_claude.mcp.doctor import Diagnosis, Problem, apply_names, diagnose
from mini_claude.mcp.host.server_log import log_file_name
from mini_claude.mcp.switch_doctor import SwitchFile, SwitchProblem, check_offered, check_switches
from mini_claude.paths import state_dir, user_home

__all__ = ["doctor_command", "print_diagnosis"]

STDERR_LINES = 8


async def doctor_command(args: argparse.Namespace) -> int:
    view = await project_view(mcp_config=list(args.mcp_config), strict=args.strict_mcp_config,
                              trust_project_mcp=args.trust_project_mcp)
    servers = view.config.servers
    if args.name is not None:
        if args.name not in servers:
            known = ", ".join(sorted(servers)) or "none"
            raise ConfigError(f"no MCP server named {args.name!r} (configured: {known})")
        servers = {args.name: servers[args.name]}
    call = _call_arguments(args.call)
    host = host_for(view)
    logs = state_dir(view.env) / "mcp-logs"
    diagnoses = list(await asyncio.gather(*(
        diagnose(cfg, view.env, held=view.held[cfg.name][1] if cfg.name in view.held else None, setup=host.setup,
                 timeout_s=args.timeout, call=call, log_file=logs / log_file_name(cfg.name),
                 keep_stderr=host.logs.stderr_sink(cfg.name))
        for cfg in servers.values())))
    apply_names(diagnoses)
    by_file, any_switch = _switch_problems(view, diagnoses, only=args.name)
    if args.json:
        print(json_text([*(d.to_json() for d in diagnoses),
                         *({"server": None, "type": "settings", "source": file, "ok": False,
                            "problems": [{"code": p.code, "cause": p.cause, "fix": p.fix} for p in problems]}
                           for file, problems in by_file.items())], indent=2))
    else:
        if not diagnoses:
            print("No MCP servers configured. Add one with: mini-claude mcp add NAME -- COMMAND [ARGS…]")
        for diag in diagnoses:
            print_diagnosis(diag)
        if any_switch:
            _print_switches(by_file)
    return 0 if all(d.ok for d in diagnoses) and not by_file else 1


def _switch_problems(view: ProjectView, diagnoses: list[Diagnosis], *,
                     only: str | None) -> tuple[dict[str, list[SwitchProblem]], bool]:
    """The switch problems of the settings files: those about a diagnosed server join its diagnosis; the rest by
    file (none with `only`, one server asked about). Also whether any file has a switch key at all."""
    from mini_claude.cli.mcp.toggles import all_switch_files
    from mini_claude.jsonfile import read_json_object
    from mini_claude.mcp.config import load_mcp_config
    from mini_claude.mcp.switch_doctor import LIST_KEYS, NOT_KEYS

    home = user_home(view.env)
    files = []
    for file in all_switch_files(view.cwd, home):
        raw = read_json_object(file.path, file.display, []) or {}
        shared = file.scope == "local" and file.path != view.cwd / ".claude" / "settings.local.json"  # the main's
        files.append(SwitchFile("shared-local" if shared else file.scope, file.display, raw))
    everything = dict(load_mcp_config(cwd=view.cwd, home=home, env=view.env).servers)
    everything.update(view.config.servers)
    found = check_switches(files, set(everything), json_servers={n for n, c in everything.items()
                                                                 if c.needs_project_approval()},
                           elsewhere=_other_projects_servers(home), trusted=view.trusted)
    by_server = {d.server: d for d in diagnoses}
    for reached in diagnoses:
        if reached.ready_s is not None and "tools" in reached.capabilities:  # its tools listed
            found += check_offered(files, reached.server, reached.tools)
    by_file: dict[str, list[SwitchProblem]] = {}
    for problem in found:
        about = by_server.get(problem.server) if problem.server is not None else None
        if about is not None:
            about.problems.append(Problem(problem.code, problem.cause, problem.fix))
        elif only is None:
            by_file.setdefault(problem.file, []).append(problem)
    any_switch = any(key in f.raw for f in files for key in (*LIST_KEYS, *NOT_KEYS, "enableAllProjectMcpServers"))
    return by_file, any_switch


def _other_projects_servers(home: Path) -> set[str]:
    """The servers of every project in ~/.claude.json (local scope elsewhere), which the user's file may name."""
    from mini_claude.jsonfile import MAX_CLAUDE_JSON_BYTES, read_json_object
    from mini_claude.mcp.config import CLAUDE_JSON_DISPLAY

    data = read_json_object(home / ".claude.json", CLAUDE_JSON_DISPLAY, [], max_bytes=MAX_CLAUDE_JSON_BYTES) or {}
    projects = data.get("projects")
    names: set[str] = set()
    for project in projects.values() if isinstance(projects, dict) else ():
        servers = project.get("mcpServers") if isinstance(project, dict) else None
        names.update(servers if isinstance(servers, dict) else ())
    return names


def _print_switches(by_file: dict[str, list[SwitchProblem]]) -> None:
    count = sum(len(problems) for problems in by_file.values())
    _line(f"MCP switches in settings  {'✘' if count else '✔'} "
          f"{f'{count} problem' + 's' * (count != 1) if count else 'no problems'}")
    for file, problems in by_file.items():
        _row("file", file)
        for problem in problems:
            _row("problem", problem.cause)
            _row("  fix", problem.fix)
    _line("")


def _call_arguments(words: list[str] | None) -> tuple[str, dict[str, Any]] | None:
    if not words:
        return None
    if len(words) > 2:
        raise ConfigError("--call takes TOOL and at most one JSON object of arguments", key="--call")
    arguments: Any = {}
    if len(words) == 2:
        try:
            arguments = json.loads(words[1])
        except json.JSONDecodeError as exc:
            raise ConfigError(f"JSON_ARGS is not valid JSON: {exc.msg} at column {exc.colno}", key="--call") from exc
    if not isinstance(arguments, dict):
        raise ConfigError("JSON_ARGS must be a JSON object", key="--call")
    return words[0], arguments


def print_diagnosis(diag: Diagnosis) -> None:
    verdict = "no problems" if diag.ok else f"{len(diag.problems)} problem{'s' * (len(diag.problems) != 1)}"
    _line(f"{diag.server}  ({diag.type}, from {diag.source})  {'✔' if diag.ok else '✘'} {verdict}")
    if diag.command:
        found = f" (found: {diag.command_path})" if diag.command_path else ""
        _row("command", f"{diag.command}{found}")
    if diag.held:
        _row("held", diag.held)
    if diag.ready_s is not None or diag.first_reply_s is not None:
        parts = []
        if diag.first_reply_s is not None:
            parts.append(f"first reply {diag.first_reply_s:.2f}s")
        if diag.ready_s is not None:
            parts.append(f"ready {diag.ready_s:.2f}s")
        if diag.protocol_version:
            parts.append(f"protocol {diag.protocol_version} ({diag.era} era)")
        _row("started", " · ".join(parts))
    if diag.server_info or diag.capabilities:
        who = " ".join(str(diag.server_info.get(k, "")) for k in ("name", "version")).strip() or "?"
        _row("server", f"{who} · capabilities: {', '.join(diag.capabilities) or 'none'}")
    if diag.ready_s is not None:
        ping = f" · ping {diag.ping_ms:.1f} ms" if diag.ping_ms is not None else ""
        _row("tools", f"{len(diag.tools)} · ~{diag.definition_tokens} tokens of definitions{ping}")
    if diag.call is not None:
        outcome = "ok" if diag.call.get("ok") else diag.call.get("error") or "an error result"
        _row("call", f"{diag.call['tool']}: {outcome} in {diag.call.get('seconds', 0):g}s")
    for raw, qualified in diag.renamed.items():
        _row("renamed", f"{raw} → {qualified}")
    for name, why in diag.withheld.items():
        _row("withheld", f"{name}: {why}")
    for name, why in diag.rejected.items():
        _row("schema", f"{name}: {why}")
    for line in diag.non_json_stdout[:3]:
        _row("stdout", f"not JSON: {line}")
    for note in diag.protocol_notes[:3]:
        _row("protocol", note)
    if diag.type != "stdio":
        _row("auth", diag.auth)
    if diag.ended:
        _row("ended", diag.ended)
    tail = [line for line in diag.stderr_tail.splitlines() if line.strip()][-STDERR_LINES:]
    for i, line in enumerate(tail):
        _row("stderr" if i == 0 else "", line[:200])
    for problem in diag.problems:
        _row("problem", problem.cause)
        _row("  fix", problem.fix)
    _line("")


def _row(label: str, text: str) -> None:
    _line(f"  {label:<9} {text}")


def _line(text: str) -> None:
    sys.stdout.write(clean(text) + "\n")
