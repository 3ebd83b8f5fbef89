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
        {"pattern": "^hello", "output_mode": "content", "-C": 1, "path": "pkg"}, ctx
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
    result = await make_grep(engine).run({"pattern": "def hello|^x =", "output_mode": "content", "-C": 1}, ctx)
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
    result = await grep.run({"pattern": "hello", "output_mode": "count", "-i": True}, ctx)
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
    result = await make_grep(engine).run({"pattern": "match", "output_mode": "content", "head_limit": 5}, ctx)
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
    assert (await grep.run({"pattern": "x", "-C": -1}, ctx)).is_error


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


# ------------------------------------------------------------------------ grep: the rest of Claude Code's keys


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_after_and_before_context(engine: str, ctx: ToolContext, tree: Path) -> None:
    grep = make_grep(engine)
    query = {"pattern": "^hello", "output_mode": "content", "path": "pkg"}
    after = (await grep.run({**query, "-A": 1}, ctx)).as_text().splitlines()[1:]
    assert after == ["b.py:3:hello = 3", "b.py-4-z = 4", "--", "b.py:7:hello()"]
    before = (await grep.run({**query, "-B": 1}, ctx)).as_text().splitlines()[1:]
    assert before == ["b.py-2-y = 2", "b.py:3:hello = 3", "--", "b.py-6-v = 6", "b.py:7:hello()"]
    # -C (or its other spelling, context) wins over -A / -B, as in Claude Code
    for key in ("-C", "context"):
        around = (await grep.run({**query, key: 1, "-A": 3, "-B": 0}, ctx)).as_text().splitlines()[1:]
        assert around == ["b.py-2-y = 2", "b.py:3:hello = 3", "b.py-4-z = 4", "--", "b.py-6-v = 6",
                          "b.py:7:hello()"]
    # context keys mean nothing outside content mode
    assert (await grep.run({"pattern": "^hello", "-A": 2}, ctx)).as_text().splitlines() == ["pkg/b.py"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_without_line_numbers(engine: str, ctx: ToolContext, tree: Path) -> None:
    grep = make_grep(engine)
    result = await grep.run({"pattern": r"hello\(", "output_mode": "content", "-n": False}, ctx)
    assert result.as_text().splitlines() == ["a.py:def hello():", "pkg/b.py:hello()"]
    result = await grep.run({"pattern": "^hello =", "output_mode": "content", "-n": False, "-C": 1}, ctx)
    assert result.as_text().splitlines() == ["pkg/b.py-y = 2", "pkg/b.py:hello = 3", "pkg/b.py-z = 4"]
    # line numbers are the default, as in Claude Code
    result = await grep.run({"pattern": "^hello =", "output_mode": "content", "-n": True}, ctx)
    assert result.as_text().splitlines() == ["pkg/b.py:3:hello = 3"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_file_type(engine: str, ctx: ToolContext, tree: Path) -> None:
    grep = make_grep(engine)
    (tree / "pkg/Makefile").write_text("hello:\n\techo here\n")
    (tree / "pkg/notes.md").write_text("hello there\n")
    result = await grep.run({"pattern": "hello|here", "type": "txt", "output_mode": "count"}, ctx)
    assert result.as_text().splitlines() == ["pkg/c.txt:1"]
    result = await grep.run({"pattern": "hello", "type": "make", "output_mode": "count"}, ctx)
    assert result.as_text().splitlines() == ["pkg/Makefile:1"]
    result = await grep.run({"pattern": "hello", "type": "py", "glob": "!a.py", "output_mode": "count"}, ctx)
    assert result.as_text().splitlines() == ["pkg/b.py:2"]
    result = await grep.run({"pattern": "hello", "type": "md", "output_mode": "content"}, ctx)
    assert result.as_text().splitlines() == ["pkg/notes.md:1:hello there"]


async def test_grep_unknown_file_type_is_a_clear_error(ctx: ToolContext, tree: Path) -> None:
    result = await GrepTool(use_ripgrep=False).run({"pattern": "x", "type": "cobolish"}, ctx)
    assert result.is_error
    assert result.as_text().startswith("unknown file type 'cobolish' for type; known types: asciidoc, c, ")
    assert "py" in result.as_text() and "glob" in result.as_text()


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_offset_pages_through_results(engine: str, ctx: ToolContext) -> None:
    grep = make_grep(engine)
    (ctx.cwd / "many.txt").write_text("match\n" * 50)
    result = await grep.run({"pattern": "match", "output_mode": "content", "offset": 10, "head_limit": 5}, ctx)
    lines = result.as_text().splitlines()
    assert lines[:5] == [f"many.txt:{i}:match" for i in range(11, 16)]
    assert "showing entries 11-15 of 50+ lines" in result.as_text()
    result = await grep.run({"pattern": "match", "output_mode": "content", "offset": 48}, ctx)
    assert result.as_text().splitlines()[:2] == ["many.txt:49:match", "many.txt:50:match"]
    assert "showing entries 49-50 of 50 lines" in result.as_text()
    result = await grep.run({"pattern": "match", "output_mode": "content", "offset": 50}, ctx)
    assert not result.is_error and result.as_text() == "No entries at offset 50: the search found 50+"
    # files mode pages through the newest-first list
    for i in range(3):
        (ctx.cwd / f"f{i}.py").write_text("match\n")
        set_mtime(ctx.cwd / f"f{i}.py", 1000 + i)
    set_mtime(ctx.cwd / "many.txt", 500)
    result = await grep.run({"pattern": "match", "offset": 1, "head_limit": 2}, ctx)
    assert result.as_text().splitlines()[:2] == ["f1.py", "f0.py"]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_head_limit_zero_is_no_limit(engine: str, ctx: ToolContext) -> None:
    (ctx.cwd / "many.txt").write_text("match\n" * 300)
    result = await make_grep(engine).run({"pattern": "match", "output_mode": "content", "head_limit": 0}, ctx)
    assert result.as_text().splitlines() == [f"many.txt:{i}:match" for i in range(1, 301)]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_multiline(engine: str, ctx: ToolContext) -> None:
    grep = make_grep(engine)
    (ctx.cwd / "f.txt").write_text("a\nstart x\nmid\nend y\nb\nstart z end\nc\n")
    (ctx.cwd / "g.txt").write_text("nothing\n")
    query = {"pattern": "start.*?end", "path": "f.txt"}
    result = await grep.run({**query, "output_mode": "content", "multiline": True}, ctx)
    assert result.as_text().splitlines() == ["f.txt:2:start x", "f.txt:3:mid", "f.txt:4:end y",
                                             "f.txt:6:start z end"]
    result = await grep.run({**query, "output_mode": "content", "multiline": True, "-C": 1}, ctx)
    assert result.as_text().splitlines() == ["f.txt-1-a", "f.txt:2:start x", "f.txt:3:mid", "f.txt:4:end y",
                                             "f.txt-5-b", "f.txt:6:start z end", "f.txt-7-c"]
    # in multiline mode a count is of matches (as ripgrep counts them), not of lines
    assert (await grep.run({**query, "output_mode": "count", "multiline": True}, ctx)).as_text() == "f.txt:2"
    # without it the pattern stays within a line
    assert (await grep.run({**query, "output_mode": "count"}, ctx)).as_text() == "f.txt:1"
    result = await grep.run({"pattern": r"mid\nend", "multiline": True}, ctx)
    assert result.as_text().splitlines() == ["f.txt"]
    result = await grep.run({"pattern": r"^end y$", "multiline": True, "output_mode": "content"}, ctx)
    assert result.as_text().splitlines() == ["f.txt:4:end y"]


async def test_grep_bad_new_arguments(ctx: ToolContext) -> None:
    grep = GrepTool(use_ripgrep=False)
    for args, message in (({"-A": -1}, "-A must be a whole number of 0 or more"),
                          ({"offset": 1.5}, "offset must be a whole number of 0 or more"),
                          ({"-n": "yes"}, "-n must be true or false"),
                          ({"multiline": 1}, "multiline must be true or false"),
                          ({"head_limit": -1}, "head_limit must be a whole number of 0 or more")):
        result = await grep.run({"pattern": "x", **args}, ctx)
        assert result.is_error and result.as_text() == message
