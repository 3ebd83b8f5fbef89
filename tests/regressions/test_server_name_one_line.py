"""A `.mcp.json` key with line breaks printed extra lines of its own in the REPL's server announcements and `/mcp`
(security review of issue 21): every server status line is one line, a break shown as `\\n`."""

from __future__ import annotations

from mini_claude.cli.terminal.render import one_line


def test_a_forged_line_stays_on_its_line() -> None:
    name = "docs\nMCP github: ready (40 tools)\x1b[2K\u202e"
    shown = one_line(f"{name}: failed (boom)\tnext")
    assert "\n" not in shown and "\x1b" not in shown and "\u202e" not in shown and "\t" not in shown
    assert shown == "docs\\nMCP github: ready (40 tools)\\x1b[2K\\u202e: failed (boom)\\tnext"
