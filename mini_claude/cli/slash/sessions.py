"""The REPL's commands on the conversation itself: `/export [FILE]` (the conversation as Markdown) and `/rewind`
(back to before a prompt: the files our tools changed since, the conversation, or both — agent/checkpoints.py).

`/export` writes user and assistant turns, each tool call on one line and the first lines of its result, with the
known secret values masked; to FILE or `conversation-YYYY-MM-DD-HHMMSS.md` in the working folder. It never follows
a symbolic link at the target and asks before replacing a file. `/rewind` lists the recent prompts with the
picker, then what to restore, as Claude Code's does: code and conversation, the conversation only, or the code
only. Changes made by shell commands (Bash) are not covered, and it says so.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mini_claude.agent.turns import PromptPoint, before, prompt_points
from mini_claude.cli.terminal.picker import Option, pick
from mini_claude.cli.terminal.render import TerminalUI, clean, one_line
from mini_claude.cli.terminal.tool_lines import call_line
from mini_claude.secrets import mask

__all__ = ["REWIND_CHOICES", "export_command", "markdown", "rewind_command"]

RESULT_LINES = 5
REWIND_ROWS = 20
REWIND_CHOICES = ("Restore code and conversation", "Restore conversation", "Restore code", "Never mind")
BASH_NOTE = ("Files go back whole, as they were before that prompt; changes made by shell commands (Bash) are not "
             "undone.")
Ask = Callable[[str], Awaitable[bool]]
Typed = Callable[[str], Awaitable[str | None]]


# ---- /export -------------------------------------------------------------------------------------------------------

def markdown(history: list[dict[str, Any]], cwd: Path, *, session_id: str = "", now: float | None = None) -> str:
    """The conversation as Markdown, secrets masked."""
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(now if now is not None else time.time()))
    out = [f"# Conversation{f' {session_id}' if session_id else ''}", "", f"_Exported {when} from {cwd}_", ""]
    starts = {p.key: p for p in prompt_points(history)}
    for index, message in enumerate(history):
        content = message.get("content") if isinstance(message.get("content"), list) else []
        if message.get("role") == "assistant":
            out += ["## Assistant", ""]
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and str(block.get("text", "")).strip():
                    out += [str(block["text"]).strip(), ""]
                elif block.get("type") == "tool_use":
                    args = block.get("input") if isinstance(block.get("input"), dict) else {}
                    line = call_line(str(block.get("name", "?")), args, cwd).replace("`", "'")
                    out += [f"**Tool call:** `{line}`", ""]
            continue
        for number, block in enumerate(content):
            point = starts.get((index, number))
            if point is not None:
                out += ["## User", "", point.text, ""]
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out += _result_lines(block)
    return clean(mask("\n".join(out).rstrip() + "\n"))


def _result_lines(block: dict[str, Any]) -> list[str]:
    content = block.get("content")
    if isinstance(content, list):
        text = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    else:
        text = str(content or "")
    rows = text.splitlines()
    shown = rows[:RESULT_LINES] + ([f"… (+{len(rows) - RESULT_LINES} lines)"] if len(rows) > RESULT_LINES else [])
    fence = "```"
    while fence in text:
        fence += "`"
    label = "**Result (error):**" if block.get("is_error") else "**Result:**"
    return [label, "", fence, *shown, fence, ""]


async def export_command(parts: Any, arg: str, ui: TerminalUI, ask: Ask) -> Path | None:
    """`/export [FILE]`: where it was written, or None."""
    cwd = Path(parts.agent.ctx.cwd)
    history = parts.agent.history
    if not prompt_points(history):
        ui.warn("/export: nothing to export yet")
        return None
    target, problem, exists = _target(cwd, arg)
    if problem:
        ui.error(clean(f"/export: {target} {problem}: not written"))
        return None
    if exists and not await ask(clean(f"{target} exists. Replace it?")):
        ui.info("/export: not written")
        return None
    text = markdown(history, cwd, session_id=str(parts.session_id or ""))
    try:
        _write_new(target, text.encode("utf-8", "replace"), replace=exists)
    except OSError as exc:
        reason = "it is a symbolic link (not followed)" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        ui.error(clean(f"/export: {target} not written: {reason}"))
        return None
    ui.info(clean(f"conversation exported to {target}"))
    return target


def _target(cwd: Path, arg: str) -> tuple[Path, str, bool]:
    """The file to write, what stops it ("" when nothing), and whether it exists (a regular file)."""
    name = arg.strip() or time.strftime("conversation-%Y-%m-%d-%H%M%S.md", time.localtime())
    target = Path(os.path.abspath(cwd / Path(name).expanduser()))
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return target, "", False
    except OSError as exc:
        return target, exc.strerror or str(exc), False
    if stat.S_ISLNK(info.st_mode):
        return target, "is a symbolic link (links are not followed)", True
    if not stat.S_ISREG(info.st_mode):
        return target, "is not a regular file", True
    return target, "", True


def _write_new(path: Path, data: bytes, *, replace: bool) -> None:
    """A regular file, never through a link: created (O_EXCL) unless replacing one that was asked about, which is
    emptied only once it is known to be a regular file with no other hard link (one planted since, `ln ~/.bashrc
    NAME`, would carry the conversation, the model's text included, into that other file)."""
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | (0 if replace else os.O_CREAT | os.O_EXCL)
    fd = os.open(path, flags, 0o644)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if info.st_nlink > 1:
            raise OSError(errno.EMLINK, "it has other hard links (another file would change too)")
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


# ---- /rewind -------------------------------------------------------------------------------------------------------

async def rewind_command(parts: Any, ui: TerminalUI, typed: Typed, retype: Callable[[str], None]) -> None:
    """`/rewind`: pick a prompt, then what to restore (see the module docstring)."""
    agent = parts.agent
    checkpoints = agent.checkpoints
    points = prompt_points(agent.history)[-REWIND_ROWS:]
    if not points:
        ui.info("/rewind: no prompts in this conversation yet")
        return
    cwd = Path(agent.ctx.cwd)
    options = [Option(clean(_first_line(p.text)), _changed_here(checkpoints, p, cwd)) for p in points]
    chosen = await pick("Rewind: restore the code and/or the conversation to before…", options,
                        default=len(points) - 1, typed=typed)
    if chosen is None:
        return
    point = points[chosen]
    changes = checkpoints.changes_since(point) if checkpoints is not None else []
    names = ", ".join(_relative(e["path"], cwd) for e in changes[:6]) + (" …" if len(changes) > 6 else "")
    print(clean(f"  before: {_first_line(point.text)}"))
    print(clean(f"  code: {len(changes)} file{'s' if len(changes) != 1 else ''} to put back"
                + (f" ({names})" if changes else "") + f". {BASH_NOTE}"))
    how = await pick("Restore what?", [Option(c) for c in REWIND_CHOICES], typed=typed)
    if how is None or REWIND_CHOICES[how] == "Never mind":
        ui.info("/rewind: nothing changed")
        return
    choice = REWIND_CHOICES[how]
    if "code" in choice:
        _restore_code(parts, point, changes, ui, cwd)
    if "conversation" in choice:
        if checkpoints is not None:
            checkpoints.forget_from(point)
        agent.history[:] = before(agent.history, point)
        if agent.on_reset is not None:
            agent.on_reset(agent.history)
        if parts.session_log is not None:
            parts.session_log.sync(agent.history)
        retype(point.text)
        ui.info("conversation rewound to before that prompt (it is back at the prompt to edit or send)")


def _restore_code(parts: Any, point: PromptPoint, changes: list[dict[str, Any]], ui: TerminalUI, cwd: Path) -> None:
    checkpoints = parts.agent.checkpoints
    if checkpoints is None or not changes:
        ui.info("code: no file changes by mini-claude's tools since that prompt")
        return
    gate = parts.gate
    done = checkpoints.restore(point, [Path(gate.cwd), *map(Path, gate.additional_dirs)])
    for path in done.written:
        print(clean(f"  restored {_relative(path, cwd)}"))
    for path in done.deleted:
        print(clean(f"  deleted {_relative(path, cwd)} (created since)"))
    for path, why in done.skipped:
        ui.warn(clean(f"not restored: {_relative(path, cwd)}: {why}"))
    ui.info(f"code restored ({len(done.written) + len(done.deleted)} file"
            f"{'s' if len(done.written) + len(done.deleted) != 1 else ''}); Bash changes are not undone")


def _changed_here(checkpoints: Any, point: PromptPoint, cwd: Path) -> str:
    files = checkpoints.files_changed_at(point) if checkpoints is not None else []
    if not files:
        return "no code changes"
    shown = ", ".join(_relative(f, cwd) for f in files[:3]) + (f" +{len(files) - 3} more" if len(files) > 3 else "")
    return clean(shown)


def _first_line(text: str) -> str:
    line = one_line(text.strip().splitlines()[0] if text.strip() else "")
    return line if len(line) <= 70 else line[:69] + "…"


def _relative(path: str, cwd: Path) -> str:
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith("..") else relative
