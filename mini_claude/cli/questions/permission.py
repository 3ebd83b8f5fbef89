"""The REPL's permission question: what the call will do in words, a diff preview for edits and writes, and the
choices — yes / yes and don't ask again for *this rule* (saved to `.claude/settings.local.json`, and shown) /
no, optionally telling the model what to do instead. A call an MCP Apps view makes (`view`, its server) says so
above the call, asks nothing of "instead" (no model reads that answer) and has one more choice: refuse this server's
views' calls without asking for the rest of the session (`BLOCK_VIEW`; the REPL keeps the list).

Everything shown goes through `clean(…, visible=True, exact=True)`: a control, bidi or invisible character (a
zero-width joiner, a variation selector) in a command is shown as an escape, never obeyed or dropped, so the text
approved is the text that runs. Nothing is cut silently: a command, an argument list or a diff too long for the
screen is shown head and tail around a marker saying how much is not shown, and `describe_call(…, whole=True)` (the
question's "v" answer) shows all of it. A command's (or argument text's) lines after its first are shown behind a
`GUTTER`, so none of them can pass for a line of the question (a view's header, the marker, another call); the rest
(a name, a path in a note on why it asks, the "always" rule) is shown on one line, a break as `\n`, and U+2028/U+2029
are shown as escapes everywhere.

ExitPlanMode gets its own question (`plan_question`): the plan, whole, every line behind a bar so none of it can
pass for our question, then yes / yes and auto-accept edits / no, keep planning (with what should change). No
"always": the gate acts on the answer (it alone leaves plan mode) and saves no rule.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from mini_claude.cli.terminal.render import TerminalUI, clean, json_text
from mini_claude.errors import MiniClaudeError
from mini_claude.paths import resolve_tool_path, user_home
from mini_claude.permissions.gate import PLAN_ACCEPT_EDITS
from mini_claude.settings_rules import add_rule, settings_file
from mini_claude.tools.exit_plan_mode import EXIT_PLAN_MODE_TOOL_NAME

__all__ = ["BLOCK_VIEW", "GUTTER", "VIEW_KEY", "PromptAnswers", "describe_call", "permission_question", "plan_lines",
           "plan_question", "save_allow_rules"]

VIEW_KEY = "v"  # the answer that shows the whole call when the question had to cut it
GUTTER = "  │ "  # before each line of a command or argument text after its first
BLOCK_VIEW = "block"  # a view's call: no, and refuse its server's views' calls for the rest of the session
MAX_DIFF_LINES = 40
MAX_SHOWN_CHARS = 2000  # a command or argument list longer than this (or than MAX_SHOWN_LINES lines) is cut…
MAX_SHOWN_LINES = 40
_HEAD_CHARS, _HEAD_LINES = 1200, 24  # …to its head and its tail (where a payload would hide), around a marker
_TAIL_CHARS, _TAIL_LINES = 600, 12


@dataclass
class PromptAnswers:
    """How the question reaches the user: a choice among keys, a free line, the terminal, and whether the last
    answer was Ctrl+C (`interrupted` also ends the turn)."""

    ask: Callable[[str, dict[str, str]], Awaitable[str]]
    prompt_text: Callable[[str], Awaitable[str | None]]
    ui: TerminalUI
    trusted: bool
    interrupted: Callable[[], bool]


async def permission_question(gate: Any, tool: Any, args: dict[str, Any], answers: PromptAnswers,
                              view: str | None = None) -> str:
    """What the call does (a diff for edits), then yes / always for the rule shown (saved to
    .claude/settings.local.json) / no, optionally saying what to do instead. Ctrl+C denies. ExitPlanMode: the plan
    and its own choices (`plan_question`). `view`: the MCP server whose Apps view makes the call — said first, no
    "instead", and `BLOCK_VIEW` as one more answer."""
    if tool.name == EXIT_PLAN_MODE_TOOL_NAME:
        return await plan_question(args, answers)
    rules = gate.always_rules(tool, args)
    # the real target, why: on one line each (a path may hold a line break, and a line of its own would pass for ours)
    why = [f"  {_shown(note)}" for note in gate.why_asking(tool, args)]
    described = [*describe_call(tool.name, args, gate.cwd, home=gate.home), *why]
    whole = [*describe_call(tool.name, args, gate.cwd, whole=True, home=gate.home), *why]
    if view is not None:
        # the name is a repository's text: on this one line (a break shown as \n), or it could push this line off
        # the screen and print lines of its own, and the call below would read as the model's
        print(f"A view of MCP server {_shown(view)} (a page in your browser, not the model) asks to run:",
              file=sys.stderr)
    print("\n".join(described), file=sys.stderr)
    shown = ", ".join(rules)
    if rules:
        question = f"Allow it? y = yes, a = yes and don't ask again for {_shown(shown)}, n = no"
        choices = {"y": "yes", "a": "always", "n": "no"}
    else:  # no rule can name it (a WebFetch of [::1]): nothing to remember
        question, choices = "Allow it? y = yes, n = no", {"y": "yes", "n": "no"}
    if view is not None:  # the question line says who asks too (the header may have scrolled away above a long
        # call), and that "always" is a rule the model's calls use as well
        question = question.replace("Allow it?", f"Allow this call of a view of MCP server {_shown(view)}?", 1)
        question = question.replace(", n = no", " (the model's calls too), n = no", 1) if rules else question
        question += ", b = no, and refuse this server's views without asking for the rest of the session"
        choices["b"] = BLOCK_VIEW
    if whole != described:  # something was cut: one more answer shows it all, then asks again
        answer = await answers.ask(f"{question}, {VIEW_KEY} = view the whole call", {**choices, VIEW_KEY: "view"})
        if answer == "view":
            print("\n".join(whole), file=sys.stderr)
            answer = await answers.ask(question, choices)
    else:
        answer = await answers.ask(question, choices)
    if answers.interrupted():
        return "no"
    if answer == "always":
        try:
            path = save_allow_rules(gate.cwd, rules)
        except MiniClaudeError as exc:
            answers.ui.warn(f"allowed for this session only: {exc}")
        else:
            later = "" if answers.trusted else " (later sessions use it once you trust this folder)"
            answers.ui.info(f"saved {_shown(shown)} to {path}{later}")
    elif answer == "no" and view is None:  # a view's call: no model reads what to do instead
        instead = await answers.prompt_text("What should the model do instead? (Enter to just decline) ")
        if instead and instead.strip():
            return f"no: {instead.strip()}"
    return answer


PLAN_QUESTION = "Proceed with this plan? y = yes, a = yes and auto-accept edits, n = no, keep planning"
PLAN_FEEDBACK = "What should change in the plan? (Enter to just keep planning) "
_PLAN_BAR = "  │ "
_MIN_PLAN_COLUMNS = 20


def plan_lines(plan: str, width: int | None = None) -> list[str]:
    """The plan as the question shows it: a header, then every line of it, whole, behind a bar, control and bidi
    characters shown as escapes (a `\r` or a cursor move cannot rewrite the bar or the question). On a terminal
    `width` columns wide, a wider line is broken here, each piece behind the bar: left to the terminal, its wrapped
    rest would start at column 0 and could pass for our lines. `width` None (not a terminal): lines stay whole."""
    if width is None:
        return ["The model's plan:", *(f"{_PLAN_BAR}{clean(line, visible=True, exact=True)}" for line in plan.split("\n"))]
    room = max(_MIN_PLAN_COLUMNS, width - len(_PLAN_BAR) - 1)  # (one spare column: a full row wraps early)
    return ["The model's plan:", *(f"{_PLAN_BAR}{piece}" for line in plan.split("\n")
                                   for piece in _pieces(clean(line, visible=True, exact=True).expandtabs(4), room))]


def _columns(stream: TextIO) -> int | None:
    """The width of the terminal `stream` writes to; None when it is not a terminal."""
    try:
        return os.get_terminal_size(stream.fileno()).columns if stream.isatty() else None
    except (AttributeError, ValueError, OSError):  # no descriptor (a StringIO), closed, not a terminal
        return None


def _pieces(text: str, room: int) -> list[str]:
    """`text` cut into pieces of at most `room` terminal columns (a wide character counts two)."""
    from prompt_toolkit.utils import get_cwidth  # the REPL's own dependency: its idea of a character's width

    pieces, current, used = [], [], 0
    for char in text:
        cells = get_cwidth(char)
        if used + cells > room and current:
            pieces.append("".join(current))
            current, used = [], 0
        current.append(char)
        used += cells
    pieces.append("".join(current))
    return pieces


async def plan_question(args: dict[str, Any], answers: PromptAnswers) -> str:
    """ExitPlanMode's question: the plan, then "yes" (plan mode ends, edits ask first) / `PLAN_ACCEPT_EDITS` (ends
    for acceptEdits) / "no: what should change" or "no" (plan mode stays on). Ctrl+C answers no."""
    plan = args.get("plan")
    print("\n".join(plan_lines(plan if isinstance(plan, str) else json_text(plan), _columns(sys.stderr))),
          file=sys.stderr)
    answer = await answers.ask(PLAN_QUESTION, {"y": "yes", "a": PLAN_ACCEPT_EDITS, "n": "no"})
    if answers.interrupted():
        return "no"
    if answer == "no":
        change = await answers.prompt_text(PLAN_FEEDBACK)
        return f"no: {change.strip()}" if change and change.strip() else "no"
    mode = "acceptEdits: edits run without asking" if answer == PLAN_ACCEPT_EDITS else "default: edits ask first"
    answers.ui.info(f"plan approved; leaving plan mode for {mode}")
    return answer


def describe_call(name: str, args: dict[str, Any], cwd: Path, *, whole: bool = False,
                  home: Path | None = None) -> list[str]:
    """Lines saying what the call will do (the first one a sentence, then any preview). A long command, argument
    list or diff is cut with a marker naming what is not shown and the `VIEW_KEY` answer; `whole` cuts nothing.
    A path is read as the tool will open it (`resolve_tool_path`: `~`, `~user`), for the diff and create/overwrite."""
    path = args.get("file_path") if isinstance(args.get("file_path"), str) else None
    target = Path(resolve_tool_path(path, cwd, home if home is not None else user_home())) if path else None
    if name == "Bash":
        if args.get("run_in_background") is True:  # it goes on after the answer: the question says so
            return (f"Run a shell command in the background (it keeps running until it ends, is stopped or the "
                    f"session ends): {_fit(str(args.get('command', '')), whole)}").split("\n")
        return f"Run a shell command: {_fit(str(args.get('command', '')), whole)}".split("\n")
    if name == "Edit" and path is not None:
        old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
        before = _read(target) if target is not None else ""
        if old and old in before:  # the file as it would become, with its context
            after = before.replace(old, new) if args.get("replace_all") is True else before.replace(old, new, 1)
            return [f"Edit {_shown(path)}", *_diff(before, after, path, whole)]
        return [f"Edit {_shown(path)}", *_diff(old, new, path, whole)]
    if name == "Write" and path is not None:
        assert target is not None
        before = _read(target)
        content = str(args.get("content", ""))
        verb = "Overwrite" if target.exists() else "Create"
        return [f"{verb} {_shown(path)} ({len(content.splitlines())} lines)", *_diff(before, content, path, whole)]
    if name == "ReadMcpResourceTool":  # what goes to the server is the URI: shown whole (or cut with the marker)
        return (f"Read the resource {_fit(str(args.get('uri', '')), whole)} from MCP server "
                f"{_shown(str(args.get('server', '?')))} (the server receives this URI)").split("\n")
    if name == "ListMcpResourcesTool":
        server = args.get("server")
        return [f"List the resources of MCP server {_shown(str(server))}" if server is not None
                else "List the resources of every connected MCP server"]
    text = _fit(json_text(args, separators=(", ", ": ")), whole)
    if name.startswith("mcp__"):
        server = name.split("__")[1] if name.count("__") >= 2 else "?"
        return f"Call {_shown(name)} (MCP server {_shown(server)}) with {text}".split("\n")
    return f"Use {_shown(name)} with {text}".split("\n")


def _shown(text: str) -> str:
    """Text on one line of the question: controls shown as escapes, a newline as `\\n`."""
    return _visible(text).replace("\n", "\\n")


def _visible(text: str) -> str:
    """The text as it will run, every hidden character (U+2028/U+2029 too) shown as an escape."""
    return clean(text, visible=True, exact=True)


def _fit(text: str, whole: bool) -> str:
    """`text` for the question, made visible: whole when short, else its head and tail around a marker line. Each
    of its own lines after the first starts with `GUTTER`, so no line of a command can pass for the question's
    (a header naming a view, our marker, another call)."""
    if whole or (len(text) <= MAX_SHOWN_CHARS and text.count("\n") < MAX_SHOWN_LINES):
        return _gutter(_visible(text))
    head = "\n".join(text[:_HEAD_CHARS].split("\n")[:_HEAD_LINES])
    tail = "\n".join(text[-_TAIL_CHARS:].split("\n")[-_TAIL_LINES:])
    hidden = text[len(head):len(text) - len(tail)]
    lines, blank = hidden.count("\n"), sum(ch.isspace() for ch in hidden)
    what = [f"{len(hidden) - blank:,} not blank"] + ([f"{lines:,} line breaks"] if lines else [])
    marker = (f"  [… {len(hidden):,} more characters ({', '.join(what)}) not shown here — answer {VIEW_KEY} to see "
              "the whole text …]")
    return (f"{_gutter(_visible(head))}\n{marker}\n"
            f"{GUTTER}{_gutter(_visible(tail))}")


def _gutter(text: str) -> str:
    return text.replace("\n", "\n" + GUTTER)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    except OSError:
        return ""


def _diff(before: str, after: str, path: str, whole: bool = False) -> list[str]:
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}",
                                      lineterm="", n=2))
    limit = len(lines) if whole else MAX_DIFF_LINES
    shown = [_shown(line) for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"… ({len(lines) - limit} more diff lines not shown — answer {VIEW_KEY} to see them)")
    return [f"  {line}" for line in shown]


def save_allow_rules(cwd: Path, rules: list[str]) -> Path:
    """Add `rules` to `permissions.allow` in the project's `.claude/settings.local.json` (created when missing;
    everything else in it kept). Raises ConfigError when the file cannot be read as JSON (it is not overwritten) or
    when it, or its `.claude` folder, is a symbolic link: a repository may commit one pointing at the user's own
    settings, which apply to every project (settings_rules.py refuses to write through it)."""
    file = settings_file("local", cwd=cwd, home=user_home())
    for rule in rules:
        add_rule(file, "allow", rule)
    return file.path
