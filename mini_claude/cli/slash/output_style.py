"""`/output-style [NAME]`: show the output styles (agent/output_styles.py) and put one in force.

Without a name it lists them in the arrow-key picker (the one in force marked, each with where it comes from: built
in, or the file); with a name (any case, as in Claude Code) it switches at once. The choice applies from the next
model request (the system prompt is built before each one) and is saved as `"outputStyle"` in the project's
`.claude/settings.local.json`, everything else in that file kept — where Claude Code 2.1.328's `/output-style`
saves it. Project style files of an untrusted folder are not loaded; the listing says how many wait for trust.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from mini_claude.agent.output_styles import DEFAULT_STYLE, OutputStyle, StyleChoice, find_style, is_default
from mini_claude.cli.terminal.picker import Option, pick
from mini_claude.cli.terminal.render import clean
from mini_claude.errors import ConfigError
from mini_claude.jsonfile import read_json_object, write_json_atomic
from mini_claude.settings import LOCAL_SETTINGS_DISPLAY

__all__ = ["StyleOutcome", "output_style_command", "save_output_style"]

TypedLine = Callable[[str], Awaitable[str | None]]


class StyleOutcome:
    """What `/output-style` did: the lines to show, and the warnings."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.warnings: list[str] = []


async def output_style_command(choice: StyleChoice, wanted: str, *, cwd: Path,
                               typed: TypedLine | None = None) -> StyleOutcome:
    """Switch to `wanted` (a picker when empty) and save it; the lines to show."""
    out = StyleOutcome()
    if choice.skipped:
        out.warnings.append(f"{len(choice.skipped)} output style file(s) in .claude/output-styles not loaded: this "
                            "folder is not trusted (`mini-claude trust`)")
    styles = list(choice.styles.values())
    if not wanted:
        options = [Option(f"{DEFAULT_STYLE}{' (current)' if choice.current is None else ''}",
                          "the built-in prompt, for software work")]
        options += [Option(f"{s.name}{' (current)' if s is choice.current else ''}",
                           f"{s.description} — {s.origin()}" if s.description else s.origin()) for s in styles]
        at = await pick("Output style", [Option(clean(o.label), clean(o.detail)) for o in options],
                        default=0 if choice.current is None else 1 + styles.index(choice.current), typed=typed)
        if at is None:
            out.lines.append(f"output style unchanged: {choice.name}")
            return out
        chosen = None if at == 0 else styles[at - 1]
    elif is_default(wanted):
        chosen = None
    else:
        chosen = find_style(choice.styles, wanted)
        if chosen is None:
            names = ", ".join([DEFAULT_STYLE, *choice.styles])
            out.warnings.append(f"no output style named {wanted!r}; the styles: {names}")
            return out
    choice.current = chosen
    out.lines.append(_applied(chosen))
    try:
        path = save_output_style(cwd, chosen.name if chosen is not None else DEFAULT_STYLE)
    except (ConfigError, OSError) as exc:
        out.warnings.append(f"/output-style: not saved for the next sessions: {exc}")
    else:
        out.lines.append(f"saved as \"outputStyle\" in {LOCAL_SETTINGS_DISPLAY} ({path})")
    return out


def _applied(style: OutputStyle | None) -> str:
    if style is None:
        return f"output style set to {DEFAULT_STYLE} (the built-in prompt) from the next request"
    keeps = "keeps" if style.keep_coding_instructions else "replaces"
    return (f"output style set to {style.name} ({style.origin()}; it {keeps} the coding instructions) from the next "
            "request")


def save_output_style(cwd: Path, name: str) -> Path:
    """Set `"outputStyle"` in `cwd/.claude/settings.local.json` (created when missing), keeping the rest of the
    file; a file that cannot be read as a settings object, or a link at it or at `.claude` (a repository's link may
    point anywhere: into another project, or the user's own folders), is left alone (ConfigError)."""
    path = cwd / ".claude" / "settings.local.json"
    if path.is_symlink() or path.parent.is_symlink():
        raise ConfigError("not written: it or its .claude folder is a symbolic link", file=LOCAL_SETTINGS_DISPLAY)
    errors: list[ConfigError] = []
    data = read_json_object(path, LOCAL_SETTINGS_DISPLAY, errors)
    if errors:
        raise errors[0]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {**(data or {}), "outputStyle": name}, new_mode=0o600)
    return path
