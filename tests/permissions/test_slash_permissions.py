"""`/permissions` (issue 21): the listing names each rule's file (or flag, or this session) and what is not applied
and why; `add` checks the rule with the gate's parser, writes the file and applies it — never an allow rule of a
repository file in an untrusted folder; `remove` takes a rule out of its one file and the gate, and refuses to
guess between several. Real settings files in a temporary home and project, the real gate and the real Bash tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.slash.permissions import (
    SESSION_SCOPE,
    USAGE,
    add_permission,
    permission_listing,
    remove_permission,
    split_scope,
)
from mini_claude.errors import ConfigError
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.settings import load_settings
from mini_claude.settings_rules import add_rule, kinds_holding, remove_rule, settings_file
from mini_claude.settings_trust import without_project_widening
from mini_claude.tools.shell import BashTool

BASH = BashTool()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def session_gate(work: Path, home: Path, *, trusted: bool, allowed: tuple[str, ...] = ()) -> PermissionGate:
    """The gate a session would build from the files (filtered as an untrusted folder's), non-interactive."""
    settings = load_settings(cwd=work, home=home)
    if not trusted:
        settings, _ = without_project_widening(settings)
    rules = RuleSet.from_settings(settings)
    if allowed:
        rules = rules.with_cli(allow=allowed)
    return PermissionGate(PermissionMode.DEFAULT, rules, ask=None, cwd=work, home=home)


async def runs(gate: PermissionGate, command: str) -> bool:
    return (await gate.check(BASH, {"command": command})).allowed


async def test_add_writes_the_local_file_and_applies_the_rule(work: Path, home: Path) -> None:
    local = work / ".claude" / "settings.local.json"
    write(local, {"model": "haiku", "permissions": {"allow": ["Read"]}})
    gate = session_gate(work, home, trusted=True)
    assert not await runs(gate, "make build")
    said = add_permission(gate, trusted=True, kind="allow", rule="Bash(make:*)", scope="local", home=home)
    assert said == "added allow rule Bash(make:*) to .claude/settings.local.json; applied to this session"
    assert read(local) == {"model": "haiku", "permissions": {"allow": ["Read", "Bash(make:*)"]}}
    assert await runs(gate, "make build")
    [rule] = [r for r in gate.rules.allow if r.text == "Bash(make:*)"]
    assert (rule.source, rule.key) == (".claude/settings.local.json", "permissions.allow[1]")
    # again: the file is left as it is and the gate holds it once
    said = add_permission(gate, trusted=True, kind="allow", rule="Bash(make:*)", scope="local", home=home)
    assert said == "allow rule Bash(make:*) was already in .claude/settings.local.json"
    assert [r.text for r in gate.rules.allow].count("Bash(make:*)") == 1


async def test_a_malformed_rule_is_refused_before_any_file_is_touched(work: Path, home: Path) -> None:
    gate = session_gate(work, home, trusted=True)
    with pytest.raises(ConfigError, match=r'invalid permission rule "Bash\(make": missing closing "\)"'):
        add_permission(gate, trusted=True, kind="deny", rule="Bash(make", scope="local", home=home)
    assert not (work / ".claude").exists()
    user = home / ".claude" / "settings.json"
    user.parent.mkdir()
    user.write_text("{not json")
    with pytest.raises(ConfigError, match=r"~/\.claude/settings\.json: invalid JSON"):
        add_permission(gate, trusted=True, kind="deny", rule="Bash(rm:*)", scope="user", home=home)
    assert user.read_text() == "{not json"  # never overwritten
    assert gate.rules.deny == ()


async def test_untrusted_repository_allow_rule_is_saved_but_not_applied(work: Path, home: Path) -> None:
    gate = session_gate(work, home, trusted=False)
    said = add_permission(gate, trusted=False, kind="allow", rule="Bash(make:*)", scope="project", home=home)
    assert said.startswith("added allow rule Bash(make:*) to .claude/settings.json; not applied: this folder is "
                           "not trusted")
    assert read(work / ".claude" / "settings.json") == {"permissions": {"allow": ["Bash(make:*)"]}}
    assert not await runs(gate, "make build")  # the gate stays as the files + trust say
    # what narrows applies at once, wherever it is saved; the user's own file is always in force
    add_permission(gate, trusted=False, kind="deny", rule="Bash(make clean:*)", scope="local", home=home)
    add_permission(gate, trusted=False, kind="allow", rule="Bash(make:*)", scope="user", home=home)
    assert await runs(gate, "make build")
    assert not await runs(gate, "make clean")
    assert read(home / ".claude" / "settings.json") == {"permissions": {"allow": ["Bash(make:*)"]}}


async def test_remove_needs_a_scope_when_the_rule_is_in_two_files(work: Path, home: Path) -> None:
    write(home / ".claude" / "settings.json", {"permissions": {"deny": ["Bash(curl:*)"]}})
    write(work / ".claude" / "settings.local.json", {"permissions": {"deny": ["Bash(curl:*)"], "ask": ["Edit"]}})
    gate = session_gate(work, home, trusted=True)
    with pytest.raises(ConfigError) as refused:
        remove_permission(gate, rule="Bash(curl:*)", scope=None, home=home)
    assert str(refused.value) == ("Bash(curl:*) is in user (~/.claude/settings.json), local "
                                  "(.claude/settings.local.json): say which, e.g. /permissions remove Bash(curl:*) user")
    said = remove_permission(gate, rule="Bash(curl:*)", scope="local", home=home)
    assert said == "removed deny rule Bash(curl:*) from .claude/settings.local.json"
    assert read(work / ".claude" / "settings.local.json") == {"permissions": {"deny": [], "ask": ["Edit"]}}
    assert [(r.text, r.source) for r in gate.rules.deny] == [("Bash(curl:*)", "~/.claude/settings.json")]
    assert not await runs(gate, "curl example.com")  # the user's copy still denies
    # now in one file only: no scope needed
    assert remove_permission(gate, rule="Bash(curl:*)", scope=None, home=home) == \
        "removed deny rule Bash(curl:*) from ~/.claude/settings.json"
    assert gate.rules.deny == ()
    with pytest.raises(ConfigError, match=r"no rule Bash\(curl:\*\) in ~/.claude/settings.json, "):
        remove_permission(gate, rule="Bash(curl:*)", scope=None, home=home)


async def test_remove_a_session_answer_and_refuse_a_flag_rule(work: Path, home: Path) -> None:
    gate = session_gate(work, home, trusted=True, allowed=("Bash(git log:*)",))
    gate.allow_for_session(["Bash(ls:*)"])
    assert await runs(gate, "ls -la")
    assert remove_permission(gate, rule="Bash(ls:*)", scope=None, home=home) == \
        "removed Bash(ls:*) from this session's answers"
    assert not await runs(gate, "ls -la")
    with pytest.raises(ConfigError, match=r"Bash\(git log:\*\) comes from --allowedTools on the command line"):
        remove_permission(gate, rule="Bash(git log:*)", scope=None, home=home)
    # an "always" answer saved to the local file: removing it there takes the session's copy too
    gate.allow_for_session(["Bash(ls:*)"])
    add_rule(settings_file("local", cwd=work, home=home), "allow", "Bash(ls:*)")
    said = remove_permission(gate, rule="Bash(ls:*)", scope=None, home=home)
    assert said == "removed allow rule Bash(ls:*) from .claude/settings.local.json (and from this session's answers)"
    assert not await runs(gate, "ls -la")


def test_the_listing_names_each_rules_file_and_what_is_not_applied(work: Path, home: Path) -> None:
    write(home / ".claude" / "settings.json", {"permissions": {"deny": ["Bash(rm:*)"]}})
    write(work / ".claude" / "settings.json",
          {"permissions": {"allow": ["Bash(npm test:*)"], "ask": ["Bash(git push:*)"], "deny": ["Bash(("]}})
    gate = session_gate(work, home, trusted=False, allowed=("Read",))
    gate.allow_for_session(["Bash(ls:*)"])
    write(work / ".claude" / "settings.local.json", {"permissions": {"allow": ["Bash(ls:*)"], "ask": ["WebFetch"]}})
    lines = permission_listing(gate, trusted=False, on_disk=load_settings(cwd=work, home=home))
    assert lines == [
        "permission mode: default",
        "allow (3):",
        "  Read              --allowedTools (command line)",
        '  Bash(ls:*)        this session (an "always" answer), saved to .claude/settings.local.json',
        "  Bash(npm test:*)  .claude/settings.json — ignored: this folder is not trusted (`mini-claude trust`)",
        "ask (2):",
        "  Bash(git push:*)  .claude/settings.json",
        "  WebFetch          .claude/settings.local.json — not applied: written after this session started",
        "deny (1):",
        "  Bash(rm:*)        ~/.claude/settings.json",
        "not applied, malformed:",
        '  .claude/settings.json: permissions.deny[0]: invalid permission rule "Bash((": missing closing ")"',
        "this folder is not trusted: allow rules of .claude/settings.json and .claude/settings.local.json are "
        "ignored; their ask and deny rules apply",
        USAGE,
    ]


@pytest.mark.parametrize(("text", "scopes", "expected"), [
    ("Bash(npm run *) project", ("user", "project", "local"), ("Bash(npm run *)", "project")),
    ("Bash(npm run *)", ("user", "project", "local"), ("Bash(npm run *)", None)),
    ('"Bash(ls local)" user', ("user", "project", "local"), ("Bash(ls local)", "user")),
    ("Read session", ("user", SESSION_SCOPE), ("Read", SESSION_SCOPE)),
    ("local", ("local",), ("local", None)),  # one word is the rule
])
def test_split_scope(text: str, scopes: tuple[str, ...], expected: tuple[str, str | None]) -> None:
    assert split_scope(text, scopes) == expected


def test_the_rule_editor_keeps_the_rest_of_the_file(work: Path, home: Path) -> None:
    file = settings_file("project", cwd=work, home=home)
    write(file.path, {"env": {"A": "1"}, "permissions": {"allow": ["Read", " Edit "], "defaultMode": "plan"}})
    assert add_rule(file, "deny", "Bash(rm:*)") == (0, True)
    assert kinds_holding(file, "Edit") == ["allow"]
    assert remove_rule(file, "Edit") == ["allow"]
    assert read(file.path) == {"env": {"A": "1"}, "permissions": {"allow": ["Read"], "defaultMode": "plan",
                                                                   "deny": ["Bash(rm:*)"]}}
    assert file.path.stat().st_mode & 0o777 != 0  # a repository file keeps the mode it had
    write(file.path, {"permissions": {"allow": "Read"}})
    with pytest.raises(ConfigError, match=r"\.claude/settings\.json: permissions\.allow: expected a list"):
        add_rule(file, "allow", "Edit")
    assert read(file.path) == {"permissions": {"allow": "Read"}}


@pytest.mark.parametrize("linked", ["file", "folder"])
async def test_a_repository_settings_symlink_is_never_written_through(work: Path, home: Path, linked: str) -> None:
    """A cloned repository commits `.claude/settings.local.json` (or `.claude`) as a link to the user's own settings
    file, which is in force even in an untrusted folder: adding "to local" must not widen every session."""
    user = home / ".claude" / "settings.json"
    write(user, {"theme": "dark"})
    if linked == "file":
        (work / ".claude").mkdir()
        (work / ".claude" / "settings.local.json").symlink_to(user)
    else:
        (work / ".claude").symlink_to(home / ".claude")
    gate = session_gate(work, home, trusted=False)
    with pytest.raises(ConfigError, match=r"\.claude/settings\.local\.json: not written: .* is a symbolic link"):
        add_permission(gate, trusted=False, kind="allow", rule="Bash", scope="local", home=home)
    with pytest.raises(ConfigError, match="is a symbolic link"):
        remove_permission(gate, rule="Bash", scope="local", home=home)
    assert read(user) == {"theme": "dark"}
    assert not await runs(gate, "ls")


async def test_remove_without_a_scope_finds_the_users_rule_past_a_linked_repository_folder(work: Path,
                                                                                           home: Path) -> None:
    # a repository whose .claude is a link (to anywhere) is never edited through; the user's own rule is still found
    write(home / ".claude" / "settings.json", {"permissions": {"deny": ["Bash(curl:*)"]}})
    elsewhere = work.parent / "elsewhere"
    write(elsewhere / "settings.local.json", {"permissions": {"deny": ["Bash(curl:*)"]}})
    (work / ".claude").symlink_to(elsewhere)
    gate = session_gate(work, home, trusted=True)
    assert remove_permission(gate, rule="Bash(curl:*)", scope=None, home=home) == \
        "removed deny rule Bash(curl:*) from ~/.claude/settings.json"
    assert read(elsewhere / "settings.local.json") == {"permissions": {"deny": ["Bash(curl:*)"]}}
