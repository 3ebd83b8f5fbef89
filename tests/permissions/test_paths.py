"""Path rules and the working-directory boundary at the gate, on real files in tmp dirs: symlinks are resolved
before an allow rule matches, writes outside cwd and the added directories always ask (every mode but bypass),
and `is_denied` (what grep/glob filter with) follows the deny rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_claude.permissions import Decision, MatchEnv, PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions.paths import PathPattern
from tests.permissions.test_gate import EDIT, READ, WRITE, Asker


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Path]:
    """cwd = tmp/work, home = tmp/home (with a .bashrc), an outside file tmp/outside/file."""
    work, home, outside = tmp_path / "work", tmp_path / "home", tmp_path / "outside"
    for d in (work / "src", home, outside):
        d.mkdir(parents=True)
    (home / ".bashrc").write_text("# mine\n")
    (outside / "file").write_text("outside\n")
    return {"work": work, "home": home, "outside": outside, "tmp": tmp_path}


def gate_for(box: dict[str, Path], mode: str = "default", *, allow: tuple[str, ...] = (),
             deny: tuple[str, ...] = (), ask: Asker | None = None, extra: tuple[Path, ...] = ()) -> PermissionGate:
    rules = RuleSet.from_strings(allow=allow, deny=deny, source=".claude/settings.json")
    return PermissionGate(PermissionMode.parse(mode), rules, ask=ask, cwd=box["work"], home=box["home"],
                          additional_dirs=extra)


def edit_args(path: str) -> dict[str, Any]:
    return {"file_path": path, "old_string": "a", "new_string": "b"}


# ------------------------------------------------------------------------------------------------- symlinks


def test_allow_rule_matches_the_resolved_target(box: dict[str, Path]) -> None:
    (box["work"] / "src" / "link").symlink_to(box["outside"] / "file")
    (box["work"] / "src" / "real.py").write_text("x")
    env = MatchEnv(cwd=box["work"], home=box["home"])
    pattern = PathPattern.parse("src/**")
    assert pattern.matches("src/link", env)  # as written: a deny rule sees it
    assert not pattern.matches("src/link", env, resolved_only=True)  # resolved: outside, an allow rule does not
    assert pattern.matches("src/real.py", env, resolved_only=True)


async def test_edit_rule_does_not_follow_a_symlink_out_of_the_project(box: dict[str, Path]) -> None:
    (box["work"] / "src" / "link").symlink_to(box["outside"] / "file")
    asker = Asker("no")
    gate = gate_for(box, allow=("Edit(src/**)",), ask=asker)
    d = await gate.check(EDIT, edit_args("src/link"))
    assert asker.asked == [("Edit", edit_args("src/link"))]
    assert d == Decision(False, "permission denied for Edit: the user declined this tool call")
    assert (await gate.check(EDIT, edit_args("src/fine.py"))) == \
        Decision(True, 'allowed by rule "Edit(src/**)" in .claude/settings.json')


async def test_symlink_inside_the_project_to_an_allowed_file_is_allowed(box: dict[str, Path]) -> None:
    (box["work"] / "src" / "a.py").write_text("x")
    (box["work"] / "alias.py").symlink_to(box["work"] / "src" / "a.py")
    gate = gate_for(box, allow=("Edit(src/**)",))
    assert (await gate.check(EDIT, edit_args("alias.py"))).allowed


async def test_deny_rule_matches_the_name_as_written_and_the_target(box: dict[str, Path]) -> None:
    (box["work"] / "secrets").mkdir()
    (box["work"] / "secrets" / "link").symlink_to(box["outside"] / "file")
    (box["work"] / "innocent").symlink_to(box["work"] / "secrets")
    gate = gate_for(box, "bypassPermissions", deny=("Read(secrets/**)",))
    for path in ("secrets/link", "innocent/link"):
        d = await gate.check(READ, {"file_path": path})
        assert d == Decision(False, 'permission denied for Read: denied by rule "Read(secrets/**)" in '
                                    '.claude/settings.json')


# ------------------------------------------------------------------------------------ writes outside the project


@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
@pytest.mark.parametrize("path", ["~/.bashrc", "../x", "OUTSIDE_ABS", "src/escape"])
async def test_writes_outside_the_project_ask_in_every_mode(box: dict[str, Path], mode: str, path: str) -> None:
    (box["work"] / "src" / "escape").symlink_to(box["outside"] / "file")
    path = str(box["outside"] / "file") if path == "OUTSIDE_ABS" else path
    for tool, args in ((EDIT, edit_args(path)), (WRITE, {"file_path": path, "content": "pwned"})):
        asker = Asker("no")
        d = await gate_for(box, mode, allow=("Edit", "Write", "Edit(**)"), ask=asker).check(tool, args)
        assert asker.asked == [(tool.name, args)], (mode, path)
        assert not d.allowed


async def test_inside_writes_are_unchanged(box: dict[str, Path]) -> None:
    assert (await gate_for(box, "acceptEdits").check(EDIT, edit_args("src/a.py"))) == \
        Decision(True, "acceptEdits mode")
    assert (await gate_for(box, "acceptEdits").check(WRITE, {"file_path": str(box["work"] / "n.txt"), "content": ""})) \
        == Decision(True, "acceptEdits mode")
    assert (await gate_for(box, allow=("Edit",)).check(EDIT, edit_args("src/../a.py"))).allowed


async def test_added_directories_count_as_inside(box: dict[str, Path]) -> None:
    gate = gate_for(box, "acceptEdits", extra=(box["outside"],))
    assert (await gate.check(EDIT, edit_args(str(box["outside"] / "file")))) == Decision(True, "acceptEdits mode")
    relative = gate_for(box, "acceptEdits", extra=(Path("../outside"),))
    assert (await relative.check(EDIT, edit_args("../outside/file"))).allowed
    assert not (await relative.check(EDIT, edit_args("~/.bashrc"))).allowed


async def test_only_a_rule_naming_the_outside_location_allows_it(box: dict[str, Path]) -> None:
    target = str(box["outside"] / "file")
    gate = gate_for(box, allow=("Edit", f"Edit(/{box['outside']}/**)", "Edit(~/.bashrc)"))
    assert (await gate.check(EDIT, edit_args(target))) == \
        Decision(True, f'allowed by rule "Edit(/{box["outside"]}/**)" in .claude/settings.json')
    assert (await gate.check(WRITE, {"file_path": "~/.bashrc", "content": ""})) == \
        Decision(True, 'allowed by rule "Edit(~/.bashrc)" in .claude/settings.json')
    assert not (await gate.check(EDIT, edit_args("~/.profile"))).allowed


async def test_bypass_and_plan_and_deny_keep_their_meaning_outside(box: dict[str, Path]) -> None:
    assert (await gate_for(box, "bypassPermissions").check(EDIT, edit_args("~/.bashrc"))) == \
        Decision(True, "bypassPermissions mode")
    assert not (await gate_for(box, "plan", ask=Asker()).check(EDIT, edit_args("~/.bashrc"))).allowed
    d = await gate_for(box, "bypassPermissions", deny=("Edit(~/.bashrc)",)).check(EDIT, edit_args("~/.bashrc"))
    assert d == Decision(False, 'permission denied for Edit: denied by rule "Edit(~/.bashrc)" in '
                                '.claude/settings.json')


async def test_non_interactive_outside_write_is_denied_with_the_reason(box: dict[str, Path]) -> None:
    bashrc = box["home"] / ".bashrc"
    d = await gate_for(box, "acceptEdits", allow=("Edit",)).check(EDIT, edit_args("~/.bashrc"))
    assert d == Decision(False, f"permission denied for Edit: {bashrc} is outside the working directory and "
                                "the added directories and configures code execution or the agent (.git, .claude, "
                                "CLAUDE.md, .mcp.json, shell start-up), so writing it needs the user's approval, "
                                "which is not "
                                "possible in non-interactive mode; allow with --yolo or add "
                                f'"Edit(/{bashrc})" to permissions.allow in ~/.claude/settings.json')


async def test_always_remembers_only_that_outside_file(box: dict[str, Path]) -> None:
    (box["outside"] / "we*ird").write_text("x")
    asker = Asker("always", "always")
    gate = gate_for(box, "acceptEdits", ask=asker)
    bashrc = box["home"] / ".bashrc"
    assert (await gate.check(EDIT, edit_args("~/.bashrc"))) == Decision(
        True, f'allowed by the user; "Edit(/{bashrc})" allowed for the rest of this session')
    assert (await gate.check(WRITE, {"file_path": str(bashrc), "content": ""})).allowed
    assert (await gate.check(EDIT, edit_args("../outside/we*ird"))).allowed
    assert gate.rules.allow[-1].text == f"Edit(/{box['outside']}/we\\*ird)"
    asker.answers += ["no", "no"]
    assert not (await gate.check(EDIT, edit_args("../outside/weXird"))).allowed  # the `*` was literal
    assert not (await gate.check(EDIT, edit_args("~/.profile"))).allowed
    assert len(asker.asked) == 4


# ---------------------------------------------------------------------------------------- is_denied (search)


def test_is_denied_follows_deny_rules_for_search_tools(box: dict[str, Path]) -> None:
    work = box["work"]
    gate = gate_for(box, deny=("Read(.env.local)", "Grep(logs/**)", "Edit(src/**)"))
    assert gate.is_denied(work / ".env.local", "Grep")
    assert gate.is_denied(work / "sub" / ".env.local", "Glob")
    assert gate.is_denied(work / "logs" / "a.log", "Grep")
    assert not gate.is_denied(work / "logs" / "a.log", "Glob")  # a Grep rule is not a Glob rule
    assert not gate.is_denied(work / "src" / "a.py", "Grep")  # Edit rules do not hide files from reading
    assert not gate.is_denied(work / ".env", "Grep")
