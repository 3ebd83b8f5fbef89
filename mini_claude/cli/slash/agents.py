"""`/agents`: the sub-agent types in force (agent/subagents.py) with their source, tools and model, and a short
dialogue that writes a new one.

`/agents` lists the types, then offers "Create a new agent" in the arrow-key picker; `/agents new` goes straight to
the questions: where (the project's `.claude/agents/` or the user's `~/.claude/agents/`), the name, a description
(what the main agent reads to choose it), the tools (all, read-only ones, or a typed list), the model (inherit,
sonnet, opus, haiku) and the system prompt (a typed line, or a short starting template to edit later). The file is
Claude Code's format — front matter `name`, `description`, `tools` (comma-separated; absent: every tool), `model`,
then the prompt as the body — at `<folder>/<name>.md`, where Claude Code reads sub-agents (Claude Code 2.1.328 has
dropped its own /agents dialogue and points at those folders).

Writing is careful: an existing file is replaced only when the user confirms; the file is opened without following
a link and only a regular file with no other hard link is written (agent/memory.py's rule for notes), and a folder
on the way that is a link is refused. The new type is loaded through the same loader as at start-up and added to the session's types, so the
Agent tool can start it at once.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.agent.subagents import BUILTIN_TYPES, SubagentType, load_subagent_types
from mini_claude.cli.terminal.picker import Option, pick
from mini_claude.cli.terminal.render import TerminalUI, clean
from mini_claude.errors import ConfigError
from mini_claude.paths import user_home

__all__ = ["MODELS", "READ_ONLY_TOOLS", "AgentDraft", "agent_file_text", "agent_listing",
           "agent_path", "agents_command", "write_agent_file"]

READ_ONLY_TOOLS = ("Read", "Glob", "Grep", "WebFetch", "WebSearch")
MODELS = ("inherit", "sonnet", "opus", "haiku")
MAX_DESCRIPTION_CHARS = 1000
MAX_PROMPT_CHARS = 32 * 1024
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_TOOL = re.compile(r"[A-Za-z0-9_.*-]+(?:\([^()\n]*\))?")  # Read, mcp__server__tool, Bash(git:*)
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
TypedLine = Callable[[str], Awaitable[str | None]]


@dataclass(frozen=True)
class AgentDraft:
    """What the dialogue gathered. `tools`: None for every tool; `model`: one of MODELS."""

    scope: str  # "project" | "user"
    name: str
    description: str
    tools: tuple[str, ...] | None
    model: str
    prompt: str


def agent_listing(kinds: Mapping[str, SubagentType]) -> list[str]:
    """One line per type (name, where from, tools, model) and its description under it, text as written."""
    lines = ["sub-agent types (the Agent tool starts them; /agents new writes one):"]
    for kind in kinds.values():
        origin = f"{kind.source}: {kind.path}" if kind.path is not None else kind.source
        tools = "all" if kind.tools_text() == "*" else kind.tools_text()
        lines.append(f"  {kind.name}  ({origin}) · tools: {tools} · model: {kind.model or 'inherit'}")
        description = " ".join(kind.description.split())
        lines.append(f"      {description if len(description) <= 160 else description[:159] + '…'}")
    return lines


def agent_path(scope: str, name: str, *, cwd: Path, home: Path) -> Path:
    folder = (cwd if scope == "project" else home) / ".claude" / "agents"
    return folder / f"{name}.md"


def agent_file_text(draft: AgentDraft) -> str:
    """The Markdown file: YAML front matter (quoted by the YAML writer, so a description with `:` or `#` stays
    one value) and the prompt."""
    import yaml  # PyYAML's writer, only when a file is written

    meta: dict[str, str] = {"name": draft.name, "description": draft.description}
    if draft.tools is not None:
        meta["tools"] = ", ".join(draft.tools)
    meta["model"] = draft.model
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=10_000).strip()
    return f"---\n{front}\n---\n\n{draft.prompt.strip()}\n"


def starting_prompt(draft: AgentDraft) -> str:
    """A short system prompt to start from, for a user who typed none."""
    return (f"You are the {draft.name} sub-agent. Your job: {draft.description}\n\n"
            "Work from the task you are given; you see none of the main conversation, so ask for nothing and "
            "assume nothing beyond it. When you are done, report what you found or changed, with the file paths "
            "that matter, in a few short paragraphs.\n")


def write_agent_file(path: Path, text: str, *, replace: bool = False) -> None:
    """Write the agent file: its folders made (none of them may be a link), the file never opened through a link
    and only when it is a regular file; an existing one only with `replace` (FileExistsError otherwise)."""
    for folder in (path.parent.parent, path.parent):  # .claude and .claude/agents
        if folder.is_symlink():
            raise ConfigError("not written: a folder on the way is a symbolic link", file=str(folder))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, _WRITE_FLAGS | (0 if replace else os.O_EXCL), 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError("not written: it is a symbolic link", file=str(path)) from None
        raise
    with os.fdopen(fd, "wb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError("not written: not a regular file", file=str(path))
        if info.st_nlink > 1:  # replacing it would change the other name's file too (a ~/.bashrc linked here)
            raise ConfigError("not written: it has other hard links", file=str(path))
        os.ftruncate(fd, 0)
        handle.write(text.encode("utf-8"))


async def agents_command(parts: Any, rest: str, ui: TerminalUI, *, typed: TypedLine | None) -> None:
    """`/agents` (list, then offer to create) or `/agents new`."""
    action = rest.strip().lower()
    kinds = parts.subagents.kinds if parts.subagents is not None else {t.name: t for t in BUILTIN_TYPES}
    if action not in ("", "new", "create"):
        ui.warn("usage: /agents [new]")
        return
    if action == "":
        print("\n".join(clean(f"  {line}") for line in agent_listing(kinds)))
        if typed is None or await pick("Agents", [Option("Create a new agent"), Option("Done")],
                                       typed=typed) != 0:
            return
    if typed is None:
        ui.warn("/agents new asks its questions at the REPL's prompt")
        return
    await _create(parts, ui, typed, kinds)


async def _create(parts: Any, ui: TerminalUI, typed: TypedLine, kinds: Mapping[str, SubagentType]) -> None:
    cwd, home = Path(parts.gate.cwd), user_home(parts.env)
    at = await pick("Where should the new agent live?",
                    [Option("Project", f"{cwd / '.claude' / 'agents'} (this project)"),
                     Option("User", f"{home / '.claude' / 'agents'} (every project)")], typed=typed)
    if at is None:
        return _cancelled(ui)
    scope = ("project", "user")[at]
    name = await _typed_until(typed, ui, "Name (letters, digits, - and _): ", lambda v: _name_problem(v, scope))
    if name is None:
        return _cancelled(ui)
    description = await _typed_until(typed, ui, "Description (when should the main agent use it?): ",
                                     _description_problem)
    if description is None:
        return _cancelled(ui)
    tools = await _ask_tools(typed, ui)
    if tools is False:
        return _cancelled(ui)
    at = await pick("Model", [Option(m, "the session's model" if m == "inherit" else "") for m in MODELS],
                    typed=typed)
    if at is None:
        return _cancelled(ui)
    prompt = await typed("System prompt (one line; Enter for a starting template to edit later): ")
    if prompt is None:
        return _cancelled(ui)
    draft = AgentDraft(scope, name, " ".join(description.split()), tools, MODELS[at], prompt.strip())
    if not draft.prompt:
        draft = AgentDraft(scope, name, draft.description, tools, draft.model, starting_prompt(draft))
    path = agent_path(scope, name, cwd=cwd, home=home)
    replace = False
    if _taken(path):
        replace = await pick(f"{path} exists. Replace it?", [Option("No, keep it"), Option("Yes, replace it")],
                             typed=typed) == 1
        if not replace:
            return _cancelled(ui)
    try:
        write_agent_file(path, agent_file_text(draft), replace=replace)
    except (ConfigError, OSError) as exc:
        ui.error(clean(f"/agents: {exc}", visible=True))
        return
    ui.info(clean(f"wrote {path}"))
    _reload(parts, ui, path, name, home)


def _taken(path: Path) -> bool:
    return path.is_symlink() or path.exists()


def _reload(parts: Any, ui: TerminalUI, path: Path, name: str, home: Path) -> None:
    """Read the types again through the start-up loader; the new one joins the session's types."""
    if parts.subagents is None:
        return
    found, warnings = load_subagent_types(Path(parts.gate.cwd), home, trusted=parts.trusted)
    for warning in warnings:
        if warning.startswith(str(path)):
            ui.warn(clean(f"sub-agent: {warning}"))
    kind = found.get(name)
    if kind is not None and kind.path == path:
        parts.subagents.kinds = {**parts.subagents.kinds, name: kind}
        ui.info(f"the {name} agent is ready: the Agent tool can start it in this session")
    else:
        ui.warn(f"{path} was written but is not in force here (a file of the same name in another scope wins)")


async def _typed_until(typed: TypedLine, ui: TerminalUI, label: str,
                       problem: Callable[[str], str | None], tries: int = 3) -> str | None:
    for _ in range(tries):
        value = await typed(label)
        if value is None or not value.strip():
            return None
        trouble = problem(value.strip())
        if trouble is None:
            return value.strip()
        ui.warn(trouble)
    return None


def _name_problem(name: str, scope: str) -> str | None:
    if not _NAME.fullmatch(name):
        return "a name is 1 to 64 letters, digits, '-' and '_'"
    if scope == "project" and name in {t.name for t in BUILTIN_TYPES}:
        return f"{name!r} is a built-in type: a project agent may not take its name"
    return None


def _description_problem(text: str) -> str | None:
    return f"at most {MAX_DESCRIPTION_CHARS} characters" if len(text) > MAX_DESCRIPTION_CHARS else None


async def _ask_tools(typed: TypedLine, ui: TerminalUI) -> tuple[str, ...] | bool | None:
    """None: every tool; a tuple: those; False: cancelled."""
    at = await pick("Tools", [Option("All tools", "everything the main agent has, MCP tools included"),
                              Option("Read-only tools", ", ".join(READ_ONLY_TOOLS)),
                              Option("A list I type", "comma-separated: Read, Grep, mcp__server__tool")],
                    typed=typed)
    if at is None:
        return False
    if at == 0:
        return None
    if at == 1:
        return READ_ONLY_TOOLS
    listed = await _typed_until(typed, ui, "Tools (comma-separated): ", _tools_problem)
    return False if listed is None else _split_tools(listed)


def _split_tools(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))


def _tools_problem(text: str) -> str | None:
    bad: Sequence[str] = [t for t in _split_tools(text) if not _TOOL.fullmatch(t)]
    if not _split_tools(text):
        return "name at least one tool"
    return f"not a tool name: {', '.join(bad)}" if bad else None


def _cancelled(ui: TerminalUI) -> None:
    ui.info("/agents: cancelled, nothing written")
