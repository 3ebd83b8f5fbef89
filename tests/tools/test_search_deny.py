"""Deny rules on files also filter search results: with `Read(.env.local)` / `Read(secrets/**)` denied, grep (ripgrep
and the Python search) returns nothing from those files and glob does not list them. Real files, real gate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import ToolContext
from mini_claude.tools.glob import GlobTool
from mini_claude.tools.grep import GrepTool
from tests.helpers import require_program

pytestmark = pytest.mark.timeout(30)

ROOT = Path(__file__).resolve().parents[2]

SECRET = "sk-live-do-not-leak"
DENY = ("Read(.env.local)", "Read(secrets/**)")


@pytest.fixture
def denied_ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    (work / "secrets").mkdir(parents=True)
    (work / "sub").mkdir()
    (work / ".env.local").write_text(f"API_KEY={SECRET}\nshared line\n")
    (work / "sub" / ".env.local").write_text(f"NESTED={SECRET}\n")
    (work / "secrets" / "key.txt").write_text(f"{SECRET}\n")
    (work / "app.py").write_text("print('shared line')\n")
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(deny=DENY), ask=None, cwd=work,
                          home=tmp_path / "home")
    return ToolContext(cwd=work, spill_dir=tmp_path / "spill", is_denied=gate.is_denied)


def grep_tool(engine: str) -> GrepTool:
    if engine == "ripgrep":
        return GrepTool(rg_path=require_program("rg", "grep's ripgrep engine"))
    return GrepTool(use_ripgrep=False)


ENGINES = ["ripgrep", "python"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
async def test_grep_returns_nothing_from_a_denied_file(engine: str, mode: str, denied_ctx: ToolContext) -> None:
    result = await grep_tool(engine).run({"pattern": SECRET, "output_mode": mode}, denied_ctx)
    assert not result.is_error
    assert result.as_text() == f"No matches for {SECRET!r} in {denied_ctx.cwd}"


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_still_finds_the_allowed_files(engine: str, denied_ctx: ToolContext) -> None:
    result = await grep_tool(engine).run({"pattern": "shared line", "output_mode": "content"}, denied_ctx)
    assert result.as_text() == "app.py:1:print('shared line')"
    result = await grep_tool(engine).run({"pattern": "shared|API", "-C": 1, "output_mode": "content",
                                          "glob": "*"}, denied_ctx)
    assert result.as_text() == "app.py:1:print('shared line')"


# Runs the Python engine in a child whose audit hook records every path it opens (as root, a mode-000 file would
# open anyway, so file modes cannot prove it).
NEVER_OPENS = """
import asyncio, json, sys
from pathlib import Path
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.tools.base import ToolContext
from mini_claude.tools.grep import GrepTool
work, home, pattern = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
gate = PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(deny=tuple(sys.argv[4:])), ask=None, cwd=work,
                      home=home)
ctx = ToolContext(cwd=work, spill_dir=home / "spill", is_denied=gate.is_denied)
opened.clear()
result = asyncio.run(GrepTool(use_ripgrep=False).run({"pattern": pattern}, ctx))
print(json.dumps({"text": result.as_text(), "opened": opened}))
"""


def test_python_engine_never_opens_a_denied_file(denied_ctx: ToolContext, tmp_path: Path) -> None:
    work = denied_ctx.cwd
    done = subprocess.run([sys.executable, "-c", NEVER_OPENS, str(work), str(tmp_path), SECRET, *DENY],
                          capture_output=True, text=True, timeout=20, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["text"] == f"No matches for {SECRET!r} in {work}"
    opened = {str(Path(p).resolve()) for p in report["opened"] if p.startswith("/")}  # not fds
    assert str((work / "app.py").resolve()) in opened  # the hook saw the engine open files at all
    for denied in (work / ".env.local", work / "sub" / ".env.local", work / "secrets" / "key.txt"):
        assert str(denied.resolve()) not in opened


async def test_ripgrep_names_with_colons_and_dashes_are_filtered_exactly(tmp_path: Path) -> None:
    require_program("rg", "grep's ripgrep engine")
    work = tmp_path / "work"
    work.mkdir()
    (work / "a-1-b.txt").write_text("hit\n")
    (work / "c:2:d.txt").write_text("before\nhit\n")
    (work / "keep.txt").write_text("hit\nafter\n")
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(deny=("Read(a-1-b.txt)",)), ask=None,
                          cwd=work, home=tmp_path)
    ctx = ToolContext(cwd=work, spill_dir=tmp_path / "spill", is_denied=gate.is_denied)
    for tool in (GrepTool(), GrepTool(use_ripgrep=False)):
        result = await tool.run({"pattern": "hit", "output_mode": "content", "-C": 1}, ctx)
        assert result.as_text().splitlines() == ["c:2:d.txt-1-before", "c:2:d.txt:2:hit", "--", "keep.txt:1:hit",
                                                 "keep.txt-2-after"]
        result = await tool.run({"pattern": "hit", "output_mode": "count"}, ctx)
        assert sorted(result.as_text().splitlines()) == ["c:2:d.txt:1", "keep.txt:1"]


async def test_glob_does_not_list_denied_files(denied_ctx: ToolContext) -> None:
    result = await GlobTool().run({"pattern": "**/*"}, denied_ctx)
    assert sorted(result.as_text().splitlines()) == ["app.py", "secrets/", "sub/"]
    result = await GlobTool().run({"pattern": "**/.env*"}, denied_ctx)
    assert result.as_text() == f"No files found matching '**/.env*' in {denied_ctx.cwd}"


async def test_without_rules_nothing_is_filtered(denied_ctx: ToolContext) -> None:
    open_ctx = ToolContext(cwd=denied_ctx.cwd, spill_dir=denied_ctx.spill_dir)
    result = await GrepTool(use_ripgrep=False).run({"pattern": SECRET}, open_ctx)
    assert sorted(result.as_text().splitlines()) == [".env.local", "secrets/key.txt", "sub/.env.local"]
