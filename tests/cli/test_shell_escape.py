"""The REPL's `!cmd` pieces (cli/shell_escape.py) with real bash: stdout and stderr apart, the exit code, a timeout,
a cancelled command's whole process group killed and reaped, long output cut in the middle with a marker, the
blocks in Claude Code's shape, and the gate (PreToolUse hooks weighed, deny rules, ask) as for a model's call."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mini_claude.cli.shell_escape import ShellOutput, admit, bash_blocks, run_command
from mini_claude.hooks.outcomes import BeforeTool, HookPermission
from mini_claude.permissions import PermissionMode
from mini_claude.permissions.gate import PermissionGate
from mini_claude.permissions.rules import RuleSet
from mini_claude.tools.shell import MAX_OUTPUT_CHARS, BashTool, group_alive
from tests.helpers import eventually


async def test_outputs_apart_and_the_exit_code(tmp_path: Path) -> None:
    out = await run_command("echo out; echo err >&2; exit 4", cwd=tmp_path, env=None)
    assert out == ShellOutput("out", "err\nExit code 4", 4)
    assert await run_command("pwd", cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}) == ShellOutput(str(tmp_path), "", 0)


async def test_a_timeout_says_so(tmp_path: Path) -> None:
    out = await run_command("echo started; sleep 30", cwd=tmp_path, env=None, timeout_s=0.3)
    assert out == ShellOutput("started", "Command timed out after 0.3s", None)


async def test_cancelling_kills_the_whole_group(tmp_path: Path) -> None:
    marker = tmp_path / "group"
    task = asyncio.ensure_future(run_command(f"echo $$ > {marker}; sleep 60 & sleep 60", cwd=tmp_path, env=None))
    await eventually(lambda: marker.is_file() and marker.read_text().strip(), "the command to start")
    group = int(marker.read_text())
    task.cancel()
    await asyncio.wait({task}, timeout=10)
    assert task.cancelled()
    assert not group_alive(group)  # the background sleep too


async def test_long_output_is_cut_in_the_middle(tmp_path: Path) -> None:
    out = await run_command("echo HEAD; head -c 400000 /dev/zero | tr '\\0' x; echo; echo TAIL", cwd=tmp_path,
                            env=None)
    assert out.stdout.startswith("HEAD\n") and out.stdout.endswith("\nTAIL")
    assert "characters not shown …]" in out.stdout and len(out.stdout) < MAX_OUTPUT_CHARS + 100


def test_blocks_in_claude_codes_shape() -> None:
    assert bash_blocks("cat <a", ShellOutput("1 < 2 & 3", "", 0)) == [
        {"type": "text", "text": "<bash-input>cat <a</bash-input>"},
        {"type": "text", "text": "<bash-stdout>1 &lt; 2 &amp; 3</bash-stdout><bash-stderr></bash-stderr>"}]


class _Hooks:
    """PreToolUse only (what `admit` calls): the decision given, the calls seen."""

    def __init__(self, permission: HookPermission | None) -> None:
        self.permission = permission
        self.seen: list[tuple[str, dict[str, Any]]] = []

    async def pre_tool_use(self, name: str, args: dict[str, Any], tool_use_id: str) -> BeforeTool:
        self.seen.append((name, args))
        return BeforeTool(permission=self.permission)


async def test_the_gate_decides_as_for_a_models_call(tmp_path: Path) -> None:
    asked: list[str] = []

    async def ask(tool: Any, args: dict[str, Any]) -> str:
        asked.append(args["command"])
        return "no"

    rules = RuleSet.from_strings(allow=["Bash(ls:*)"], deny=["Bash(rm:*)"])
    gate = PermissionGate(PermissionMode.DEFAULT, rules, ask=ask, cwd=tmp_path, home=tmp_path)
    shell = BashTool()
    assert (await admit("ls -la", gate=gate, shell=shell, hooks=None)).allowed
    refused = await admit("rm -rf x", gate=gate, shell=shell, hooks=None)
    assert not refused.allowed and "Bash(rm:*)" in refused.reason and asked == []
    assert not (await admit("make", gate=gate, shell=shell, hooks=None)).allowed and asked == ["make"]
    hooks = _Hooks(HookPermission("deny", "not on Fridays"))
    vetoed = await admit("ls", gate=gate, shell=shell, hooks=hooks)  # type: ignore[arg-type]
    assert not vetoed.allowed and "not on Fridays" in vetoed.reason and hooks.seen == [("Bash", {"command": "ls"})]


async def test_a_bang_command_gets_the_bash_tools_environment_and_its_output_is_masked(tmp_path: Path) -> None:
    """`!cmd` runs with the Bash tool's environment (no model key, no secret-looking variable) and what the model
    and the screen get of its output has every known secret value masked."""
    from mini_claude.cli.terminal.render import clean
    from mini_claude.secrets import SECRETS

    SECRETS.clear()
    try:
        shell = BashTool(env={"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-bang-0123456789",
                              "GITHUB_TOKEN": "ghp-bang-0123456789", "FAVOURITE": "teal"})
        (tmp_path / "k.txt").write_text("sk-bang-0123456789")
        out = await run_command('echo "${ANTHROPIC_API_KEY:-unset} ${GITHUB_TOKEN:-unset} $FAVOURITE"; cat k.txt',
                                cwd=tmp_path, env=shell.env)
        assert out.stdout == "unset unset teal\nsk-bang-0123456789"  # the file's copy: masked on the way out
        assert bash_blocks("x", out)[1]["text"] == (
            "<bash-stdout>unset unset teal\n[secret ANTHROPIC_API_KEY]</bash-stdout><bash-stderr></bash-stderr>")
        assert clean(out.stdout) == "unset unset teal\n[secret ANTHROPIC_API_KEY]"  # what the REPL prints
    finally:
        SECRETS.clear()
