"""The shape of a `mini-claude doctor` report and how it reads: sections of rows, each row what was found and, when
something needs the user, its problems (`mcp.doctor.Problem`: code, cause, fix — one line each) or notes (worth
knowing, not a fault). Rendered as text (every line through `render.clean`) or as one JSON object for scripts.

Nothing here looks at the machine: the checks (setup.py, files.py, sandbox.py, servers.py of this folder) build
the rows, report.py assembles and prints them.

Much of what a row holds comes from strangers: a repository's model name, env names and MCP server names, a
server's error or stderr. In the text report each piece is one line, controls and bidi characters shown as escapes
and a line break as `\\n` (`_shown`), so no value can start a line of its own and pass for a problem or a fix of the
doctor's; `--json` escapes them as `\\uXXXX` (`render.json_text`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from mini_claude.cli.terminal.render import clean, json_text
from mini_claude.logredact import redact_text
from mini_claude.mcp.doctor import Problem
from mini_claude.settings import Settings
from mini_claude.trust import TrustState

__all__ = ["Problem", "Report", "Row", "Scene", "Section"]

OK_MARK, BAD_MARK, NOTE_MARK = "✔", "✘", "·"
LABEL_WIDTH = 12


@dataclass
class Scene:
    """What the checks look at, as a session in `cwd` would see it: `env` is the real process environment (the
    state folder and home come from it), `settings` every file as read, `effective` what trust lets apply (with
    `ignored`, one entry per project file: `.claude/settings.json permissions.allow, env`), and the project's
    `.env` (its values reach the model client alone, and are never shown)."""

    cwd: Path
    env: dict[str, str]
    home: Path
    state: Path
    settings: Settings
    effective: Settings
    ignored: list[str]
    trust: TrustState
    dotenv: dict[str, str]

    @property
    def session_env(self) -> dict[str, str]:
        """What the session's children (servers, shell, helpers) get: the real environment and the settings' env."""
        return {**self.env, **self.effective.env}


@dataclass
class Row:
    """One thing checked: `label` (short), `text` (what was found), machine-readable `data` for `--json`."""

    label: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def problem(self, code: str, cause: str, fix: str) -> Row:
        """Add a problem (a URL's secrets never reach the report). Returns the row, for chaining."""
        if all(p.code != code or p.cause != cause for p in self.problems):
            self.problems.append(Problem(code, redact_text(cause), redact_text(fix)))
        return self

    def note(self, text: str) -> Row:
        self.notes.append(redact_text(text))
        return self

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "text": self.text, "ok": self.ok, "data": self.data,
                "problems": [{"code": p.code, "cause": p.cause, "fix": p.fix} for p in self.problems],
                "notes": list(self.notes)}


@dataclass
class Section:
    """A part of the report: `name` is its `--json` key (`install`, `keys`, `settings`, `memory`, `mcp-config`,
    `sandbox`, `servers`), `title` its heading."""

    name: str
    title: str
    rows: list[Row] = field(default_factory=list)

    def add(self, label: str, text: str, **data: Any) -> Row:
        row = Row(label, text, data)
        self.rows.append(row)
        return row


@dataclass
class Report:
    sections: list[Section] = field(default_factory=list)
    servers: list[dict[str, Any]] = field(default_factory=list)  # `mcp doctor --json`'s records, for scripts

    @property
    def problems(self) -> list[Problem]:
        return [p for section in self.sections for row in section.rows for p in row.problems]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "problem_count": len(self.problems),
                "sections": {s.name: [row.to_json() for row in s.rows] for s in self.sections},
                "servers": self.servers}

    def write(self, out: TextIO, *, as_json: bool) -> None:
        if as_json:
            out.write(json_text(self.to_json(), indent=2) + "\n")
            return
        for section in self.sections:
            _line(out, section.title)
            if not section.rows:
                _line(out, f"  {NOTE_MARK} nothing found")
            for row in section.rows:
                mark = OK_MARK if row.ok else BAD_MARK
                _line(out, f"  {mark} {_shown(row.label):<{LABEL_WIDTH}} {_shown(row.text)}")
                for problem in row.problems:
                    _detail(out, "problem", _shown(problem.cause))
                    _detail(out, "fix", _shown(problem.fix))
                for text in row.notes:
                    _detail(out, "note", _shown(text))
            _line(out, "")
        count = len(self.problems)
        _line(out, "No problems found." if not count else
              f"{count} problem{'s' * (count != 1)} found: each is marked {BAD_MARK} above, with its fix.")


def _shown(text: str) -> str:
    """One piece of a report line (see the module docstring): visible escapes, a line break as `\\n`."""
    return clean(text, visible=True).replace("\n", "\\n")


def _detail(out: TextIO, label: str, text: str) -> None:
    _line(out, f"      {label:<8} {text}")


def _line(out: TextIO, text: str) -> None:
    out.write(clean(text) + "\n")
