"""Project-server approval: fingerprints, the store (round trip, 0600, corrupt file) and every decision branch."""

from __future__ import annotations

import dataclasses
import json
import stat
from pathlib import Path

import pytest

from mini_claude.mcp.approval import (
    APPROVALS_FILE_NAME,
    ApprovalStore,
    approval_hint,
    approval_state,
    server_fingerprint,
)
from mini_claude.mcp.config import ServerConfig

DB = ServerConfig(name="db", type="stdio", command="db-server", args=("--port", "5432"), env={"TOKEN": "s1"},
                  headers={}, scope="project", source=".mcp.json")


def test_fingerprint_changes_with_what_runs() -> None:
    base = server_fingerprint(DB)
    assert len(base) == 64
    changed = [
        dataclasses.replace(DB, command="evil"),
        dataclasses.replace(DB, args=("--port", "5433")),
        dataclasses.replace(DB, cwd="/tmp"),
        dataclasses.replace(DB, type="http", url="http://x"),
        dataclasses.replace(DB, env={"TOKEN": "s1", "LD_PRELOAD": "x"}),
        dataclasses.replace(DB, env={"OTHER": "s1"}),
        dataclasses.replace(DB, headers={"Authorization": "x"}),
    ]
    fingerprints = {server_fingerprint(c) for c in changed}
    assert base not in fingerprints
    assert len(fingerprints) == len(changed)
    http = dataclasses.replace(DB, type="http", command=None, args=(), url="http://a")
    assert server_fingerprint(http) != server_fingerprint(dataclasses.replace(http, url="http://b"))


def test_fingerprint_ignores_values_of_env_and_headers() -> None:
    assert server_fingerprint(dataclasses.replace(DB, env={"TOKEN": "rotated"})) == server_fingerprint(DB)
    with_header = dataclasses.replace(DB, headers={"Authorization": "a"})
    assert server_fingerprint(dataclasses.replace(DB, headers={"Authorization": "b"})) == server_fingerprint(
        with_header)
    # source, raw and name of the file do not matter either
    assert server_fingerprint(dataclasses.replace(DB, raw={"x": 1}, source="other")) == server_fingerprint(DB)


def test_store_round_trip_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "state" / APPROVALS_FILE_NAME
    store = ApprovalStore(path)
    project = tmp_path / "proj"
    project.mkdir()
    assert store.lookup(project, DB) is None
    store.record(project, DB, "approved")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ApprovalStore(path).lookup(project, DB) == "approved"
    data = json.loads(path.read_text())
    assert data == {str(project.resolve()): {"db": {"decision": "approved", "fingerprint": server_fingerprint(DB)}}}
    store.record(project, DB, "denied")
    assert ApprovalStore(path).lookup(project, DB) == "denied"
    # another project, same server name: not decided
    assert store.lookup(tmp_path, DB) is None
    assert not list(path.parent.glob("*.tmp"))


def test_changed_entry_asks_again(tmp_path: Path) -> None:
    store = ApprovalStore(tmp_path / "a.json")
    store.record(tmp_path, DB, "approved")
    assert store.lookup(tmp_path, dataclasses.replace(DB, args=("--evil",))) is None
    assert store.lookup(tmp_path, dataclasses.replace(DB, env={"TOKEN": "new value"})) == "approved"


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '"x"', "\xff\xfe"])
def test_corrupt_store_is_empty_with_a_warning(tmp_path: Path, content: str, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(content.encode("latin-1"))
    store = ApprovalStore(path)
    assert store.lookup(tmp_path, DB) is None
    assert len(store.warnings) == 1
    assert str(path) in store.warnings[0]
    assert "treating it as empty" in store.warnings[0]
    # recording replaces the unreadable file with a good one
    store.record(tmp_path, DB, "approved")
    assert ApprovalStore(path).lookup(tmp_path, DB) == "approved"


def test_malformed_records_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    key = str(tmp_path.resolve())
    path.write_text(json.dumps({key: {"db": {"decision": "maybe", "fingerprint": server_fingerprint(DB)}},
                                "other": 3}))
    assert ApprovalStore(path).lookup(tmp_path, DB) is None


def test_default_store_lives_in_the_state_dir(tmp_path: Path) -> None:
    store = ApprovalStore.default({"MINI_CLAUDE_STATE_DIR": str(tmp_path / "st")})
    assert store.path == tmp_path / "st" / APPROVALS_FILE_NAME


def _state(cfg: ServerConfig, store: ApprovalStore, project: Path, *, settings: dict | None = None,
           trust_all: bool = False) -> str:
    return approval_state(cfg, project=project, store=store, user_settings=settings or {}, trust_all=trust_all)


def test_approval_state_branches(tmp_path: Path) -> None:
    store = ApprovalStore(tmp_path / "a.json")
    for scope in ("user", "local", "cli"):
        assert _state(dataclasses.replace(DB, scope=scope), store, tmp_path) == "approved"
    assert _state(DB, store, tmp_path) == "ask"
    assert _state(DB, store, tmp_path, trust_all=True) == "approved"
    assert _state(DB, store, tmp_path, settings={"enableAllProjectMcpServers": True}) == "approved"
    assert _state(DB, store, tmp_path, settings={"enableAllProjectMcpServers": "yes"}) == "ask"
    assert _state(DB, store, tmp_path, settings={"enabledMcpjsonServers": ["x", "db"]}) == "approved"
    assert _state(DB, store, tmp_path, settings={"disabledMcpjsonServers": ["db"]}) == "denied"
    assert _state(DB, store, tmp_path, settings={"enabledMcpjsonServers": "db"}) == "ask"  # not a list
    store.record(tmp_path, DB, "denied")
    assert _state(DB, store, tmp_path) == "denied"
    store.record(tmp_path, DB, "approved")
    assert _state(DB, store, tmp_path) == "approved"
    # the user's disabled list beats a remembered approval
    assert _state(DB, store, tmp_path, settings={"disabledMcpjsonServers": ["db"]}) == "denied"


def test_record_rejects_unknown_decisions(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        ApprovalStore(tmp_path / "a.json").record(tmp_path, DB, "maybe")  # type: ignore[arg-type]


def test_approval_hint() -> None:
    assert approval_hint("db") == (
        'project MCP server "db" (.mcp.json) needs approval: run mini-claude interactively to approve it, or set '
        '"enabledMcpjsonServers": ["db"] (or "enableAllProjectMcpServers": true) in ~/.claude/settings.json, '
        "or pass --trust-project-mcp")
    assert approval_hint("web", source=".claude/settings.json").startswith(
        'project MCP server "web" (.claude/settings.json) needs approval')
