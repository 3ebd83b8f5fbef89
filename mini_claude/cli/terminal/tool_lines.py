"""How a tool call and its result read on the screen: `Read(calc.py)` and `Read 2 lines` under it.

`call_line(name, args, cwd)` is the call with its key argument — a path (relative to the working directory when it
is inside it), a command, a pattern, a URL, a query, a sub-agent's task; an MCP tool (or any tool without a known
key) shows its first arguments as `key: "value"`. `result_summary(name, args, result, cwd)` is the line under it
(lines read, lines written, additions and removals, files and lines found, an error's first line), and
`result_body` the lines shown below that summary: a command's or an MCP tool's first output lines, folded past
`preview` lines, with the whole text kept for Ctrl+O.

Everything here is text a model, a command or a server wrote, so every piece goes through render's `clean`: in a
call line (the model's arguments, where the exact text matters) with `visible=True` — an escape sequence, a bidi
override or a newline is shown as `\\x1b`, `\\u202e`, `\\n`, never obeyed, and the line stays one line whatever
the model sent; in what a tool returned (a command's output, a server's text) they are removed, as for all prose
from outside (docs/SECURITY.md). This module only formats: it changes nothing the model receives.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.cli.terminal.neutral import clean, json_text
from mini_claude.secrets import mask
from mini_claude.tools.base import ToolResult
from mini_claude.tools.todo import TODO_TOOL_NAME
from mini_claude.tools.web_search import WEB_SEARCH_TOOL_NAME

__all__ = ["SUBAGENT_MARK", "Body", "Running", "call_line", "diff_text", "result_body", "result_summary", "short",
           "shown_result"]

SUBAGENT_MARK = " › "  # a sub-agent's calls are named `general-purpose › Bash` (agent/subagents.py)
CALL_LIMIT = 160  # characters of the call line's argument part
VALUE_LIMIT = 80  # characters of one `key: "value"` value
SUMMARY_LIMIT = 200  # characters of one summary or preview line
MCP_ARGS = 2  # `key: "value"` pairs shown for an MCP tool

_PATH_TOOLS = {"Read": "file_path", "Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
               "NotebookEdit": "notebook_path", "NotebookRead": "notebook_path"}
_KEY_ARG = {"Bash": "command", "WebFetch": "url", "WebSearch": "query", "Skill": "skill",
            "BashOutput": "bash_id", "KillShell": "shell_id", "KillBash": "shell_id"}
_READ_LINE = re.compile(r"^\s*\d+\t", re.M)
_EXIT = re.compile(r"\n*\bexit code (-?\d+)(?: \(killed by [A-Z0-9]+\))?\Z")
_TOTAL = re.compile(r"of (\d+)(\+?) (?:lines|files|matches)")


def shown(text: str, limit: int = 0) -> str:
    """`text` on one line as it may be shown: the session's secrets masked, every control, bidi and invisible
    character made visible (`\\x1b`, `\\u202e`, `\\u200d`), a newline as `\\n`, a tab as `\\t`; cut at `limit`."""
    text = clean(mask(text), visible=True, exact=True).replace("\n", "\\n").replace("\t", "\\t")
    return cut(text, limit) if limit else text


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def relative(path: str, cwd: Path | None) -> str:
    """`path` relative to `cwd` when it is inside it, else as given."""
    if cwd is None or not path:
        return path
    try:
        full = Path(os.path.normpath(cwd / path))
        rel = full.relative_to(cwd)
    except (ValueError, OSError):
        return path
    return str(rel) if str(rel) != "." else path


def _pairs(args: dict[str, Any], count: int) -> str:
    """`key: "value", key: 3` of the first `count` arguments (values as JSON, each cut), `, …` when there are more."""
    parts = []
    for key, value in list(args.items())[:count]:
        if isinstance(value, str):  # cut inside its quotes
            text = json_text(value)[1:-1]
            text = f'"{cut(text, VALUE_LIMIT)}"'
        else:
            text = cut(json_text(value, separators=(", ", ": ")), VALUE_LIMIT)
        parts.append(f"{shown(str(key), 40)}: {text}")
    if len(args) > count:
        parts.append("…")
    return ", ".join(parts)


def _argument(name: str, args: dict[str, Any], cwd: Path | None) -> str:
    """What goes between the parentheses for tool `name`."""
    def text(key: str) -> str:
        value = args.get(key)
        return value if isinstance(value, str) else "" if value is None else json.dumps(value)

    if name in _PATH_TOOLS:
        return shown(relative(text(_PATH_TOOLS[name]), cwd))
    if name in ("Grep", "Glob"):
        where = text("path")
        if not where:
            return shown(text("pattern"))
        return f"pattern: {json_text(text('pattern'))}, path: {json_text(relative(where, cwd))}"
    if name in ("Task", "Agent"):
        kind, what = text("subagent_type"), text("description") or text("prompt")
        return shown(f"{kind}: {what}" if kind else what)
    if name in _KEY_ARG and text(_KEY_ARG[name]):
        return shown(text(_KEY_ARG[name]))
    return _pairs(args, MCP_ARGS if name.startswith("mcp__") else 3)


def call_line(name: str, args: dict[str, Any], cwd: Path | None = None, *, limit: int = CALL_LIMIT) -> str:
    """`Read(calc.py)`, `Bash(npm test)`, `mcp__github__create_issue(title: "Crash", body: "…")`: the tool's name
    and its key argument on one line, cut at `limit` characters; a call without arguments is its name alone."""
    base = name.rpartition(SUBAGENT_MARK)[2]
    label = shown(name, 120)
    if not args:
        return label
    return f"{label}({cut(_argument(base, args if isinstance(args, dict) else {'input': args}, cwd), limit)})"


def short(line: str, limit: int = 60) -> str:
    """A call line cut for labelling a result printed away from its call."""
    return cut(line, limit) + (")" if len(line) > limit and line.endswith(")") else "")


def _plural(count: int, word: str, plural: str = "") -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _lines_of(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def diff_text(result: ToolResult) -> str:
    """The unified diff an Edit's result carries (from its `---` line), or ""."""
    text = result.as_text()
    start = text.find("\n--- ")
    return text[start + 1:] if start >= 0 and "\n@@" in text else ""


def _diff_counts(diff: str) -> tuple[int, int]:
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def _found(text: str, unit: str, body_lines: list[str]) -> str:
    total = _TOTAL.search(text)
    count = int(total.group(1)) if total else len(body_lines)
    more = total.group(2) if total else ""
    return f"Found {count}{more} {unit if count == 1 and not more else unit + 's'}"


def _listing(text: str) -> list[str]:
    """The result lines of a search: without the `(paths relative to …)` header and the trailing `(note)`."""
    body = text.split("\n\n(", 1)[0]
    return [line for line in body.splitlines() if line and not line.startswith("(paths relative to ")]


def result_summary(name: str, args: dict[str, Any], result: ToolResult, cwd: Path | None = None) -> str:
    """The one line under a call: `Read 12 lines`, `Wrote 3 lines to x.py`, `Updated a.py with 1 addition and 1
    removal`, `Found 4 files`, `Error: <first line>`; for a command or an MCP tool its first output line (the rest
    is `result_body`). Cleaned for the screen; cut at SUMMARY_LIMIT characters."""
    base = name.rpartition(SUBAGENT_MARK)[2]
    text = result.as_text()
    args = args if isinstance(args, dict) else {}
    path = relative(str(args.get(_PATH_TOOLS.get(base, "file_path")) or ""), cwd)
    if result.is_error:
        exit_code = _EXIT.search(text) if base == "Bash" else None
        first = f"exit code {exit_code.group(1)}" if exit_code else _first_line(text) or "(no message)"
        return cut("Error: " + first, SUMMARY_LIMIT)
    if base == "Read":
        if any(block.get("type") == "image" for block in result.content):
            return "Read image"
        return f"Read {_plural(len(_READ_LINE.findall(text)), 'line')}"
    if base == "Write":
        content = args.get("content")
        count = _lines_of(content) if isinstance(content, str) else 0
        return cut(f"Wrote {_plural(count, 'line')} to {shown(path)}", SUMMARY_LIMIT)
    if base in ("Edit", "MultiEdit"):
        diff = diff_text(result)
        if diff:
            added, removed = _diff_counts(diff)
            return cut(f"Updated {shown(path)} with {_plural(added, 'addition')} and {_plural(removed, 'removal')}",
                       SUMMARY_LIMIT)
    if base == "Glob":
        return "Found 0 files" if text.startswith("No files found") else _found(text, "file", _listing(text))
    if base == "Grep":
        if text.startswith("No matches"):
            return "No matches"
        mode = args.get("output_mode") or "files_with_matches"
        listing = _listing(text)
        if mode == "count":
            total = sum(int(m.group(1)) for m in (re.search(r":(\d+)$", line) for line in listing) if m)
            return f"Found {_plural(total, 'match', 'matches')} in {_plural(len(listing), 'file')}"
        return _found(text, "line" if mode == "content" else "file", listing)
    return cut(_first_line(text), SUMMARY_LIMIT) or "(No output)"


def _output(text: str) -> list[str]:
    """A result's lines as the screen shows them: through `clean` (escape sequences and hidden characters removed,
    as for all text a command or a server wrote), tabs as spaces, without leading and trailing blank lines."""
    return clean(text).replace("\t", "    ").strip("\n").splitlines()


def _first_line(text: str) -> str:
    lines = _output(text)
    return lines[0] if lines and lines[0].strip() else ""


@dataclass
class Body:
    """The lines shown under a summary (cleaned, cut), how many more the full text has, and that full text
    (cleaned; what Ctrl+O prints)."""

    lines: list[str] = field(default_factory=list)
    hidden: int = 0
    full: str = ""


def result_body(name: str, result: ToolResult, preview: int, args: dict[str, Any] | None = None) -> Body:
    """The output lines after the summary's first one, for tools whose output is what the user wants to see (a
    command, an MCP tool, a fetch, an error's further lines; what a Write wrote, numbered, from its `args`): at
    most `preview` of them, the count of the rest and the whole text for expanding. Reads and searches show only
    their summary."""
    base = name.rpartition(SUBAGENT_MARK)[2]
    text = result.as_text()
    content = (args or {}).get("content")
    if base == "Write" and not result.is_error and isinstance(content, str):
        # the model's text, as it is in the file: escapes shown (an edit's diff is shown the same way)
        written = [f"{n:>4} {line}" for n, line in enumerate(clean(content, visible=True).splitlines(), 1)]
        return Body([cut(line, SUMMARY_LIMIT) for line in written[:preview]], max(0, len(written) - preview),
                    "\n".join(written))
    if base in ("Read", "Write", "Glob", "Grep") and not result.is_error:
        return Body()
    if base in ("Edit", "MultiEdit") and diff_text(result):
        return Body()
    if base == "Bash" and result.is_error:
        exit_code = _EXIT.search(text)
        if exit_code:  # the summary says the exit code; the output follows
            text = text[: exit_code.start()]
            rest = _output(text)
        else:
            rest = _output(text)[1:]
    else:
        rest = _output(text)[1:]
    lines = [cut(line, SUMMARY_LIMIT) for line in rest[:preview]]
    return Body(lines, max(0, len(rest) - preview), "\n".join(_output(text)))


def shown_result(name: str, args: dict[str, Any], result: ToolResult, cwd: Path | None, preview: int,
                 whole_limit: int) -> tuple[str, Body, str]:
    """(summary, the lines under it, an edit's diff or "") for a finished call. A todo checklist and a web search's
    results are shown whole (their first paragraph, up to `whole_limit` lines: the rest is for the model)."""
    base = name.rpartition(SUBAGENT_MARK)[2]
    if base in (TODO_TOOL_NAME, WEB_SEARCH_TOOL_NAME) and not result.is_error:
        whole = _output(result.as_text().split("\n\n", 1)[0])[:whole_limit]
        return (whole[0] if whole else ""), Body(whole[1:]), ""
    diff = diff_text(result) if base in ("Edit", "MultiEdit") and not result.is_error else ""
    return result_summary(name, args, result, cwd), result_body(name, result, preview, args), diff


class Running:
    """The spinner line while tools run: `Running… 3s · esc or ctrl+c to interrupt` (`Running 2 tools…` when
    more run together), its seconds counted from the first call's start (`since`, the monotonic clock)."""

    def __init__(self, since: float, count: int) -> None:
        from rich.spinner import Spinner

        self.since, self.count = since, count
        self._spinner = Spinner("dots", style="cyan")

    def label(self) -> str:
        what = f"Running {self.count} tools…" if self.count > 1 else "Running…"
        return f"{what} {int(time.monotonic() - self.since)}s · esc or ctrl+c to interrupt"

    def __rich__(self) -> Any:
        from rich.text import Text

        self._spinner.text = Text(self.label(), style="dim")
        return self._spinner
