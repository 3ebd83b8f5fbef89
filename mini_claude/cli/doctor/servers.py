"""The doctor's servers section, by `mcp doctor`'s own diagnosis (`mini_claude.mcp.doctor.diagnose`).

Without a session (`mini-claude doctor`): every configured server a session here would start is tried as `mcp
doctor` tries it; a project server not approved is reported as such and never started; one switched off (disabled,
denied) is a note, not a problem. With a running session (`/doctor`): its servers' live states are read; only a
failed one is tried again, to find its cause and fix. Each row carries the diagnosis's problems; `--json` gets the
diagnoses whole.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mini_claude.cli.doctor.rows import Row, Section
from mini_claude.cli.terminal.status import LOGIN_HINT, server_line
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.doctor import ClientSetup, Diagnosis, apply_names, diagnose
from mini_claude.mcp.host.server_log import log_file_name
from mini_claude.mcp.manager import McpManager, ServerStatus

__all__ = ["servers_from_config", "servers_from_session"]

STDERR_LINES = 3
StderrSink = Callable[[str], Callable[[bytes], None]]


async def servers_from_config(servers: Mapping[str, ServerConfig], held: Mapping[str, tuple[ServerStatus, str]], *,
                              env: Mapping[str, str], setup: ClientSetup | None, timeout_s: float, log_dir: Path,
                              stderr_sink: StderrSink | None = None) -> tuple[Section, list[dict[str, Any]]]:
    """Try each server a session would start (never a held one); the section and `mcp doctor --json`'s records."""
    section = Section("servers", "MCP servers")
    off = {name: _switched_off(cfg, held) for name, cfg in servers.items()}
    tried = [cfg for name, cfg in servers.items() if off[name] is None]
    diagnoses = list(await asyncio.gather(*(
        diagnose(cfg, env, held=held[cfg.name][1] if cfg.name in held else None, setup=setup, timeout_s=timeout_s,
                 log_file=log_dir / log_file_name(cfg.name),
                 keep_stderr=stderr_sink(cfg.name) if stderr_sink is not None else None)
        for cfg in tried)))
    apply_names(diagnoses)
    by_name = {d.server: d for d in diagnoses}
    records: list[dict[str, Any]] = []
    for name, cfg in servers.items():
        reason = off[name]
        if reason is not None:
            section.add(name, f"switched off ({cfg.source})", status="disabled", source=cfg.source).note(reason)
            records.append({"server": name, "type": cfg.type, "source": cfg.source, "status": "disabled",
                            "reason": reason, "ok": True, "problems": []})
            continue
        diag = by_name[name]
        _diagnosis_row(section, diag)
        records.append(diag.to_json())
    return section, records


async def servers_from_session(manager: McpManager, *, env: Mapping[str, str], setup: ClientSetup | None,
                               timeout_s: float, log_dir: Path) -> tuple[Section, list[dict[str, Any]]]:
    """The running session's servers as they are; a failed one tried again for its cause."""
    section = Section("servers", "MCP servers")
    records: list[dict[str, Any]] = []
    failed = [s.config for s in manager.states.values() if s.status is ServerStatus.FAILED]
    found = await asyncio.gather(*(diagnose(cfg, env, held=None, setup=setup, timeout_s=timeout_s,
                                            log_file=log_dir / log_file_name(cfg.name)) for cfg in failed))
    diagnoses = {d.server: d for d in found}
    for state in manager.states.values():
        record: dict[str, Any] = {"server": state.name, "type": state.config.type, "source": state.config.source,
                                  "status": state.status.value}
        line = server_line(state).removeprefix(f"{state.name}: ")
        row = section.add(state.name, f"{line} ({state.config.source})", status=state.status.value,
                          source=state.config.source)
        status = state.status
        if status is ServerStatus.FAILED:
            diag = diagnoses[state.name]
            for problem in diag.problems:
                row.problem(problem.code, problem.cause, problem.fix)
            _stderr_notes(row, diag)
            if diag.ok:  # it works when tried now: the failure was passing
                row.problem("failed", f"it failed in this session: {state.error or 'no reason given'}; tried "
                                      f"again now, it works", f"/mcp reconnect {state.name}")
            record["diagnosis"] = diag.to_json()
        elif status is ServerStatus.NEEDS_AUTH:
            row.problem("needs-login", state.error or "the server needs an OAuth login",
                        f"/mcp login {state.name} (or {LOGIN_HINT.format(name=state.name)})")
        elif status is ServerStatus.NEEDS_APPROVAL:
            row.problem("held", state.error or "waiting for approval", "approve it as the cause says")
        elif status is ServerStatus.DISABLED and state.error:
            row.note(state.error)
        elif status is ServerStatus.READY and state.lost is not None:
            row.note(f"connection lost: {state.lost} (the next call reconnects)")
        record.update(ok=row.ok, problems=[{"code": p.code, "cause": p.cause, "fix": p.fix} for p in row.problems])
        records.append(record)
    return section, records


def _switched_off(cfg: ServerConfig, held: Mapping[str, tuple[ServerStatus, str]]) -> str | None:
    """Why the user switched this server off (a choice, not a fault), or None."""
    if cfg.disabled:
        return f'"disabled": true in {cfg.source}'
    if cfg.name in held and held[cfg.name][0] is ServerStatus.DISABLED:
        return held[cfg.name][1]
    return None


def _diagnosis_row(section: Section, diag: Diagnosis) -> Row:
    if diag.held is not None:
        text = f"not started: awaiting approval ({diag.source})"
    elif diag.ready_s is not None:
        text = (f"ready in {diag.ready_s:.2f}s · {len(diag.tools)} tool{'s' * (len(diag.tools) != 1)} · "
                f"{diag.type} ({diag.source})")
    else:
        text = f"did not start · {diag.type} ({diag.source})"
    row = section.add(diag.server, text, type=diag.type, source=diag.source, ready_s=diag.ready_s,
                      tools=len(diag.tools))
    for problem in diag.problems:
        row.problem(problem.code, problem.cause, problem.fix)
    if diag.problems:
        _stderr_notes(row, diag)
        if diag.held is None:
            row.note(f"the whole diagnosis: mini-claude mcp doctor {diag.server}")
    return row


def _stderr_notes(row: Row, diag: Diagnosis) -> None:
    tail = [line for line in diag.stderr_tail.splitlines() if line.strip()][-STDERR_LINES:]
    for line in tail:
        row.note(f"stderr: {line[:200]}")
