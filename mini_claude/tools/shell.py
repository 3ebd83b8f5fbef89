"""The `Bash` tool: a shell command in the project's working directory, in the foreground (its combined output is
the result) or, with `run_in_background`, as a background task of the session (tools/background.py: the result is
the task's id and output file; TaskOutput and TaskStop in tools/task_tools.py read and end it).

Either way the command starts the same way (tools/procs.py `start_shell`: its own process group, stdin /dev/null)
and every way a foreground run ends — the command finished, it timed out, or the caller was cancelled — ends its
whole group (SIGTERM, a short grace, SIGKILL) and reaps the shell, so nothing the command started survives it, not
even a background grandchild that still holds the output pipe. The process-group helpers live in tools/procs.py
and are re-exported here for the other tools that run subprocesses.

A command runs in the environment it is given (`BashTool(env=...)`: the session's, which is the real environment
with the settings' `env` on top, `settings.session_env`), else in mini-claude's own; in either, without the
agent's own model credentials (`ANTHROPIC_API_KEY`, …: `AGENT_CREDENTIAL_VARS`, which no MCP server gets either)
and without the variables whose names look like secrets, but for those `policy` passes (mini_claude.secrets
`command_env`: the user's `shellEnvironment.passThrough`, and what a settings file's `env` set). The values left
out are registered for masking, so a command that finds one elsewhere still shows `[secret NAME]`.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mini_claude.sandbox.runtime import DISABLE_KEY, Launch, Sandbox
from mini_claude.secrets import DEFAULT_POLICY, EnvPolicy, command_env
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.procs import (
    KILL_GRACE_S,
    finish_task,
    group_alive,
    shell_path,
    start_shell,
    terminate_group,
    wait_for_exit,
)

__all__ = [
    "BACKGROUND_DEFAULT_TIMEOUT_MS",
    "BACKGROUND_MAX_TIMEOUT_MS",
    "DEFAULT_TIMEOUT_MS",
    "KILL_GRACE_S",
    "MAX_OUTPUT_CHARS",
    "MAX_TIMEOUT_MS",
    "PIPE_GRACE_S",
    "BashTool",
    "SandboxRefused",
    "group_alive",
    "terminate_group",
    "wait_for_exit",
]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
# A background command's own limits (Claude Code's: ten minutes unless the call says otherwise, two hours at most).
BACKGROUND_DEFAULT_TIMEOUT_MS = 600_000
BACKGROUND_MAX_TIMEOUT_MS = 7_200_000
MAX_OUTPUT_CHARS = 30_000
# After the shell exits, background children may keep the pipe open: read what they write for this long, then kill.
PIPE_GRACE_S = 0.5
# How long to wait for the output pipe to reach EOF once the group is dead (only a process that left the group
# with setsid can hold it longer; we stop reading then).
DRAIN_TIMEOUT_S = 2.0
READ_CHUNK_BYTES = 64 * 1024
# Bytes kept from each end of the output: enough for MAX_OUTPUT_CHARS of any UTF-8 text.
_KEEP_BYTES = 4 * MAX_OUTPUT_CHARS


# --------------------------------------------------------------------------------------------------------------
# Output capture


class _HeadTail:
    """Keeps the first and last `keep` bytes of a stream, and how many bytes went by in all."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.keep:
                del self.tail[: len(self.tail) - self.keep]

    def render(self, max_chars: int) -> str:
        """The output as text: whole when it fits in `max_chars`, else its head and tail with a marker between."""
        dropped = self.total - len(self.head) - len(self.tail)
        half = max_chars // 2
        if dropped == 0:
            text = bytes(self.head + self.tail).decode("utf-8", "replace")
            if len(text) <= max_chars:
                return text
            head, tail = text[:half], text[len(text) - half :]
        else:
            head = bytes(self.head).decode("utf-8", "replace")[:half]
            tail_text = bytes(self.tail).decode("utf-8", "replace")
            tail = tail_text[len(tail_text) - half :]
        omitted = max(self.total - len(head.encode()) - len(tail.encode()), 0)
        return (
            f"{head}\n\n… [output truncated: {omitted} of {self.total} bytes omitted from the middle; to see "
            f"everything, redirect the output to a file and inspect it with Grep or Read] …\n\n{tail}"
        )


async def _pump(stream: asyncio.StreamReader, sink: _HeadTail) -> None:
    while chunk := await stream.read(READ_CHUNK_BYTES):
        sink.add(chunk)


# --------------------------------------------------------------------------------------------------------------
# The tool


class SandboxRefused(Exception):
    """The sandbox refuses the call (leaving it is forbidden, or it cannot start and must)."""


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


class BashTool:
    """Runs a shell command in the session's working directory and returns its combined output, or starts it in
    the background and returns at once."""

    name = "Bash"
    description = (
        "Run a shell command with `bash -c` in the project's working directory and return its combined stdout "
        "and stderr. Each call is a fresh shell: `cd`, variables and shell state do not persist between calls. "
        "stdin is /dev/null and there is no terminal, so interactive programs (editors, pagers, prompts) will not "
        "work: pass non-interactive flags (e.g. `git --no-pager`, `-y`). The command is killed after `timeout` "
        f"milliseconds (default {DEFAULT_TIMEOUT_MS} ms, at most {MAX_TIMEOUT_MS} ms). Background processes "
        "(`cmd &`) do not outlive the call: when the command finishes, everything it started is stopped. Output "
        f"longer than {MAX_OUTPUT_CHARS} characters is cut in the middle (head and tail kept). A non-zero exit code "
        "is reported as an error. Prefer Read, Glob and Grep over cat, find and grep for reading and searching "
        "files.\n\nFor a long-running command whose result you do not need right away (a dev server, a watcher, a "
        "long build or test run), set `run_in_background`: the call returns at once with a task id and the file "
        "its output is written to. TaskOutput reads what it printed since your last look (and can wait for it to "
        "end), TaskStop ends it, and you are told when it finishes. A background command is stopped after "
        f"`timeout` ms (default {BACKGROUND_DEFAULT_TIMEOUT_MS} ms, at most {BACKGROUND_MAX_TIMEOUT_MS} ms) and when "
        "the session ends. Do not add `&` to a command you run this way."
    )
    read_only = False

    def __init__(self, *, max_output_chars: int = MAX_OUTPUT_CHARS, env: Mapping[str, str] | None = None,
                 policy: EnvPolicy = DEFAULT_POLICY) -> None:
        # the session's environment (else mini-claude's own), never with the agent's credentials or, unless the
        # policy passes them, secret-looking variables in it
        built = command_env(os.environ if env is None else env, policy)
        self.env = built.env
        self.left_out = built.left_out  # the names left out (never their values)
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "command": {"type": "string", "description": "The command line to run."},
                "timeout": {
                    "type": "integer",
                    "description": f"Kill the command after this many milliseconds (default {DEFAULT_TIMEOUT_MS}, "
                    f"max {MAX_TIMEOUT_MS}; in the background default {BACKGROUND_DEFAULT_TIMEOUT_MS}, max "
                    f"{BACKGROUND_MAX_TIMEOUT_MS}).",
                    "minimum": 1,
                    "maximum": BACKGROUND_MAX_TIMEOUT_MS,
                },
                "description": {
                    "type": "string",
                    "description": "A few words saying what the command does, shown to the user.",
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "Start the command as a background task and return at once with its id and "
                    "output file, instead of waiting for it to finish.",
                },
                DISABLE_KEY: {
                    "type": "boolean",
                    "description": "Only when the OS sandbox is on and stopped a command that must run: set true to "
                    "run it outside the sandbox. The user is always asked first.",
                },
            },
            "required": ["command"],
        }
        self.max_output_chars = max_output_chars
        self.sandbox: Sandbox | None = None  # the session's OS sandbox (mini_claude/sandbox), set by the session

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolResult.error("command must be a non-empty string")
        background = args.get("run_in_background") is True
        default_ms, max_ms = ((BACKGROUND_DEFAULT_TIMEOUT_MS, BACKGROUND_MAX_TIMEOUT_MS) if background
                              else (DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS))
        timeout_ms = args.get("timeout", default_ms)
        if timeout_ms is None:
            timeout_ms = default_ms
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int | float) or timeout_ms <= 0:
            return ToolResult.error("timeout must be a positive number of milliseconds")
        timeout_s = min(float(timeout_ms), max_ms) / 1000
        if not ctx.cwd.is_dir():
            return ToolResult.error(f"working directory {ctx.cwd} does not exist")
        try:
            launch = await self.sandbox_launch(command, args, ctx.cwd)
        except SandboxRefused as refused:
            return ToolResult.error(str(refused))
        env = self.env if launch is None else {**self.env, **launch.env}
        if background:
            return await self._start_background(command, args, ctx, timeout_s, launch, env)

        try:
            proc = await start_shell(command, ctx.cwd, env, argv=None if launch is None else launch.argv)
        except OSError as exc:
            self.sandbox_done(launch)
            return ToolResult.error(f"could not start the shell: {exc.strerror or exc}")
        except BaseException:  # cancelled while the shell was starting (start_shell ended its group)
            self.sandbox_done(launch)
            raise

        assert proc.stdout is not None
        output = _HeadTail(_KEEP_BYTES)
        reader = asyncio.create_task(_pump(proc.stdout, output))
        try:
            exited = await wait_for_exit(proc, timeout_s)
            if exited:
                # Let background children flush what they already wrote before the group is killed.
                await asyncio.wait({reader}, timeout=PIPE_GRACE_S)
        finally:
            # Every path (done, timed out, cancelled) ends the whole group and reaps the child.
            await terminate_group(proc)
            await finish_task(reader, DRAIN_TIMEOUT_S)
            self.sandbox_done(launch)

        text = output.render(self.max_output_chars).rstrip("\n")
        if launch is not None and self.sandbox is not None:
            note = self.sandbox.explain(command, text)
            text = f"{text}\n{note}" if note else text
        if not exited:
            message = f"command timed out after {timeout_s:g}s"
            return ToolResult.error(f"{message}; output so far:\n{text}" if text else message)
        code = proc.returncode
        if code == 0:
            return ToolResult.text(text or "(no output)")
        status = f"exit code {code}"
        if code is not None and code < 0:
            status += f" (killed by {_signal_name(code)})"
        return ToolResult.error(f"{text}\n\n{status}" if text else status)

    async def sandbox_launch(self, command: str, args: dict[str, Any], cwd: Path) -> Launch | None:
        """The sandbox's command line for this call, or None to run it as is (no sandbox, an excluded command, an
        unsandboxed run the gate let through, or no sandbox can start here). Raises SandboxRefused. The REPL's `!`
        runs through here too; `sandbox_done` after the run."""
        sandbox = self.sandbox
        if sandbox is None:
            return None
        refusal = sandbox.refusal(args)
        if refusal is None and sandbox.confines(args) and not await sandbox.available():
            refusal = sandbox.refusal(args)  # failIfUnavailable, now that the probe ran
            if refusal is None:
                return None
        if refusal is not None:
            raise SandboxRefused(refusal)
        if not sandbox.confines(args):
            return None
        try:
            return await sandbox.launch([shell_path(), "-c", command], cwd)
        except OSError as exc:
            raise SandboxRefused(f"could not prepare the sandbox: {exc.strerror or exc}") from exc

    def sandbox_done(self, launch: Launch | None) -> None:
        if launch is not None and self.sandbox is not None:
            self.sandbox.done(launch)

    async def _start_background(self, command: str, args: dict[str, Any], ctx: ToolContext, timeout_s: float,
                                launch: Launch | None, env: Mapping[str, str]) -> ToolResult:
        description = args.get("description")
        try:
            task = await ctx.background.start(command, cwd=ctx.cwd, env=env, out_dir=ctx.spill_dir, owner=ctx,
                                              timeout_s=timeout_s,
                                              description=description if isinstance(description, str) else "",
                                              argv=None if launch is None else launch.argv)
        except OSError as exc:
            self.sandbox_done(launch)
            return ToolResult.error(f"could not start the command in the background: {exc.strerror or exc}")
        except BaseException:  # cancelled while it was starting: nothing runs that needs the placeholders
            self.sandbox_done(launch)
            raise
        if launch is not None:  # its placeholders stay until it ends
            ended = asyncio.ensure_future(task.done.wait())
            ended.add_done_callback(lambda _: self.sandbox_done(launch))
        return ToolResult.text(
            f"Started in the background as task {task.id} (stopped after {timeout_s:g}s if still running). Its "
            f"output is being written to {task.output_path}. You will be told when it ends; meanwhile TaskOutput "
            f"with task_id \"{task.id}\" shows its new output and TaskStop ends it.")
