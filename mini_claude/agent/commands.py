"""Custom slash commands: Markdown files in `.claude/commands/` (the project's) and `~/.claude/commands/` (the
user's), as in Claude Code. `/name args` sends the file's body as the prompt, with `$ARGUMENTS` replaced by all the
arguments and `$1`, `$2`, … by each (shell-style words). Optional front matter: `description` (shown in `/help`),
`argument-hint`, `allowed-tools` (allow rules while the command runs). A sub-folder adds a namespace:
`.claude/commands/git/commit.md` is `/git:commit`. The user's command wins over a project's of the same name.

Files are read through `jsonfile`'s bounded door: a FIFO or a device is a warning (never a hang), a file over
`MAX_COMMAND_BYTES` too.

Trust: a project's `allowed-tools` would widen permissions, so it counts only for the user's own commands; a
project command's list is ignored (its text is still only a prompt the user chose to send).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.errors import ConfigError
from mini_claude.frontmatter import parse_frontmatter, split_frontmatter
from mini_claude.jsonfile import read_regular_text

__all__ = ["CustomCommand", "expand", "load_commands"]

MAX_COMMAND_BYTES = 64 * 1024
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_POSITIONAL = re.compile(r"\$(\d+)")


@dataclass(frozen=True)
class CustomCommand:
    name: str  # without the slash: "review" or "git:commit"
    body: str
    scope: str  # "user" | "project"
    path: Path
    description: str = ""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = field(default=())

    @property
    def command(self) -> str:
        return f"/{self.name}"


def load_commands(cwd: Path, home: Path) -> tuple[dict[str, CustomCommand], list[str]]:
    """`{"/name": command}` and one warning per file that could not be read."""
    found: dict[str, CustomCommand] = {}
    warnings: list[str] = []
    for scope, folder in (("project", cwd / ".claude" / "commands"), ("user", home / ".claude" / "commands")):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.md")):
            parts = path.relative_to(folder).with_suffix("").parts
            if not all(_NAME.match(p) for p in parts):
                continue
            try:
                resolved = path.resolve()
                if not resolved.exists():
                    continue  # a dangling link
                if scope == "project" and not resolved.is_relative_to(cwd.resolve()):
                    warnings.append(f"{path}: not loaded: it leads outside the project ({resolved})")
                    continue
                command = _read(resolved, ":".join(parts), scope, shown=path)
            except OSError as exc:
                warnings.append(f"{path}: {exc}")
                continue
            except ConfigError as exc:  # FrontmatterError too; the message names the file
                warnings.append(str(exc) if exc.file else f"{path}: {exc}")
                continue
            if command is None:
                continue
            found[command.command] = command  # the user's, read last, wins
    return found, warnings


def expand(command: CustomCommand, arguments: str) -> str:
    """The prompt for `/name arguments`."""
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    text = command.body.replace("$ARGUMENTS", arguments.strip())
    text = _POSITIONAL.sub(lambda m: words[int(m.group(1)) - 1] if 0 < int(m.group(1)) <= len(words) else "", text)
    if "$ARGUMENTS" not in command.body and not _POSITIONAL.search(command.body) and arguments.strip():
        text = f"{text.rstrip()}\n\n{arguments.strip()}"
    return text.strip()


def _read(path: Path, name: str, scope: str, *, shown: Path) -> CustomCommand | None:
    """The command in the file at `path` (None when it vanished). Raises ConfigError naming `shown`: not a regular
    file, larger than `MAX_COMMAND_BYTES`, not UTF-8, bad front matter."""
    text = read_regular_text(path, str(shown), max_bytes=MAX_COMMAND_BYTES)
    if text is None:
        return None
    path = shown
    if not text.startswith(("---", "\ufeff---")):
        return CustomCommand(name, text, scope, path)
    meta = parse_frontmatter(text)
    _, body = split_frontmatter(text)
    tools = meta.get("allowed-tools")
    listed = [t.strip() for t in tools.split(",")] if isinstance(tools, str) else \
        [str(t) for t in tools] if isinstance(tools, list) else []
    return CustomCommand(name, body, scope, path, description=str(meta.get("description") or ""),
                         argument_hint=str(meta.get("argument-hint") or ""),
                         allowed_tools=tuple(t for t in listed if t) if scope == "user" else ())
