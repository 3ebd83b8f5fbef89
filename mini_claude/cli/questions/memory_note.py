"""`# note` in the REPL: ask which memory file takes the note — the project's `./CLAUDE.md` (shared), the
project-local `./CLAUDE.local.md` or the user's `~/.claude/CLAUDE.md` (agent/memory.py `NOTE_TARGETS`) — then
append it. No file is chosen silently: Enter alone asks again, `n` or Ctrl+C adds nothing. A file that cannot take
a note (a symlink, a FIFO: `note_refusal`) is named with the reason and not offered; the write itself checks again
on its open descriptor (`append_memory_note`). A note in `CLAUDE.local.md` also puts that file in the folder's
`.gitignore` in a git work tree (`ignore_local_memory`), as Claude Code does."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from mini_claude.agent.memory import (
    LOCAL_MEMORY_NAME,
    NOTE_TARGETS,
    append_memory_note,
    ignore_local_memory,
    note_refusal,
)
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.errors import MiniClaudeError

__all__ = ["NOTE_QUESTION", "add_memory_note"]

NOTE_QUESTION = "Add the note to which memory file? (n = none)"
_NONE = ""


async def add_memory_note(line: str, *, ask: Callable[[str, dict[str, str]], Awaitable[str]], ui: TerminalUI,
                          cwd: Path, home: Path) -> Path | None:
    """The file the note went into, or None (declined, or no file could take it: said through `ui`)."""
    offered: dict[str, Path] = {}
    for target in NOTE_TARGETS:
        path = target.path(cwd, home)
        refused = note_refusal(path)
        if refused is not None:
            ui.error(f"cannot add to {path.name}: {refused}")
            continue
        offered[target.key] = path
        print(f"  {target.key} = {target.label} ({target.purpose})", file=sys.stderr)
    if not offered:
        return None
    chosen = await ask(NOTE_QUESTION, {**{key: key for key in offered}, "n": _NONE})
    if chosen not in offered:
        ui.info("not noted")
        return None
    path = offered[chosen]
    try:
        append_memory_note(path, line)
    except (OSError, MiniClaudeError) as exc:  # became a symlink or a FIFO meanwhile: ConfigError
        ui.error(f"cannot add to {path.name}: {exc}")
        return None
    label = next(t.label for t in NOTE_TARGETS if t.key == chosen)
    ui.info(f"noted in {path} ({label})")
    if path.name == LOCAL_MEMORY_NAME and path.parent == cwd:  # yours alone: kept out of git, as Claude Code does
        try:
            ignored = ignore_local_memory(cwd)
        except (OSError, MiniClaudeError) as exc:
            ui.error(f"could not add {LOCAL_MEMORY_NAME} to .gitignore: {exc}")
        else:
            if ignored is not None:
                ui.info(f"added {LOCAL_MEMORY_NAME} to {ignored}")
    return path
