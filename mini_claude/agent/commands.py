"""Custom slash commands: Markdown files in `.claude/commands/` (the project's) and `~/.claude/commands/` (the
user's), as in Claude Code. `/name args` sends the file's body as the prompt, with `$ARGUMENTS` replaced by all the
arguments and `$1`, `$2`, … by each (shell-style words). Optional front matter: `description` (shown in `/help`),
`argument-hint`, `allowed-tools` (allow rules while the command runs). A sub-folder adds a namespace:
`.claude/commands/git/commit.md` is `/git:commit`. The user's command wins over a project's of the same name.

Files are read through `jsonfile`'s bounded door: a FIFO or a device is a warning (never a hang), a file over
`MAX_COMMAND_BYTES` too.

Trust: a project's `allowed-tools` widen permissions, so they count only once the folder is trusted
(mini_claude.trust), as a project's settings do; in an untrusted folder a project command's list is ignored (its
text is still only a prompt the user chose to send), and `project_grants` names such commands for the trust
warning and question. The user's own commands' lists always count. What a command grants (`command_rules`) is a
set of allow rules added to the session's gate for the command's run alone, expansion included, and taken out after
it (an "always" the user answered meanwhile stays): deny and ask rules, plan mode and the places that need consent
still win over them, as over any allow rule (permissions/gate.py).

Expansion (`expand_command`), as in Claude Code: after the arguments are put in, each ``!`cmd` `` is replaced by the
command's output and each `@path` (a word starting with `@`, no `:` — `@server:uri` is a resource mention) attaches
the file's content, numbered as the Read tool shows it, after the prompt. Every `!` command and every `@` file goes
through the session's permission gate first, as a `Bash` / `Read` call under the command's rules: what the rules do
not allow is asked about where the gate can ask (the REPL's question), and refused where it cannot (`-p`), with a
message naming the pattern and what would allow it (Claude Code refuses such a `!` line even in its REPL; asking is
what the REPL does for any other call). A refusal or a "no" (a deny rule always; in `-p` anything that would ask,
such as a file outside the project or a secret — boundaries.py, symlinks resolved) stops the whole command before
anything runs. A
`@path` that names no file is left as text, with a warning. Each `@` file is judged again after the `!` commands
ran, right before it is read (one of them may have changed it: a `git checkout` that makes it a link to a secret);
one refused then is left out, with a warning."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mini_claude.agent.hook_points import HookPoints
from mini_claude.errors import ConfigError, PermissionDeniedError
from mini_claude.frontmatter import parse_frontmatter, split_frontmatter
from mini_claude.jsonfile import read_regular_text
from mini_claude.permissions.gate import PermissionGate
from mini_claude.secrets import mask
from mini_claude.tools.base import Tool, ToolContext
from mini_claude.tools.read import ReadFileTool

__all__ = ["CommandStopped", "CustomCommand", "Expansion", "command_rules", "expand", "expand_command",
           "load_commands", "project_grants"]

MAX_COMMAND_BYTES = 64 * 1024
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_POSITIONAL = re.compile(r"\$(\d+)")
_BANG = re.compile(r"!`([^`\n]+)`")  # Claude Code's pattern: !`cmd` on one line
_MENTION = re.compile(r"(?:^|(?<=\s))@([^\s:`]+)")  # @path; `@server:uri` (resource mentions) left alone
_TRAILING = ".,;!?)]}'\""  # punctuation after a mention that is not part of the path


@dataclass(frozen=True)
class CustomCommand:
    name: str  # without the slash: "review" or "git:commit"
    body: str
    scope: str  # "user" | "project"
    path: Path
    description: str = ""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = field(default=())  # as the file lists them; `granted` says whether they count

    @property
    def command(self) -> str:
        return f"/{self.name}"

    def granted(self, *, trusted: bool) -> tuple[str, ...]:
        """The allow rules this command brings while it runs: the user's command's always, a project's only when
        the folder is `trusted`."""
        return self.allowed_tools if self.scope == "user" or trusted else ()


def load_commands(cwd: Path, home: Path, sources: Collection[str] | None = None
                  ) -> tuple[dict[str, CustomCommand], list[str]]:
    """`{"/name": command}` and one warning per file that could not be read; only the scopes in `sources` (user,
    project: `--setting-sources`; None: both)."""
    found: dict[str, CustomCommand] = {}
    warnings: list[str] = []
    for scope, folder in (("project", cwd / ".claude" / "commands"), ("user", home / ".claude" / "commands")):
        if (sources is not None and scope not in sources) or not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.md")):
            parts = path.relative_to(folder).with_suffix("").parts
            if not all(_NAME.fullmatch(p) for p in parts):
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


def project_grants(cwd: Path, home: Path, sources: Collection[str] | None = None) -> str | None:
    """What trusting the folder would add through its commands, for the trust warning and question
    (`.claude/commands allowed-tools (/st, /git:commit)`), or None when no project command in force lists any."""
    found, _ = load_commands(cwd, home, sources)
    names = sorted(c.command for c in found.values() if c.scope == "project" and c.allowed_tools)
    return f".claude/commands allowed-tools ({', '.join(names)})" if names else None


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
                         allowed_tools=tuple(t for t in listed if t))


@dataclass(frozen=True)
class Expansion:
    """A custom command ready to send: `text` (arguments in, `!` outputs inlined), the `@` files as text blocks
    (`attachments`), and one warning per `@path` left as text (`problems`). `own_text` is the command's text
    without what its `!` commands printed: an `@server:uri` mention counts only when the command itself wrote it
    (a commit message or a file printed by `git log` / `cat` must not make a server read something)."""

    text: str
    attachments: tuple[dict[str, Any], ...] = ()
    problems: tuple[str, ...] = ()
    own_text: str = ""


class CommandStopped(PermissionDeniedError):
    """A `!` command or `@` file of a custom command needs approval or is refused: nothing of it ran or was sent."""


@contextmanager
def command_rules(gate: PermissionGate, command: CustomCommand, *, trusted: bool) -> Iterator[None]:
    """`gate` with the command's allow rules (`granted`) added for the time of the `with` block, and exactly those
    taken out after it: rules answered "always" meanwhile stay, nothing of the command's outlives its run. Raises
    ConfigError naming the command on a malformed rule."""
    listed = command.granted(trusted=trusted)
    if not listed:
        yield
        return
    before = gate.rules
    gate.rules = before.with_allow(listed, source=f"{command.command} allowed-tools")
    added = gate.rules.allow[len(before.allow):]
    try:
        yield
    finally:
        rules = gate.rules
        gate.rules = replace(rules, allow=tuple(r for r in rules.allow if not any(r is a for a in added)))


async def expand_command(command: CustomCommand, arguments: str, *, gate: PermissionGate, shell: Tool,
                         ctx: ToolContext, hooks: HookPoints | None = None) -> Expansion:
    """Expand `command` (see the module docstring) through `gate` as it is (its rules with the command's already in,
    `command_rules`; its way to ask, if any): check every `!` command (as a `shell` call, the user's PreToolUse hooks
    weighed as for the model's own calls) and `@` file, asking where the gate asks, then run and read them. Raises
    CommandStopped naming the first that was refused."""
    text = expand(command, arguments)
    checker = gate
    reader = ReadFileTool()
    commands = list(dict.fromkeys(m.group(1) for m in _BANG.finditer(text)))
    for cmd in commands:
        before = await hooks.pre_tool_use(shell.name, {"command": cmd}, "") if hooks is not None else None
        decision = await checker.check(shell, {"command": cmd}, hook=before.permission if before else None)
        if not decision.allowed:
            raise CommandStopped(f"{command.command}: stopped, nothing was run or sent: !`{cmd}`: {decision.reason}")
    files: list[tuple[str, Path]] = []
    problems: list[str] = []
    for raw in dict.fromkeys(m.group(1) for m in _MENTION.finditer(_BANG.sub("", text))):
        mention = _mentioned_file(raw, ctx)
        if mention is None:
            problems.append(f"{command.command}: @{raw} names no file; left as text")
            continue
        decision = await checker.check(reader, {"file_path": mention})
        if not decision.allowed:
            raise CommandStopped(f"{command.command}: stopped, nothing was run or sent: @{mention}: {decision.reason}")
        files.append((mention, ctx.resolve(mention)))
    outputs = {}
    for cmd in commands:
        result = await shell.run({"command": cmd}, ctx)
        outputs[cmd] = mask(result.as_text().strip())  # it reaches the model like a tool result
    own_text = _BANG.sub("", text)  # what the command itself says, without what its commands printed
    text = _BANG.sub(lambda m: outputs[m.group(1)], text)
    attachments = []
    for mention, path in files:
        if commands:  # a `!` command may have changed the file (a checkout made it a link to a secret): judge anew
            decision = await checker.check(reader, {"file_path": mention})
            if not decision.allowed:
                problems.append(f"{command.command}: @{mention}: not attached: {decision.reason}")
                continue
            path = ctx.resolve(mention)
        result = await reader.run({"file_path": mention}, ctx)
        if result.is_error:
            problems.append(f"{command.command}: @{mention}: {result.as_text()}")
            continue
        attachments.append({"type": "text", "text": (
            f"Called the Read tool with the following input: {json.dumps({'file_path': str(path)}, separators=(',', ':'))}\n"
            f"Result of calling the Read tool:\n{result.as_text()}")})
    return Expansion(text, tuple(attachments), tuple(problems), own_text)


def _mentioned_file(raw: str, ctx: ToolContext) -> str | None:
    """The path `@raw` names (trailing punctuation dropped when the path with it is no file), or None when it names
    no existing file. A path that leads somewhere the session may not read is still returned: the gate refuses it."""
    for candidate in (raw, raw.rstrip(_TRAILING)):
        if not candidate:
            continue
        try:
            path = ctx.resolve(candidate)
            if path.exists() or path.is_symlink():
                return candidate
        except (OSError, ValueError):
            continue
    return None
