"""An inline list to choose from with the arrow keys: `/model`, `/resume`, `/config` and the other pickers.

`pick` draws the options under a title, the current one marked `❯`; ↑/↓ (or k/j) move, Enter chooses, a digit
jumps to that row, Esc or Ctrl+C dismisses (None). It runs as its own small prompt_toolkit application below
the output (not full screen), so what was printed before stays in the scrollback. When stdin is not a terminal
(a pipe, a test feeding lines) it falls back to a numbered list and a typed number through `typed`.
Option text is shown as given: callers pass text already through `clean()`.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

__all__ = ["Option", "pick"]


@dataclass(frozen=True)
class Option:
    """One row: its label, and a dim detail after it (an id, an age, a size)."""

    label: str
    detail: str = ""


async def pick(title: str, options: Sequence[Option], *, default: int = 0,
               typed: Callable[[str], Awaitable[str | None]] | None = None) -> int | None:
    """The index of the option chosen, or None when dismissed (or there is nothing to choose)."""
    if not options:
        return None
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        return await _numbered(title, options, typed)
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    state = {"at": min(max(default, 0), len(options) - 1)}

    def lines() -> FormattedText:
        rows: list[tuple[str, str]] = [("bold", f" {title}\n")]
        for i, option in enumerate(options):
            here = i == state["at"]
            rows.append(("fg:ansicyan bold" if here else "", f" {'❯' if here else ' '} {i + 1}. {option.label}"))
            if option.detail:
                rows.append(("fg:ansibrightblack", f"  {option.detail}"))
            rows.append(("", "\n"))
        rows.append(("fg:ansibrightblack", " ↑/↓ to move · Enter to choose · Esc to cancel"))
        return FormattedText(rows)

    keys = KeyBindings()

    @keys.add("up")
    @keys.add("k")
    def _up(event: object) -> None:
        state["at"] = (state["at"] - 1) % len(options)

    @keys.add("down")
    @keys.add("j")
    def _down(event: object) -> None:
        state["at"] = (state["at"] + 1) % len(options)

    @keys.add("enter")
    def _choose(event: object) -> None:
        app.exit(result=state["at"])

    @keys.add("escape", eager=True)
    @keys.add("c-c")
    @keys.add("c-d")
    def _dismiss(event: object) -> None:
        app.exit(result=None)

    for digit in range(1, min(len(options), 9) + 1):
        keys.add(str(digit))(lambda event, i=digit - 1: app.exit(result=i))

    app: Application[int | None] = Application(
        layout=Layout(HSplit([Window(FormattedTextControl(lines, show_cursor=False), dont_extend_height=True,
                                     wrap_lines=True)])),  # a long row wraps rather than being cut
        key_bindings=keys, full_screen=False, erase_when_done=True)
    chosen = await app.run_async()
    return chosen


async def _numbered(title: str, options: Sequence[Option],
                    typed: Callable[[str], Awaitable[str | None]] | None) -> int | None:
    print(f"  {title}")
    for i, option in enumerate(options, 1):
        print(f"  {i:>2}. {option.label}" + (f"  {option.detail}" if option.detail else ""))
    if typed is None:
        return None
    answer = await typed("Which (number, Enter for none)? ")
    if answer is None or not answer.strip().isdigit() or not 1 <= int(answer) <= len(options):
        return None
    return int(answer) - 1
