"""Approval of project-level MCP servers: a server defined in a repository's `.mcp.json` (or
`.claude/settings.json`) runs a command of that repository's choosing, so it never starts until the user says so.

Decisions are remembered per project directory in `<state dir>/project-mcp-approvals.json` (mode 0600) together
with the server's fingerprint; when the entry changes (another command, args, URL, env or header names) the
fingerprint changes and the user is asked again. Claude Code's user-settings keys `enableAllProjectMcpServers`,
`enabledMcpjsonServers` and `disabledMcpjsonServers` are honoured as well.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from mini_claude.mcp.config import ServerConfig
from mini_claude.paths import state_dir

__all__ = [
    "APPROVALS_FILE_NAME",
    "ApprovalState",
    "ApprovalStore",
    "Decision",
    "approval_hint",
    "approval_state",
    "server_fingerprint",
]

log = logging.getLogger(__name__)

APPROVALS_FILE_NAME = "project-mcp-approvals.json"

Decision = Literal["approved", "denied"]
ApprovalState = Literal["approved", "denied", "ask"]
_DECISIONS = ("approved", "denied")


def server_fingerprint(cfg: ServerConfig) -> str:
    """sha256 (hex) of what decides what a server runs or talks to: type, command, args, cwd, url, and the
    sorted names (not values: rotating a token must not re-ask) of its env variables and headers."""
    material = {
        "type": cfg.type,
        "command": cfg.command,
        "args": list(cfg.args),
        "cwd": cfg.cwd,
        "url": cfg.url,
        "env_keys": sorted(cfg.env),
        "header_keys": sorted(cfg.headers),
    }
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _project_key(project: Path) -> str:
    try:
        return str(project.resolve())
    except OSError:
        return str(project.absolute())


class ApprovalStore:
    """The remembered decisions: {abs project dir: {server name: {"decision": ..., "fingerprint": ...}}}.

    A missing file is empty. A corrupt file is treated as empty, with a warning in `warnings` and the log;
    the store never raises on reading. Writes are atomic (temp file + rename) and the file is 0600.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.warnings: list[str] = []

    @classmethod
    def default(cls, env: Mapping[str, str] | None = None) -> ApprovalStore:
        """The store in the user's state directory (`paths.state_dir`)."""
        return cls(state_dir(env) / APPROVALS_FILE_NAME)

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            self._warn(f"cannot read {self.path} ({exc}); treating it as empty")
            return {}
        try:
            data = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            self._warn(f"{self.path} is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); "
                       f"treating it as empty")
            return {}
        if not isinstance(data, dict):
            self._warn(f"{self.path} does not hold a JSON object; treating it as empty")
            return {}
        # Drop malformed parts one by one rather than the whole file.
        return {k: v for k, v in data.items() if isinstance(v, dict)}

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            log.warning("%s", message)

    def lookup(self, project: Path, cfg: ServerConfig) -> Decision | None:
        """The remembered decision for `cfg` in `project`, or None: never decided, or decided for an entry
        whose fingerprint differs from `cfg`'s now."""
        record = self._read().get(_project_key(project), {}).get(cfg.name)
        if not isinstance(record, dict) or record.get("fingerprint") != server_fingerprint(cfg):
            return None
        decision = record.get("decision")
        return decision if decision in _DECISIONS else None

    def record(self, project: Path, cfg: ServerConfig, decision: Decision) -> None:
        """Remember `decision` for `cfg` (with its current fingerprint) in `project`."""
        if decision not in _DECISIONS:
            raise ValueError(f"decision must be 'approved' or 'denied', not {decision!r}")
        data = self._read()  # re-read: another session may have recorded something since
        data.setdefault(_project_key(project), {})[cfg.name] = {
            "decision": decision,
            "fingerprint": server_fingerprint(cfg),
        }
        self._write(data)

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")  # 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2, sort_keys=True, ensure_ascii=False)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _names(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def approval_state(
    cfg: ServerConfig,
    *,
    project: Path,
    store: ApprovalStore,
    user_settings: Mapping[str, Any],
    trust_all: bool,
) -> ApprovalState:
    """May `cfg` start? Checked in this order, the first that applies wins:

    not a project-scope server → "approved"; `trust_all` (--trust-project-mcp) → "approved"; user setting
    `"enableAllProjectMcpServers": true` → "approved"; name in `enabledMcpjsonServers` → "approved"; name in
    `disabledMcpjsonServers` → "denied"; the store's decision for this fingerprint; otherwise "ask".

    `user_settings` must come from the user's own settings (~/.claude/settings.json), never from a project
    file: a repository must not be able to approve its own servers.
    """
    if not cfg.needs_project_approval():
        return "approved"
    if trust_all:
        return "approved"
    if user_settings.get("enableAllProjectMcpServers") is True:
        return "approved"
    if cfg.name in _names(user_settings.get("enabledMcpjsonServers")):
        return "approved"
    if cfg.name in _names(user_settings.get("disabledMcpjsonServers")):
        return "denied"
    decision = store.lookup(project, cfg)
    return decision if decision is not None else "ask"


def approval_hint(name: str, source: str = ".mcp.json") -> str:
    """The one line shown when a project server is held back in a non-interactive run."""
    quoted = json.dumps(name, ensure_ascii=False)
    return (f"project MCP server {quoted} ({source}) needs approval: run mini-claude interactively to approve "
            f'it, or set "enabledMcpjsonServers": [{quoted}] (or "enableAllProjectMcpServers": true) in '
            f"~/.claude/settings.json, or pass --trust-project-mcp")
