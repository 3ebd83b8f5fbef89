"""`mini-claude doctor [--json] [--timeout S] [--mcp-config …] [--strict-mcp-config] [--trust-project-mcp]` and the
REPL's `/doctor`: one report of what a session here runs on, each problem with its fix.

Sections: install (versions, optional programs, the state folder: setup.py), keys (the credential in force, named
never shown; the endpoint; the model), settings files, memory files and MCP config files (files.py), the OS
sandbox (sandbox.py), MCP servers (`mcp doctor`'s diagnosis: servers.py); rows.py is their shape. Everything is
looked at as `session.start_session` would see it (the real environment, the folder's trust, the settings trust
lets apply), asking nobody and never starting a project server that is not approved.

`doctor_report` writes the report to `out` (text through `render.clean`, or one JSON object) and returns the exit
code: 0 when no problem was found, 1 otherwise. Given a running session's `SessionParts`, it reads that session's
settings layer, trust and live servers instead of trying the servers anew.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TextIO

from mini_claude.cli.doctor.files import mcp_config_section, memory_section, settings_section
from mini_claude.cli.doctor.rows import Report, Scene, Section
from mini_claude.cli.doctor.sandbox import sandbox_section
from mini_claude.cli.doctor.servers import servers_from_config, servers_from_session
from mini_claude.cli.doctor.setup import install_section, keys_section
from mini_claude.cli.mcp.world import host_for, project_view
from mini_claude.cli.terminal.arg_types import seconds
from mini_claude.cli.terminal.exit_codes import EXIT_ERROR, EXIT_OK
from mini_claude.errors import MiniClaudeError
from mini_claude.mcp.manager import ServerStatus
from mini_claude.paths import state_dir, user_home
from mini_claude.session.start import SessionParts, build_env, read_project_dotenv
from mini_claude.settings import load_settings
from mini_claude.settings_trust import without_project_widening
from mini_claude.trust import TrustState, check_trust

__all__ = ["PROBE_TIMEOUT_S", "doctor_report", "main"]

PROBE_TIMEOUT_S = 10.0  # each server's probe, as `mcp doctor`


async def doctor_report(parts: SessionParts | None = None, *, out: TextIO, as_json: bool = False,
                        timeout_s: float = PROBE_TIMEOUT_S, mcp_config: Sequence[str] = (),
                        strict_mcp_config: bool = False, trust_project_mcp: bool = False) -> int:
    """Check everything and write the report to `out`; 0 when healthy, 1 when a problem was found.

    `parts`: the running session (the REPL's `/doctor`): its settings layer, trust, MCP config and live servers
    are used (a failed server is tried again for its cause). Without it (`mini-claude doctor`) the folder is
    looked at as a new session would see it, the `mcp_config` / `strict_mcp_config` / `trust_project_mcp` flags
    meaning what they mean there, and each server a session would start is tried (`timeout_s` each)."""
    cwd = parts.agent.ctx.cwd if parts is not None else Path.cwd()
    scene = _scene(cwd, parts)
    servers: Awaitable[tuple[Section, list[dict[str, object]]]]
    held: dict[str, tuple[ServerStatus, str]]
    if parts is not None:
        config = parts.config
        held = {s.name: (s.status, s.error or "") for s in parts.manager.states.values()
                if s.status in (ServerStatus.NEEDS_APPROVAL, ServerStatus.DISABLED)}
        host = parts.host
        servers = servers_from_session(parts.manager, env=parts.env, setup=host.setup if host else None,
                                       timeout_s=timeout_s, log_dir=scene.state / "mcp-logs")
    else:
        view = await project_view(mcp_config=list(mcp_config), strict=strict_mcp_config,
                                  trust_project_mcp=trust_project_mcp, warn=False)
        config, held = view.config, view.held
        world_host = host_for(view)
        servers = servers_from_config(view.config.servers, view.held, env=view.env, setup=world_host.setup,
                                      timeout_s=timeout_s, log_dir=state_dir(view.env) / "mcp-logs",
                                      stderr_sink=world_host.logs.stderr_sink)
    install, (server_section, records), sandbox = await asyncio.gather(install_section(scene), servers,
                                                                       sandbox_section(scene, parts))
    report = Report(sections=[install, _guarded("keys", "Keys", lambda: keys_section(scene)),
                              _guarded("settings", "Settings", lambda: settings_section(scene)),
                              _guarded("memory", "Memory files", lambda: memory_section(scene)),
                              _guarded("mcp-config", "MCP config files",
                                       lambda: mcp_config_section(scene, config, held)),
                              sandbox, server_section],
                    servers=records)
    report.write(out, as_json=as_json)
    out.flush()
    return EXIT_OK if report.ok else EXIT_ERROR


def _scene(cwd: Path, parts: SessionParts | None) -> Scene:
    env = build_env(cwd)  # the real environment: the state folder, home and trust come from it
    home, state = user_home(env), state_dir(env)
    flag = None
    if parts is not None and parts.settings.flag:
        flag = (parts.settings.flag_display, parts.settings.flag)
    settings = load_settings(cwd=cwd, home=home, flag=flag)
    trust = check_trust(cwd, home=home, state=state)
    if parts is not None and parts.trusted != trust.trusted:  # --trust, or an answer in this session
        trust = TrustState(trust.folder, parts.trusted, "for this session" if parts.trusted else "")
    effective, ignored = (settings, []) if trust.trusted else without_project_widening(settings)
    return Scene(cwd=cwd, env=env, home=home, state=state, settings=settings, effective=effective, ignored=ignored,
                 trust=trust, dotenv=read_project_dotenv(cwd, home))


def _guarded(name: str, title: str, check: Callable[[], Section]) -> Section:
    """A check that fails on something unexpected is a problem of the report, never a traceback."""
    try:
        return check()
    except (MiniClaudeError, OSError, ValueError) as exc:
        section = Section(name, title)
        section.add("check", "could not be completed").problem(
            "check-failed", f"this check failed: {exc}", "run with --debug and report it")
        return section


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mini-claude doctor",
        description="Check what a session in this folder runs on: the install, the model credential (named, never "
                    "shown), the settings, memory and MCP config files (what each contributes, what an untrusted "
                    "folder's files have ignored), and each MCP server (tried as `mini-claude mcp doctor` tries it; "
                    "a project server not approved is reported, not started). Every problem comes with its fix.",
        epilog="Exit codes: 0 no problem found; 1 a problem was found; 2 bad usage.")
    parser.add_argument("--json", action="store_true", help="one JSON object for scripts")
    parser.add_argument("--timeout", type=seconds, default=PROBE_TIMEOUT_S, metavar="SECONDS",
                        help=f"how long each server's probe may take (default {PROBE_TIMEOUT_S:g})")
    parser.add_argument("--mcp-config", nargs="+", action="extend", default=[], metavar="FILE_OR_JSON",
                        help="extra MCP servers, as for a session")
    parser.add_argument("--strict-mcp-config", action="store_true", help="only the --mcp-config servers")
    parser.add_argument("--trust-project-mcp", action="store_true",
                        help="try the project's servers (.mcp.json) even when not approved")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs on stderr")
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    from mini_claude.cli.terminal.render import setup_logging

    setup_logging(debug=args.debug)
    return asyncio.run(doctor_report(out=sys.stdout, as_json=args.json, timeout_s=args.timeout,
                                     mcp_config=args.mcp_config, strict_mcp_config=args.strict_mcp_config,
                                     trust_project_mcp=args.trust_project_mcp))
