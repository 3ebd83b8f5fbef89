"""The agent's own skills on disk: `<project>/.claude/skills/<name>/SKILL.md` and `~/.claude/skills/...`.

Discovery reads each SKILL.md's front matter (name + description) for the listing; `load()` reads the file again
when the model asks for it, and `read_file()` reads a supporting file inside the skill's directory (never
outside it, symlinks resolved). Every read goes through `jsonfile`'s bounded door (regular files only, at most
`MAX_LOCAL_SKILL_FILE_BYTES`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from mini_claude.errors import ConfigError, FrontmatterError, ToolError
from mini_claude.frontmatter import parse_frontmatter
from mini_claude.jsonfile import read_regular_file

__all__ = ["MAX_LOCAL_SKILL_FILE_BYTES", "LocalSkill", "discover_local_skills"]

log = logging.getLogger(__name__)

MAX_LOCAL_SKILL_FILE_BYTES = 1024 * 1024
SKILL_FILE_NAME = "SKILL.md"


@dataclass(frozen=True)
class LocalSkill:
    """A skill directory on disk. `origin` is "project" or "user"."""

    name: str
    description: str
    directory: Path
    origin: str

    @property
    def location(self) -> str:
        return str(self.directory)

    async def load(self) -> str:
        return await asyncio.to_thread(_read_text, self.directory / SKILL_FILE_NAME)

    async def read_file(self, relpath: str) -> str:
        root = self.directory.resolve()
        target = (root / relpath.lstrip("/")).resolve()
        if target != root and root not in target.parents:
            raise ToolError(f"{relpath!r} is not a file inside skill {self.name!r}")
        return await asyncio.to_thread(_read_text, target)


def _read_text(path: Path) -> str:
    """The file's text through the bounded door (`jsonfile`): a regular file of at most
    `MAX_LOCAL_SKILL_FILE_BYTES` (a FIFO or a device fails at once, never hangs). Raises ToolError saying why."""
    try:
        data = read_regular_file(path, str(path), max_bytes=MAX_LOCAL_SKILL_FILE_BYTES)
    except ConfigError as exc:
        raise ToolError(str(exc)) from None
    if data is None:
        raise ToolError(f"cannot read {path}: no such file")
    return data.decode("utf-8", errors="replace")


def discover_local_skills(project: Path | None, home: Path | None,
                          sources: Collection[str] | None = None) -> list[LocalSkill]:
    """Skills under `<project>/.claude/skills` then `<home>/.claude/skills`, sorted by name within each; only the
    scopes in `sources` (project, user: `--setting-sources`; None: both). A directory without a readable SKILL.md
    with a name and description is skipped (logged)."""
    found: list[LocalSkill] = []
    for base, origin in ((project, "project"), (home, "user")):
        if base is None or (sources is not None and origin not in sources):
            continue
        skills_dir = base / ".claude" / "skills"
        try:
            candidates = sorted(p for p in skills_dir.iterdir() if (p / SKILL_FILE_NAME).is_file())
        except OSError:
            continue
        for directory in candidates:
            skill = _local_skill(directory, origin)
            if skill is not None:
                found.append(skill)
    return found


def _local_skill(directory: Path, origin: str) -> LocalSkill | None:
    path = directory / SKILL_FILE_NAME
    try:
        frontmatter = parse_frontmatter(_read_text(path))
    except (ToolError, FrontmatterError) as exc:
        log.warning("skipping skill %s: %s", path, exc)
        return None
    name, description = frontmatter.get("name"), frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        log.warning("skipping skill %s: its front matter has no description", path)
        return None
    if not isinstance(name, str) or not name.strip():
        name = directory.name  # Claude Code falls back to the directory name
    return LocalSkill(name=name.strip(), description=description.strip(), directory=directory, origin=origin)
