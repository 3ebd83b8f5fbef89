"""The decisions behind workspace trust, without processes: which folder, which file says it is trusted, what the
REPL asks, what an untrusted folder's settings and `.env` still contribute."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.models.factory import model_environment
from mini_claude.session.start import additional_dirs, read_project_dotenv
from mini_claude.settings import load_settings
from mini_claude.settings_trust import without_project_widening
from mini_claude.trust import (
    TrustDecision,
    TrustState,
    TrustStore,
    check_trust,
    decide_trust,
    trust_question,
    untrusted_line,
    workspace_folder,
)


@pytest.mark.parametrize(("trusted", "flag", "can_ask", "widening", "expected"), [
    (True, False, True, True, TrustDecision.TRUSTED),
    (True, True, False, False, TrustDecision.TRUSTED),  # --trust on a trusted folder rewrites nothing
    (False, True, False, False, TrustDecision.REMEMBER),
    (False, True, True, True, TrustDecision.REMEMBER),  # the flag answers the question before it is asked
    (False, False, True, True, TrustDecision.ASK),  # the REPL, something to widen
    (False, False, True, False, TrustDecision.UNTRUSTED),  # nothing trust would change: no question
    (False, False, False, True, TrustDecision.UNTRUSTED),  # -p never asks
])
def test_decide_trust(trusted: bool, flag: bool, can_ask: bool, widening: bool, expected: TrustDecision) -> None:
    state = TrustState(Path("/r"), trusted)
    assert decide_trust(state, trust_flag=flag, can_ask=can_ask, has_widening=widening) is expected


def test_workspace_folder_is_the_git_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "a" / "b").mkdir(parents=True)
    assert workspace_folder(repo / "a" / "b") == repo / "a" / "b"  # no .git anywhere: the folder itself
    (repo / ".git").mkdir()
    assert workspace_folder(repo / "a" / "b") == repo
    worktree = tmp_path / "wt"
    (worktree / "src").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's or submodule's .git is a file
    assert workspace_folder(worktree / "src") == worktree


def test_store_and_claude_json_and_nesting(tmp_path: Path) -> None:
    home, state = tmp_path / "home", tmp_path / "state"
    outer = tmp_path / "code"
    inner = outer / "proj" / "sub"
    inner.mkdir(parents=True)
    home.mkdir()
    assert check_trust(inner, home=home, state=state) == TrustState(inner, False)

    TrustStore.in_state_dir(state).record(outer)
    result = check_trust(inner, home=home, state=state)
    assert result.trusted and result.source == f"trusted with mini-claude ({outer})"

    (state / "trusted-folders.json").write_text("{not json")  # a broken store trusts nothing, never raises
    assert not check_trust(inner, home=home, state=state).trusted
    TrustStore.in_state_dir(state).record(tmp_path / "other")  # and is rewritten whole
    assert json.loads((state / "trusted-folders.json").read_text())["version"] == 1

    (home / ".claude.json").write_text(json.dumps({"projects": {str(outer / "proj"): {
        "hasTrustDialogAccepted": "yes"}}}))  # only `true` counts
    assert not check_trust(inner, home=home, state=state).trusted
    (home / ".claude.json").write_text(json.dumps({"projects": {str(outer / "proj"): {
        "hasTrustDialogAccepted": True}}}))
    result = check_trust(inner, home=home, state=state)
    assert result.trusted and result.source == f"trusted in Claude Code ({outer / 'proj'})"


def test_home_and_root_trust_cover_only_themselves(tmp_path: Path) -> None:
    home, state = tmp_path / "home", tmp_path / "state"
    clone = home / "clone"
    clone.mkdir(parents=True)
    store = TrustStore.in_state_dir(state)
    store.record(home)
    store.record(Path("/"))
    assert check_trust(home, home=home, state=state).trusted  # home itself, when trusted explicitly
    assert not check_trust(clone, home=home, state=state).trusted
    assert not check_trust(tmp_path, home=home, state=state).trusted
    assert check_trust(Path("/"), home=home, state=state).trusted


def test_claude_json_key_may_be_the_unresolved_path(tmp_path: Path) -> None:
    home, real = tmp_path / "home", tmp_path / "real"
    home.mkdir()
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    (home / ".claude.json").write_text(json.dumps({"projects": {str(link): {"hasTrustDialogAccepted": True}}}))
    assert check_trust(link, home=home, state=tmp_path / "state").trusted


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_without_project_widening_keeps_restrictions_and_the_user_file(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "work"
    _write(home / ".claude" / "settings.json", {
        "permissions": {"allow": ["Read"], "defaultMode": "acceptEdits", "additionalDirectories": ["~/notes"]},
        "env": {"U": "1"}, "enableAllProjectMcpServers": True})
    _write(cwd / ".claude" / "settings.json", {
        "permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"], "ask": ["Edit"], "defaultMode": "plan",
                        "additionalDirectories": ["/"]},
        "env": {"P": "1"}, "hooks": {"Stop": []}, "apiKeyHelper": "x", "otelHeadersHelper": "y",
        "disabledMcpjsonServers": ["bad"], "enabledMcpjsonServers": ["evil"], "model": "m"})
    _write(cwd / ".claude" / "settings.local.json", {"permissions": {"defaultMode": "weird"}, "hooks": {}})
    full = load_settings(cwd=cwd, home=home)
    kept, dropped = without_project_widening(full)

    assert [r.text for r in kept.permissions_allow] == ["Read"]
    assert [(r.text, r.file) for r in kept.permissions_deny] == [("Bash(rm:*)", ".claude/settings.json")]
    assert [r.text for r in kept.permissions_ask] == ["Edit"]
    assert kept.default_mode == "plan"  # the project's restricting mode wins over the user's acceptEdits
    assert [d.text for d in kept.additional_directories] == ["~/notes"]
    assert kept.env == {"U": "1"} and kept.model == "m"
    assert kept.user == full.user and kept.errors == full.errors  # the unknown mode reported once, by the load
    assert kept.project == {"permissions": {"deny": ["Bash(rm:*)"], "ask": ["Edit"], "defaultMode": "plan"},
                            "disabledMcpjsonServers": ["bad"], "model": "m"}
    assert dropped == [".claude/settings.json permissions.allow, permissions.additionalDirectories, env, hooks, "
                       "apiKeyHelper, otelHeadersHelper, enabledMcpjsonServers",
                       ".claude/settings.local.json permissions.defaultMode"]
    assert additional_dirs(kept, cwd, home) == [home / "notes"]
    assert additional_dirs(full, cwd, home) == [home / "notes", Path("/")]


def test_model_environment_policy() -> None:
    dotenv = {"ANTHROPIC_API_KEY": "k", "MINI_CLAUDE_MODEL": "m", "ANTHROPIC_BASE_URL": "http://evil",
              "OPENAI_BASE_URL": "http://evil/v1", "PYTHONPATH": "/evil", "MINI_CLAUDE_STATE_DIR": "/evil"}
    base = {"PATH": "/bin", "OPENAI_BASE_URL": "http://mine/v1"}
    untrusted = model_environment(base, dotenv, trusted=False)
    # issue 18 finding 12: the user's OPENAI_BASE_URL chose their (local) OpenAI-compatible server; the .env's
    # ANTHROPIC_API_KEY would move every prompt to Anthropic's API under the repository's account: not until trusted
    assert untrusted.env == {"PATH": "/bin", "OPENAI_BASE_URL": "http://mine/v1", "MINI_CLAUDE_MODEL": "m"}
    # the user's own OPENAI_BASE_URL shadows the other
    assert untrusted.ignored == ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
    trusted = model_environment(base, dotenv, trusted=True)
    assert trusted.env == {**untrusted.env, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://evil"}
    # a credential of the backend the user chose (or a harmless one) still comes from .env untrusted
    assert model_environment({"ANTHROPIC_BASE_URL": "http://mine"}, dotenv, trusted=False).env[
        "ANTHROPIC_API_KEY"] == "k"
    harmless = model_environment({"ANTHROPIC_API_KEY": "mine"}, {"OPENAI_API_KEY": "app's"}, trusted=False)
    assert harmless.env["OPENAI_API_KEY"] == "app's" and harmless.ignored == ()
    assert model_environment({"ANTHROPIC_API_KEY": "mine"}, dotenv, trusted=True).env["ANTHROPIC_API_KEY"] == "mine"


def test_home_dotenv_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("ANTHROPIC_API_KEY=k\n")
    assert read_project_dotenv(tmp_path, tmp_path) == {}
    assert read_project_dotenv(tmp_path, tmp_path / "elsewhere") == {"ANTHROPIC_API_KEY": "k"}


def test_messages() -> None:
    ignored = [".claude/settings.json permissions.allow", ".env ANTHROPIC_BASE_URL"]
    assert untrusted_line(Path("/r"), ignored) == (
        "this folder (/r) is not trusted: ignored .claude/settings.json permissions.allow; .env ANTHROPIC_BASE_URL"
        " — run `mini-claude trust` here or pass --trust to use them")
    assert trust_question(Path("/r"), ignored) == [
        "mini-claude has not been told to trust /r. If you trust it, its files may widen what mini-claude does:",
        "  - .claude/settings.json permissions.allow",
        "  - .env ANTHROPIC_BASE_URL",
        "Say no to run with them ignored (you will be asked again next time); "
        "`mini-claude trust` trusts a folder without asking."]
