"""What opens a conversation: the memory files (CLAUDE.md) and the git snapshot, as `<system-reminder>` blocks before
the first prompt's text — where Claude Code puts them, outside the system prompt.

`Opening` is the agent's `prelude` (agent/loop.py): given the history before a prompt, it returns the blocks to put
before the prompt's text. An empty history (a new session, after `/clear`, and compaction's new start) gets the
whole opening; a history that already holds the current memory text gets nothing, so a resumed session does not
get it twice; one whose memory files changed since (a `# note`, `/memory`, an edit, a session resumed after
CLAUDE.md changed) gets the files' current text once, as an update. The git snapshot is read once per session and
only opens a conversation; it is not sent again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from mini_claude.agent.memory import Memory
from mini_claude.git_snapshot import GitSnapshot

__all__ = ["GIT_LABEL", "MEMORY_LABEL", "Opening", "OpeningPart"]

MEMORY_LABEL = "memory files (CLAUDE.md)"
GIT_LABEL = "git status"
_UPDATE_NOTE = ("The memory files changed during this conversation. Their current contents follow and replace the "
                "earlier copy.")


@dataclass(frozen=True)
class OpeningPart:
    """One block the next request carries or already carries: its label, its text, and whether it is already in the
    history (then it is counted inside the messages)."""

    label: str
    text: str
    in_history: bool


class Opening:
    def __init__(self, memory: Memory, git: asyncio.Future[GitSnapshot | None] | None = None) -> None:
        self.memory = memory
        self.git = git  # being read beside start-up (git_snapshot.start_git_snapshot)

    async def __call__(self, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not history:
            snapshot = await self._snapshot()
            texts = [self.memory.reminder(), snapshot.reminder() if snapshot is not None else ""]
        else:
            texts = [self._memory_update(history)]
        return [{"type": "text", "text": text} for text in texts if text]

    def parts(self, history: list[dict[str, Any]]) -> list[OpeningPart]:
        """For `/context`: the blocks the next request carries, without waiting for the git snapshot."""
        found: list[OpeningPart] = []
        memory = self.memory.reminder()
        if memory:
            sent = next((text for text in (memory, self._update_text(memory)) if _holds(history, text)), None)
            if sent is not None:
                found.append(OpeningPart(MEMORY_LABEL, sent, True))
            else:
                found.append(OpeningPart(MEMORY_LABEL, memory if not history else self._update_text(memory), False))
        snapshot = self.git.result() if self.git is not None and self.git.done() and not self.git.cancelled() \
            and self.git.exception() is None else None
        if snapshot is not None:
            text = snapshot.reminder()
            if not history or _holds(history, text):
                found.append(OpeningPart(GIT_LABEL, text, bool(history)))
        return found

    async def _snapshot(self) -> GitSnapshot | None:
        if self.git is None:
            return None
        try:  # shielded: an interrupted first prompt leaves the reading for the next one
            return await asyncio.shield(self.git)
        except asyncio.CancelledError:
            if self.git.cancelled():  # the reading itself was stopped (the session is closing): no snapshot
                return None
            raise
        except Exception:  # a reading that failed is no snapshot (git_snapshot reports none itself)
            return None

    def _memory_update(self, history: list[dict[str, Any]]) -> str:
        current = self.memory.reminder()
        if not current or _holds(history, current):
            return ""
        update = self._update_text(current)
        return "" if _holds(history, update) else update

    @staticmethod
    def _update_text(reminder: str) -> str:
        return reminder.replace("<system-reminder>\n", f"<system-reminder>\n{_UPDATE_NOTE}\n", 1)


def _holds(history: list[dict[str, Any]], text: str) -> bool:
    """Whether a user message of `history` has `text` as one of its text blocks."""
    return any(isinstance(block, dict) and block.get("type") == "text" and block.get("text") == text
               for message in history if message.get("role") == "user" and isinstance(message.get("content"), list)
               for block in message["content"])
