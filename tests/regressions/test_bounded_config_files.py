"""Issue 18, finding 13: a repository's files could crash or hang the agent — `.mcp.json` a symlink to /dev/zero
(memory grows without end), `.claude/settings.json` a link to /dev/tty or a FIFO (the read never returns), JSON
nested 200k deep (a RecursionError shown as "unexpected error" on every command).

Every config / settings / Markdown file a repository can ship is read through one bounded door
(`mini_claude.jsonfile`): regular files only, a size cap, a depth limit. A bad file is one clear error naming it
and why, and costs that file only: the run goes on and answers.

End to end: the real CLI (`python -m mini_claude -p`) in a folder holding the hostile files, against the mock model;
each reader is also checked on its own with real files (FIFOs, device links, deep and big files)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from mini_claude.agent.commands import load_commands
from mini_claude.agent.memory import load_memory
from mini_claude.errors import ConfigError, ToolError
from mini_claude.jsonfile import MAX_JSON_DEPTH, MAX_JSON_FILE_BYTES, read_json_object
from mini_claude.mcp.config import load_mcp_config
from mini_claude.models.factory import MAX_DOTENV_BYTES, load_dotenv
from mini_claude.settings import load_settings
from mini_claude.skills.local import LocalSkill, discover_local_skills
from mini_claude.trust import check_trust
from tests.integration.conftest import Cli, answer

pytestmark = pytest.mark.timeout(120)

DEEP_LEVELS = 200_000
RUN_TIMEOUT_S = 30.0  # the run answers in a second or two; before the fix a FIFO made it wait forever



def _deep_json() -> str:
    return '{"mcpServers": ' + "[" * DEEP_LEVELS + "]" * DEEP_LEVELS + "}"


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _link(path: Path, target: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    return path


def test_hostile_repository_files_cost_only_themselves_end_to_end(cli: Cli) -> None:
    """`.mcp.json` → /dev/zero, `.claude/settings.json` a FIFO, `.claude/settings.local.json` nested 200k deep,
    CLAUDE.md → /dev/tty, a command that is a FIFO: the run answers, one line names each file and why."""
    _link(cli.work / ".mcp.json", "/dev/zero")
    _fifo(cli.work / ".claude" / "settings.json")
    (cli.work / ".claude" / "settings.local.json").write_text(_deep_json())
    _fifo(cli.work / ".claude" / "commands" / "hang.md")
    _fifo(cli.work / ".claude" / "rules" / "hang.md")
    (cli.work / ".git").mkdir()  # the project root: its rules are read
    mock = cli.mock([answer("still here")])

    r = cli.run("-p", "hi", timeout=RUN_TIMEOUT_S)

    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "still here"
    assert len(mock.requests) == 1
    stderr = r.stderr
    assert ".mcp.json: not a regular file (a character device)" in stderr, stderr
    assert ".claude/settings.json: not a regular file (a FIFO)" in stderr, stderr
    assert f".claude/settings.local.json: nested deeper than {MAX_JSON_DEPTH} levels" in stderr, stderr
    assert "hang.md: not loaded: not a regular file (a FIFO)" in stderr, stderr  # the rule file (memory)
    assert "commands/hang.md: not a regular file (a FIFO)" in stderr, stderr
    assert "unexpected error" not in stderr and "RecursionError" not in stderr and "Traceback" not in stderr


def test_a_settings_link_to_the_terminal_is_refused_unopened(cli: Cli) -> None:
    _link(cli.work / ".claude" / "settings.json", "/dev/tty")
    cli.mock([answer("ok")])
    r = cli.run("-p", "hi", timeout=RUN_TIMEOUT_S)
    assert r.rc == 0, r.stderr
    assert ".claude/settings.json: not a regular file (a character device)" in r.stderr, r.stderr


def test_settings_reader(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _fifo(home / ".claude" / "settings.json")
    (work / ".claude").mkdir(parents=True)
    (work / ".claude" / "settings.json").write_text(_deep_json())
    (work / ".claude" / "settings.local.json").write_text('{"model": "m"}')
    settings = load_settings(cwd=work, home=home)
    assert [str(e) for e in settings.errors] == [
        "~/.claude/settings.json: not a regular file (a FIFO)",
        f".claude/settings.json: nested deeper than {MAX_JSON_DEPTH} levels"]
    assert settings.model == "m"  # the good file still counts


def test_mcp_config_reader(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    _link(work / ".mcp.json", "/dev/zero")
    _fifo(home / ".claude.json")
    big = tmp_path / "big.json"
    big.write_bytes(b'{"mcpServers": {}, "pad": "' + b"x" * MAX_JSON_FILE_BYTES + b'"}')
    deep = '{"mcpServers": {"a": ' + "[" * 5000 + "]" * 5000 + "}}"
    ok = json.dumps({"mcpServers": {"fine": {"command": "true"}}})
    loaded = load_mcp_config(cwd=work, home=home, env={}, extra=[str(big), deep, ok])
    assert [str(e) for e in loaded.errors] == [
        "~/.claude.json: not a regular file (a FIFO)",
        ".mcp.json: not a regular file (a character device)",
        f"{big}: larger than 10 MB",
        f"--mcp-config: nested deeper than {MAX_JSON_DEPTH} levels"]
    assert list(loaded.servers) == ["fine"]


def test_depth_limit_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    errors: list[ConfigError] = []
    path.write_text('{"a": ' + "[" * (MAX_JSON_DEPTH - 1) + "1" + "]" * (MAX_JSON_DEPTH - 1) + "}")
    assert read_json_object(path, "x.json", errors) is not None and errors == []
    path.write_text('{"a": ' + "[" * MAX_JSON_DEPTH + "1" + "]" * MAX_JSON_DEPTH + "}")
    assert read_json_object(path, "x.json", errors) is None
    assert [str(e) for e in errors] == [f"x.json: nested deeper than {MAX_JSON_DEPTH} levels"]


def test_trust_reads_claude_json_boundedly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _fifo(home / ".claude.json")
    assert not check_trust(tmp_path, home=home, state=tmp_path / "state").trusted  # answered, no hang


def test_memory_reader(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (work / ".git").mkdir()
    _fifo(work / "notes" / "pipe.md")
    (work / "CLAUDE.md").write_text("Read @notes/pipe.md and @notes/real.md\n")
    (work / "notes" / "real.md").write_text("real notes\n")
    memory = load_memory(work, home)
    assert [f.path.name for f in memory.files] == ["CLAUDE.md", "real.md"]
    assert memory.warnings == [f"{work / 'notes' / 'pipe.md'}: not loaded: not a regular file (a FIFO)"]


def test_commands_reader(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    _fifo(work / ".claude" / "commands" / "pipe.md")
    (work / ".claude" / "commands" / "big.md").write_bytes(b"x" * (64 * 1024 + 1))
    (work / ".claude" / "commands" / "ok.md").write_text("do it")
    home.mkdir()
    commands, warnings = load_commands(work, home)
    assert list(commands) == ["/ok"]
    assert sorted(warnings) == sorted([f"{work / '.claude/commands/pipe.md'}: not a regular file (a FIFO)",
                                       f"{work / '.claude/commands/big.md'}: larger than 65536 bytes"])


def test_skill_files_are_read_boundedly(tmp_path: Path) -> None:
    skill_dir = tmp_path / ".claude" / "skills" / "s"
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text("---\nname: s\ndescription: a skill\n---\nbody\n")
    _fifo(skill_dir / "pipe.txt")
    [skill] = discover_local_skills(tmp_path, None)
    assert isinstance(skill, LocalSkill)

    async def read(name: str) -> str:
        return await asyncio.wait_for(skill.read_file(name), timeout=10)

    with pytest.raises(ToolError, match=r"pipe.txt: not a regular file \(a FIFO\)"):
        asyncio.run(read("pipe.txt"))
    assert asyncio.run(read("SKILL.md")).endswith("body\n")


def test_dotenv_reader(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\.env: not a regular file \(a FIFO\)"):
        load_dotenv(_fifo(tmp_path / ".env"))
    big = tmp_path / "big.env"
    big.write_bytes(b"A=" + b"x" * MAX_DOTENV_BYTES + b"\n")
    with pytest.raises(ConfigError, match=r"big\.env: larger than 1 MB"):
        load_dotenv(big)


def test_an_oversized_dotenv_costs_a_warning_not_the_run(cli: Cli) -> None:
    (cli.work / ".env").write_text("A=" + "x" * (MAX_DOTENV_BYTES + 10) + "\n")
    cli.mock([answer("still here")])
    r = cli.run("-p", "hi")
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "still here"
    assert "larger than" in r.stderr and "the project's .env is ignored" in r.stderr, r.stderr
