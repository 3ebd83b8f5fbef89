"""One reading of every input (issue 18, findings 1 and 2): the schema check the loop and the gate run before a
built-in tool (exact messages), the one path resolver the gate and the tools share (`~`, `~user`, `..`), and a
property test proving that the file a tool really writes is the one the gate judged, on real files with symlinks."""

from __future__ import annotations

import asyncio
import os
import pwd
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_claude.paths import resolve_tool_path
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions.paths import MatchEnv, expand_path
from mini_claude.tools.base import ToolContext
from mini_claude.tools.files import EditFileTool, WriteFileTool
from mini_claude.tools.glob import GlobTool
from mini_claude.tools.grep import GrepTool
from mini_claude.tools.input_check import input_problem
from mini_claude.tools.read import ReadFileTool
from mini_claude.tools.shell import BashTool

READ_SCHEMA = ReadFileTool().input_schema


@pytest.mark.parametrize(("args", "problem"), [
    ({"file_path": "a"}, None),
    ({"file_path": "a", "offset": 2, "limit": 10}, None),
    ({"file_path": "a", "offset": 2.0}, None),
    ({}, "missing required `file_path`"),
    ({"file_path": "a", "path": "b"},
     "unknown key 'path' (this tool takes: file_path, offset, limit); nothing was run"),
    ({"file_path": "a", "x": 1, "y": 2},
     "unknown keys 'x', 'y' (this tool takes: file_path, offset, limit); nothing was run"),
    ({"file_path": 7}, "`file_path` must be a string, not 7"),
    ({"file_path": "a\0b"}, "`file_path` must not contain a NUL character"),
    ({"file_path": "a", "offset": 0}, "`offset` must be at least 1, not 0"),
    ({"file_path": "a", "offset": True}, "`offset` must be an integer, not True"),
    ({"file_path": "a", "limit": "5"}, "`limit` must be an integer, not '5'"),
])
def test_read_file_input_is_checked_against_its_schema(args: dict[str, object], problem: str | None) -> None:
    assert input_problem(READ_SCHEMA, args) == problem


def test_every_builtin_schema_is_strict_and_fully_checkable() -> None:
    for tool in (ReadFileTool(), WriteFileTool(), EditFileTool(), GlobTool(), GrepTool(), BashTool()):
        schema = tool.input_schema
        assert schema["additionalProperties"] is False, tool.name
        required = {key: "x" for key in schema.get("required", [])}
        assert input_problem(schema, {**required, "bogus": 1}) is not None, tool.name
    assert input_problem(EditFileTool().input_schema, {"file_path": "a", "old_string": "a", "new_string": "b",
                                                       "replace_all": "yes"}) == \
        "`replace_all` must be true or false, not 'yes'"
    assert input_problem(GrepTool().input_schema, {"pattern": "x", "output_mode": "all"}) == \
        "`output_mode` must be one of 'files_with_matches', 'content', 'count', not 'all'"
    assert input_problem({"type": "object", "properties": {"a": {"$ref": "#/x"}}}, {"a": 1}) == \
        "the input schema in `a` uses $ref, which cannot be checked"


def test_tilde_forms_are_read_as_bash_and_the_tools_read_them() -> None:
    cwd, home = Path("/w"), Path("/h")
    me = pwd.getpwuid(os.getuid())
    assert resolve_tool_path("~", cwd, home) == "/h"
    assert resolve_tool_path("~/a/../b", cwd, home) == "/h/b"
    assert resolve_tool_path(f"~{me.pw_name}/x", cwd, home) == os.path.join(me.pw_dir, "x")
    assert resolve_tool_path(f"~{me.pw_name}", cwd, home) == os.path.normpath(me.pw_dir)
    assert resolve_tool_path("~no-such-user-4711/x", cwd, home) == "/w/~no-such-user-4711/x"
    assert resolve_tool_path("$HOME/x", cwd, home) == "/w/$HOME/x"
    assert resolve_tool_path("//etc/passwd", cwd, home) == "/etc/passwd"
    assert resolve_tool_path("a/./../../x", cwd, home) == "/x"
    env = MatchEnv(cwd=cwd, home=home)
    ctx = ToolContext(cwd=cwd, spill_dir=cwd, home=home)
    for raw in ("~", "~/x", f"~{me.pw_name}/y", "../z", "a//b"):
        assert expand_path(raw, env) == str(ctx.resolve(raw))


_SEGMENTS = st.sampled_from(["a", "b", "..", ".", "link_in", "link_out", "~", ""])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(segments=st.lists(_SEGMENTS, min_size=1, max_size=6), name=st.sampled_from(["f.txt", ".env", "CLAUDE.md"]))
def test_the_file_a_tool_writes_is_the_file_the_gate_judged(tmp_path: Path, segments: list[str], name: str) -> None:
    """acceptEdits, no rules: the gate allows a write without asking only when the file the tool really creates
    (found on disk afterwards) lies in the project and is neither secret nor protected; whatever the spelling."""
    root = tmp_path / str(abs(hash((tuple(segments), name))))
    work, home, outside = root / "work", root / "home", root / "outside"
    for d in (work / "a" / "b", work / "b", home / "a", home / "b", outside):
        d.mkdir(parents=True, exist_ok=True)
    for base in (work, work / "a", home):
        for link, target in (("link_in", work / "b"), ("link_out", outside)):
            if not (base / link).exists():
                (base / link).symlink_to(target)
    raw = "/".join([*segments, name]).replace("//", "/")
    if raw.startswith("/"):
        raw = raw[1:]
    gate = PermissionGate(PermissionMode.ACCEPT_EDITS, RuleSet(), ask=None, cwd=work, home=home)
    ctx = ToolContext(cwd=work, spill_dir=root / "spill", home=home)
    tool = WriteFileTool()
    before = {p for p in root.rglob("*")}
    decision = asyncio.run(gate.check(tool, {"file_path": raw, "content": "x"}))
    if not decision.allowed:
        return
    result = asyncio.run(tool.run({"file_path": raw, "content": "x"}, ctx))
    created = [p for p in root.rglob("*") if p not in before and p.is_file()]
    if result.is_error:
        assert created == [], (raw, result.as_text())
        return
    assert len(created) == 1, (raw, created)
    real = os.path.realpath(created[0])
    assert real.startswith(os.path.realpath(work) + "/"), (raw, real, decision.reason)
    assert created[0].name == name == "f.txt", (raw, decision.reason)


def test_the_cheap_secret_look_never_clears_what_classify_calls_secret(tmp_path: Path) -> None:
    """Grep asks `is_secret` of every file it meets: the quick look (may_be_secret) may only ever say "maybe" where
    classify says secret — names, links into ~/.ssh, the state folder."""
    from mini_claude.permissions.boundaries import Place, classify, may_be_secret

    work, home, state = tmp_path / "work", tmp_path / "home", tmp_path / "state"
    for folder in (work / "src", home / ".ssh", home / ".aws", state):
        folder.mkdir(parents=True)
    (home / ".ssh" / "config").write_text("x")
    (state / "approvals.json").write_text("{}")
    (work / "src" / "ssh").symlink_to(home / ".ssh" / "config")
    (work / "src" / "st").symlink_to(state / "approvals.json")
    names = ["a.py", ".env", ".env.local", "prod.env", "id_rsa", "x.pem", ".npmrc", "ssh", "st", "README.md"]
    place = Place(MatchEnv(cwd=work, home=home), (work,), (), state)
    for name in names:
        path = str(work / "src" / name)
        if classify(path, place, write=False) == "secret":
            assert may_be_secret(path, place), name
    assert not may_be_secret(str(work / "src" / "a.py"), place)
    assert may_be_secret(str(work / "src" / "ssh"), place) and may_be_secret(str(work / "src" / "st"), place)
