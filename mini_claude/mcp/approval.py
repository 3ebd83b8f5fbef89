"""Approval of project-level MCP servers: a server defined in a repository's `.mcp.json` (or
`.claude/settings.json`) runs a command of that repository's choosing, so it never starts until the user says so.

Decisions are remembered per project directory in `<state dir>/project-mcp-approvals.json` (mode 0600, replaced
atomically) together with a digest of each part of the entry that decides what runs or where data goes: type,
command, args, cwd, url, each env variable (name and value), each header (name and value), headersHelper and
oauth. Any change asks again, and `PriorDecision.changes` says what changed ("its headersHelper was added",
"env PYTHONPATH changed"). Only digests are stored, never values: env and header values are often secrets.
A record from before the per-part digests (a single "fingerprint") counts as changed: it is asked again.
Claude Code's user-settings keys `enableAllProjectMcpServers`, `enabledMcpjsonServers` and
`disabledMcpjsonServers` are honoured as well.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

from mini_claude.mcp.config import ServerConfig
from mini_claude.paths import state_dir
from mini_claude.statefile import read_state

__all__ = [
    "APPROVALS_FILE_NAME",
    "ApprovalState",
    "ApprovalStore",
    "Decision",
    "PriorDecision",
    "approval_hint",
    "approval_state",
    "describe_changes",
    "fingerprint_fields",
    "server_fingerprint",
]

log = logging.getLogger(__name__)

APPROVALS_FILE_NAME = "project-mcp-approvals.json"
# one record per (project folder, server name) the user decided on: far below this; a bigger file is set aside
MAX_APPROVALS_BYTES = 4 * 1024 * 1024

Decision = Literal["approved", "denied"]
ApprovalState = Literal["approved", "denied", "ask"]
_DECISIONS = ("approved", "denied")

# Salt of every digest: a stored digest is of this tool, this server and this part, never a bare value (so a
# table of precomputed hashes of common values does not read the file).
_DIGEST_DOMAIN = "mini-claude project-mcp approval v2"
# The whole-value parts, in the order changes are reported; env and headers follow, one entry per name.
_SCALAR_PARTS = ("type", "command", "args", "cwd", "url", "headersHelper", "oauth")
_MAP_PARTS = (("env", "env"), ("headers", "header"))  # (key in the record, word in a change)
_LEGACY_CHANGE = ("the decision was made by an older mini-claude, which did not check env values, headers, "
                  "headersHelper or oauth")
_PLAIN_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")

# {part: digest} for the scalar parts, {"env": {name: digest}, "headers": {name: digest}} for the maps.
Fields = dict[str, Any]


class PriorDecision(NamedTuple):
    """What the user decided for a server of this name in this project, and what changed since (empty: the
    decision covers the entry as it is now)."""

    decision: Decision
    changes: tuple[str, ...]


def _digest(cfg: ServerConfig, part: str, value: Any) -> str:
    text = json.dumps([_DIGEST_DOMAIN, cfg.name, part, value], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def fingerprint_fields(cfg: ServerConfig) -> Fields:
    """A digest of each part of `cfg` that decides what runs or where data goes (parts that are absent are left
    out, so adding one reads as "added"). Values are the expanded ones: what would actually run."""
    scalars: dict[str, Any] = {
        "type": cfg.type,
        "command": cfg.command,
        "args": list(cfg.args),
        "cwd": cfg.cwd,
        "url": cfg.url,
        "headersHelper": cfg.headers_helper,
        "oauth": cfg.oauth or None,
    }
    fields: Fields = {part: _digest(cfg, part, value) for part, value in scalars.items() if value is not None}
    fields["env"] = {name: _digest(cfg, f"env:{name}", value) for name, value in cfg.env.items()}
    fields["headers"] = {name: _digest(cfg, f"header:{name}", value) for name, value in cfg.headers.items()}
    return fields


def server_fingerprint(cfg: ServerConfig) -> str:
    """sha256 (hex) over `fingerprint_fields(cfg)`: equal exactly when every part that matters is equal."""
    text = json.dumps(fingerprint_fields(cfg), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _shown_name(name: str) -> str:
    # env and header names are the repository's text: quoted (ASCII-escaped) unless plainly a name
    return name if _PLAIN_NAME_RE.match(name) else json.dumps(name)


def describe_changes(before: Fields, after: Fields) -> list[str]:
    """What differs between two `fingerprint_fields` results, one phrase each, in a fixed order:
    "its command changed", "headersHelper was added", "env PYTHONPATH was added", "header X-Key was removed"."""
    changes: list[str] = []
    for part in _SCALAR_PARTS:
        old, new = before.get(part), after.get(part)
        if old == new:
            continue
        changes.append(f"{part} was added" if old is None else f"{part} was removed" if new is None
                       else f"its {part} changed")
    for part, word in _MAP_PARTS:
        old_map, new_map = _digest_map(before.get(part)), _digest_map(after.get(part))
        for name in sorted(old_map.keys() | new_map.keys()):
            old, new = old_map.get(name), new_map.get(name)
            if old == new:
                continue
            verb = "was added" if old is None else "was removed" if new is None else "changed"
            changes.append(f"{word} {_shown_name(name)} {verb}")
    return changes


def _digest_map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _project_key(project: Path) -> str:
    try:
        return str(project.resolve())
    except OSError:
        return str(project.absolute())


class ApprovalStore:
    """The remembered decisions: {abs project dir: {server name: {"decision": ..., "fingerprint": ...}}}.

    A missing file is empty. A corrupt file (or one over `MAX_APPROVALS_BYTES`) is set aside (`<name>.bad`) and
    treated as empty, with a warning in `warnings` and the log; the store never raises on reading. Writes are
    atomic (temp file + rename) and the file is 0600. Bounded by the folders and servers the user decided on;
    `prune` forgets folders that no longer exist.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.warnings: list[str] = []

    @classmethod
    def default(cls, env: Mapping[str, str] | None = None) -> ApprovalStore:
        """The store in the user's state directory (`paths.state_dir`)."""
        return cls(state_dir(env) / APPROVALS_FILE_NAME)

    def _read(self) -> dict[str, dict[str, Any]]:
        data = read_state(self.path, what="project MCP approvals", max_bytes=MAX_APPROVALS_BYTES, version=1,
                          afresh="treating it as empty", warnings=self.warnings)
        # Drop malformed parts one by one rather than the whole file.
        return {k: v for k, v in (data or {}).items() if isinstance(v, dict)}

    def prune(self) -> int:
        """Forget the decisions of project folders that no longer exist (run by the daily state sweep); how many
        folders were forgotten. Never raises."""
        data = self._read()
        gone = [project for project in data if not os.path.isdir(project)]
        for project in gone:
            del data[project]
        if gone:
            try:
                self._write(data)
            except OSError as exc:
                log.warning("could not save %s: %s", self.path, exc)
                return 0
        return len(gone)

    def prior(self, project: Path, cfg: ServerConfig) -> PriorDecision | None:
        """The remembered decision for a server named `cfg.name` in `project` and what changed since (None:
        never decided). A record without per-part digests (the older format) has one change saying so."""
        record = self._read().get(_project_key(project), {}).get(cfg.name)
        if not isinstance(record, dict) or record.get("decision") not in _DECISIONS:
            return None
        decision: Decision = "approved" if record["decision"] == "approved" else "denied"
        fields = record.get("fields")
        if not isinstance(fields, dict):
            return PriorDecision(decision, (_LEGACY_CHANGE,))
        return PriorDecision(decision, tuple(describe_changes(fields, fingerprint_fields(cfg))))

    def lookup(self, project: Path, cfg: ServerConfig) -> Decision | None:
        """The remembered decision for `cfg` in `project`, or None: never decided, or decided for an entry
        that differs from `cfg` in any part that matters."""
        prior = self.prior(project, cfg)
        return prior.decision if prior is not None and not prior.changes else None

    def record(self, project: Path, cfg: ServerConfig, decision: Decision) -> None:
        """Remember `decision` for `cfg` (with the digests of its parts) in `project`."""
        if decision not in _DECISIONS:
            raise ValueError(f"decision must be 'approved' or 'denied', not {decision!r}")
        data = self._read()  # re-read: another session may have recorded something since
        data.setdefault(_project_key(project), {})[cfg.name] = {
            "decision": decision,
            "fields": fingerprint_fields(cfg),
        }
        self._write(data)

    def reset(self, project: Path, names: list[str] | None = None) -> list[str]:
        """Forget the decisions made in `project` (all, or those of `names`): those servers are asked about
        again (Claude Code's `mcp reset-project-choices`). Returns the names forgotten, sorted."""
        data = self._read()
        key = _project_key(project)
        decided = data.get(key, {})
        gone = sorted(name for name in decided if names is None or name in names)
        if not gone:
            return []
        for name in gone:
            del decided[name]
        if not decided:
            del data[key]
        self._write(data)
        return gone

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


def approval_hint(cfg: ServerConfig, prior: PriorDecision | None = None) -> str:
    """The one line shown when a project server is held back in a non-interactive run: the file it came from,
    and what changed when an earlier decision no longer covers it (`prior`, from `ApprovalStore.prior`)."""
    quoted = json.dumps(cfg.name, ensure_ascii=False)
    what = f"project MCP server {quoted} ({cfg.source})"
    if prior is not None and prior.changes:
        state = f"changed since it was {prior.decision} ({'; '.join(prior.changes)}) and needs approval again"
    else:
        state = "needs approval"
    return (f"{what} {state}: run mini-claude interactively to approve it, or set "
            f'"enabledMcpjsonServers": [{quoted}] (or "enableAllProjectMcpServers": true) in '
            f"~/.claude/settings.json, or pass --trust-project-mcp")
