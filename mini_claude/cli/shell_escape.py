"""The REPL's `!cmd`: a shell command the user typed, run at once and handed to the model as Claude Code does.

The command meets the same door as the model's own Bash call (`admit`): the user's PreToolUse hooks, then the
permission gate, so a deny rule refuses it with its reason and what the gate would ask about is asked with the
usual question (Claude Code's bash mode runs it unasked; the gate is this project's choice). It runs with
`bash -c` in the session's folder and environment, stdin /dev/null, in its own process group, stdout and stderr
read apart and bounded (`run_command`); whatever way it ends (done, timed out, Ctrl+C or Esc cancelling it) the
whole group is killed and the child reaped.

What the model sees is Claude Code's bash-mode shape (its 2.1.197 binary, `processBashCommand`, and its requests to
the mock model): a user message holding `<bash-input>cmd</bash-input>` and
`<bash-stdout>…</bash-stdout><bash-stderr>…</bash-stderr>` (`&`, `<`, `>` escaped in the outputs), then the model
answers at once (Claude Code's `respondToBashCommands` default). One difference, on purpose: Claude Code's shell
merges the two streams (all of it in bash-stdout, or in bash-stderr when the command failed, without the exit
code); here each stream goes in its own tag and a failing command's stderr ends with `Exit code N`. The outputs
lose the secret values the session knows (mini_claude.secrets) before the model sees them. A command
interrupted before it ended sends nothing (Claude Code puts the line back in the input box; so does the REPL).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.agent.hook_points import HookPoints
from mini_claude.permissions.gate import Decision, PermissionGate
from mini_claude.secrets import mask
from mini_claude.tools.base import Tool
from mini_claude.tools.shell import DEFAULT_TIMEOUT_MS, MAX_OUTPUT_CHARS, terminate_group, wait_for_exit

__all__ = ["ShellOutput", "admit", "bash_blocks", "run_command"]

TIMEOUT_S = DEFAULT_TIMEOUT_MS / 1000  # as a model's Bash call without a timeout
DRAIN_TIMEOUT_S = 2.0  # for the pipes to reach EOF once the group is dead
READ_CHUNK_BYTES = 64 * 1024
_KEEP_BYTES = 4 * MAX_OUTPUT_CHARS  # from each end of each stream


@dataclass(frozen=True)
class ShellOutput:
    """How a `!` command ended: its outputs (cut in the middle when long) and exit code (None: timed out)."""

    stdout: str
    stderr: str
    code: int | None


async def admit(command: str, *, gate: PermissionGate, shell: Tool, hooks: HookPoints | None) -> Decision:
    """The user's PreToolUse hooks, then the gate (which may ask the user), as for a model's Bash call."""
    args: dict[str, Any] = {"command": command}
    before = await hooks.pre_tool_use(shell.name, args, "") if hooks is not None else None
    return await gate.check(shell, args, hook=before.permission if before is not None else None)


async def run_command(command: str, *, cwd: Path, env: Mapping[str, str] | None,
                      timeout_s: float = TIMEOUT_S, argv: Sequence[str] | None = None) -> ShellOutput:
    """Run `command` with `bash -c` (see the module docstring). Cancelling this kills the group, reaps, re-raises.
    `argv`: the whole command line instead (the OS sandbox's, which runs the shell inside)."""
    proc = await asyncio.create_subprocess_exec(
        *(argv if argv is not None else (shutil.which("bash") or "/bin/sh", "-c", command)), cwd=cwd,
        env=None if env is None else dict(env),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = _Capture(), _Capture()
    readers = {asyncio.ensure_future(out.pump(proc.stdout)), asyncio.ensure_future(err.pump(proc.stderr))}
    try:
        exited = await wait_for_exit(proc, timeout_s)
    finally:  # done, timed out or cancelled: the whole group goes and the child is reaped
        await terminate_group(proc)
        _, left = await asyncio.wait(readers, timeout=DRAIN_TIMEOUT_S)
        for reader in left:
            reader.cancel()
        if left:
            await asyncio.wait(left)
    stderr = err.text()
    if not exited:
        return ShellOutput(out.text(), _joined(stderr, f"Command timed out after {timeout_s:g}s"), None)
    code = proc.returncode
    return ShellOutput(out.text(), stderr if code == 0 else _joined(stderr, f"Exit code {code}"), code)


def bash_blocks(command: str, output: ShellOutput) -> list[dict[str, Any]]:
    """The user content the model gets for a `!` command that ran."""
    return [{"type": "text", "text": f"<bash-input>{command}</bash-input>"},
            {"type": "text", "text": f"<bash-stdout>{_escaped(mask(output.stdout))}</bash-stdout>"
                                     f"<bash-stderr>{_escaped(mask(output.stderr))}</bash-stderr>"}]


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _joined(text: str, line: str) -> str:
    return f"{text.rstrip(chr(10))}\n{line}" if text.strip() else line


class _Capture:
    """One stream's bytes: the first and the last `_KEEP_BYTES`, and how many were dropped between them."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    async def pump(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(READ_CHUNK_BYTES):
            room = _KEEP_BYTES - len(self.head)
            self.head += chunk[:room]
            self.tail += chunk[room:] if room > 0 else chunk
            if len(self.tail) > _KEEP_BYTES:
                self.dropped += len(self.tail) - _KEEP_BYTES
                del self.tail[:len(self.tail) - _KEEP_BYTES]

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if len(head) + len(tail) <= MAX_OUTPUT_CHARS and not self.dropped:
            return (head + tail).rstrip("\n")
        whole, half = head + tail, MAX_OUTPUT_CHARS // 2
        cut = len(whole) - 2 * half + self.dropped
        return f"{whole[:half]}\n[… {cut:,} characters not shown …]\n{whole[-half:]}".rstrip("\n")
