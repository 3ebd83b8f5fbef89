"""glob and grep on real directory trees; grep through ripgrep (when installed) and the Python fallback."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest

from mini_claude.tools.base import ToolContext
from mini_claude.tools.glob import GlobTool
from mini_claude.tools.grep import GrepTool
from tests.helpers import require_program, wait_gone

pytestmark = pytest.mark.timeout(30)

RG = shutil.which("rg")


def set_mtime(path: Path, seconds: int) -> None:
    os.utime(path, (seconds, seconds))


# ------------------------------------------------------------------------------------------------ glob


async def test_glob_recursive_newest_first(ctx: ToolContext) -> None:
    (ctx.cwd / "src/pkg").mkdir(parents=True)
    files = {"a.py": 1000, "src/b.py": 3000, "src/pkg/c.py": 2000, "src/notes.txt": 4000}
    for name, mtime in files.items():
        (ctx.cwd / name).write_text("x")
        set_mtime(ctx.cwd / name, mtime)
    result = await GlobTool().run({"pattern": "**/*.py"}, ctx)
    assert not result.is_error
    assert result.as_text().splitlines() == ["src/b.py", "src/pkg/c.py", "a.py"]


async def test_glob_relative_to_path_and_skips_git(ctx: ToolContext) -> None:
    (ctx.cwd / "proj/.git").mkdir(parents=True)
    (ctx.cwd / "proj/.git/config.py").write_text("x")
    (ctx.cwd / "proj/main.py").write_text("x")
    result = await GlobTool().run({"pattern": "**/*.py", "path": "proj"}, ctx)
    lines = result.as_text().splitlines()
    assert lines[0] == f"(paths relative to {ctx.cwd / 'proj'})"
    assert lines[1:] == ["main.py"]


async def test_glob_literal_prefix_in_pattern(ctx: ToolContext) -> None:
    (ctx.cwd / "docs").mkdir()
    (ctx.cwd / "docs/x.md").write_text("x")
    result = await GlobTool().run({"pattern": str(ctx.cwd / "docs" / "*.md")}, ctx)
    assert result.as_text().splitlines()[-1] == "x.md"


async def test_glob_cap_with_note(ctx: ToolContext) -> None:
    for i in range(30):
        path = ctx.cwd / f"f{i:02d}.txt"
        path.write_text("x")
        set_mtime(path, 1000 + i)
    result = await GlobTool(max_results=10).run({"pattern": "*.txt"}, ctx)
    lines = result.as_text().splitlines()
    assert lines[:10] == [f"f{i:02d}.txt" for i in range(29, 19, -1)]
    assert "showing the 10 newest of 30 matches" in result.as_text()


async def test_glob_default_cap_is_500(ctx: ToolContext) -> None:
    for i in range(510):
        (ctx.cwd / f"{i}.t").write_bytes(b"")
    text = (await GlobTool().run({"pattern": "*.t"}, ctx)).as_text()
    assert len([line for line in text.splitlines() if line.endswith(".t")]) == 500
    assert "of 510 matches" in text


async def test_glob_no_match_and_bad_dir(ctx: ToolContext) -> None:
    result = await GlobTool().run({"pattern": "*.nothing"}, ctx)
    assert not result.is_error and "No files found" in result.as_text()
    result = await GlobTool().run({"pattern": "*", "path": "missing"}, ctx)
    assert result.is_error and "does not exist" in result.as_text()
    assert (await GlobTool().run({"pattern": ""}, ctx)).is_error


# ------------------------------------------------------------------------------------------------ grep

ENGINES = [
    pytest.param("python", id="python"),
    pytest.param("rg", id="rg"),
]


def make_grep(engine: str) -> GrepTool:
    """The grep tool on `engine`; "rg" needs ripgrep (skips without it here, fails under CI)."""
    if engine == "python":
        return GrepTool(use_ripgrep=False)
    return GrepTool(rg_path=require_program("rg", "grep's ripgrep engine"))


@pytest.fixture
def tree(ctx: ToolContext) -> Path:
    root = ctx.cwd
    (root / "pkg").mkdir()
    (root / ".git").mkdir()
    (root / "a.py").write_text("import os\n\ndef hello():\n    return 'Hello'\n")
    (root / "pkg/b.py").write_text("x = 1\ny = 2\nhello = 3\nz = 4\nw = 5\nv = 6\nhello()\n")
    (root / "pkg/c.txt").write_text("nothing here\n")
    (root / "blob.bin").write_bytes(b"\0\0hello\0")
    (root / ".git/HEAD").write_text("hello\n")
    set_mtime(root / "a.py", 1000)
    set_mtime(root / "pkg/b.py", 2000)
    return root


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_files_with_matches_newest_first(engine: str, ctx: ToolContext, tree: Path) -> None:
    result = await make_grep(engine).run({"pattern": "hello"}, ctx)
    assert not result.is_error, result.as_text()
    assert result.as_text().splitlines() == ["pkg/b.py", "a.py"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_content_mode(engine: str, ctx: ToolContext, tree: Path) -> None:
    result = await make_grep(engine).run({"pattern": r"hello\(", "output_mode": "content"}, ctx)
    assert result.as_text().splitlines() == ["a.py:3:def hello():", "pkg/b.py:7:hello()"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_content_with_context(engine: str, ctx: ToolContext, tree: Path) -> None:
    result = await make_grep(engine).run(
        {"pattern": "^hello", "output_mode": "content", "context": 1, "path": "pkg"}, ctx
    )
    assert result.as_text().splitlines() == [
        f"(paths relative to {tree / 'pkg'})",
        "b.py-2-y = 2",
        "b.py:3:hello = 3",
        "b.py-4-z = 4",
        "--",
        "b.py-6-v = 6",
        "b.py:7:hello()",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_context_groups_across_files(engine: str, ctx: ToolContext, tree: Path) -> None:
    result = await make_grep(engine).run({"pattern": "def hello|^x =", "output_mode": "content", "context": 1}, ctx)
    assert result.as_text().splitlines() == [
        "a.py-2-",
        "a.py:3:def hello():",
        "a.py-4-    return 'Hello'",
        "--",
        "pkg/b.py:1:x = 1",
        "pkg/b.py-2-y = 2",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_count_case_insensitive_and_glob(engine: str, ctx: ToolContext, tree: Path) -> None:
    grep = make_grep(engine)
    result = await grep.run({"pattern": "hello", "output_mode": "count", "case_insensitive": True}, ctx)
    assert result.as_text().splitlines() == ["a.py:2", "pkg/b.py:2"]
    result = await grep.run({"pattern": "hello", "glob": "*.{txt,py}", "path": "pkg"}, ctx)
    assert result.as_text().splitlines()[1:] == ["b.py"]
    result = await grep.run({"pattern": "hello", "glob": "!b.py"}, ctx)
    assert result.as_text().splitlines() == ["a.py"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_single_file(engine: str, ctx: ToolContext, tree: Path) -> None:
    result = await make_grep(engine).run({"pattern": "import", "path": "a.py", "output_mode": "content"}, ctx)
    assert result.as_text().splitlines() == ["a.py:1:import os"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_no_match(engine: str, ctx: ToolContext, tree: Path) -> None:
    result = await make_grep(engine).run({"pattern": "zzz_nothing"}, ctx)
    assert not result.is_error and result.as_text().startswith("No matches for 'zzz_nothing'")


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_bad_regex(engine: str, ctx: ToolContext, tree: Path) -> None:
    result = await make_grep(engine).run({"pattern": "(unclosed"}, ctx)
    assert result.is_error
    assert result.as_text().startswith("invalid regular expression '(unclosed'")
    assert "\n" not in result.as_text()


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_lookaround_works(engine: str, ctx: ToolContext, tree: Path) -> None:
    # Rust's regex has no look-ahead; the tool falls back to Python's engine for such patterns.
    result = await make_grep(engine).run({"pattern": r"hello(?= = 3)", "output_mode": "content"}, ctx)
    assert result.as_text().splitlines() == ["pkg/b.py:3:hello = 3"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_max_results(engine: str, ctx: ToolContext) -> None:
    (ctx.cwd / "many.txt").write_text("match\n" * 50)
    result = await make_grep(engine).run({"pattern": "match", "output_mode": "content", "max_results": 5}, ctx)
    lines = result.as_text().splitlines()
    assert lines[:5] == [f"many.txt:{i}:match" for i in range(1, 6)]
    assert "showing the first 5" in result.as_text()


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_long_lines_cut(engine: str, ctx: ToolContext) -> None:
    (ctx.cwd / "min.js").write_text("needle" + "x" * 5000 + "\n")
    result = await make_grep(engine).run({"pattern": "needle", "output_mode": "content"}, ctx)
    assert "line truncated" in result.as_text() and len(result.as_text()) < 700


async def test_grep_bad_arguments(ctx: ToolContext) -> None:
    grep = GrepTool(use_ripgrep=False)
    assert (await grep.run({"pattern": ""}, ctx)).is_error
    assert (await grep.run({"pattern": "x", "output_mode": "lines"}, ctx)).is_error
    assert (await grep.run({"pattern": "x", "path": "missing"}, ctx)).is_error
    assert (await grep.run({"pattern": "x", "context": -1}, ctx)).is_error


async def test_grep_uses_rg_from_path_only_when_allowed() -> None:
    assert GrepTool(use_ripgrep=False).ripgrep() is None
    assert GrepTool(rg_path="/opt/rg").ripgrep() == "/opt/rg"
    assert GrepTool().ripgrep() == RG


async def test_grep_missing_rg_binary_is_error(ctx: ToolContext, tree: Path) -> None:
    result = await GrepTool(rg_path=str(tree / "no-such-rg")).run({"pattern": "x"}, ctx)
    assert result.is_error and "ripgrep" in result.as_text()


def fake_rg(directory: Path, body: str) -> str:
    """An executable standing in for ripgrep, to drive the subprocess handling without a real rg."""
    script = directory / "fake-rg"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


async def test_rg_output_paths_lose_dot_slash(ctx: ToolContext, tmp_path: Path) -> None:
    (ctx.cwd / "a.py").write_text("x\n")
    rg = fake_rg(tmp_path, "printf './a.py:1:x\\n'")
    result = await GrepTool(rg_path=rg).run({"pattern": "x", "output_mode": "content"}, ctx)
    assert result.as_text() == "a.py:1:x"


async def test_rg_timeout_kills_its_group(ctx: ToolContext, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    rg = fake_rg(tmp_path, f"echo ./a.py; sleep 100 & echo $! > {pidfile}; wait")
    result = await GrepTool(rg_path=rg, timeout_s=0.5).run({"pattern": "x"}, ctx)
    assert not result.is_error
    assert "stopped early" in result.as_text()
    assert await wait_gone(int(pidfile.read_text()))


async def test_rg_cancel_kills_its_group(ctx: ToolContext, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    rg = fake_rg(tmp_path, f"sleep 100 & echo $! > {pidfile}; wait")
    task = asyncio.create_task(GrepTool(rg_path=rg).run({"pattern": "x"}, ctx))
    deadline = time.monotonic() + 5
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(int(pidfile.read_text()))
