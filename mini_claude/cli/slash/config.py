"""`/config`: the common settings mini-claude honours, each with its value in force and the file it comes from;
choose one with the arrow-key picker, then its new value, and it is saved to the user's `~/.claude/settings.json`
(everything else in the file kept, written atomically). `/config KEY=VALUE` does the same without the pickers.

Only keys that change what mini-claude does are offered (Claude Code's /config lists many more: verbose output,
auto-compact, themes… which mini-claude does not read): `model` (the /model picker), `permissions.defaultMode`,
`editorMode` (vi keys in the prompt, applied at once), `outputStyle` (the /output-style picker, which saves it in
the project's local settings as Claude Code does), `alwaysThinkingEnabled` and `effortLevel` (read when a
session starts), and `statusLine`, shown but edited in the file (it is a command). Where each value lives is
Claude Code 2.1.328's: all of them in the user's settings file. A project file that sets the same key wins over
the user's, and the message says so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mini_claude.cli.slash.choices import remember_setting, user_settings_path
from mini_claude.cli.terminal.picker import Option
from mini_claude.cli.terminal.render import clean, one_line
from mini_claude.errors import ConfigError
from mini_claude.models.catalog import EFFORT_LEVELS
from mini_claude.settings import USER_SETTINGS_DISPLAY, Settings, setting_source
from mini_claude.settings_trust import without_project_widening

__all__ = ["CONFIG_HELP", "ITEMS", "ConfigItem", "ConfigTarget", "config_command", "config_rows", "in_force"]

CONFIG_HELP = "show and change the common settings (saved to ~/.claude/settings.json); /config KEY=VALUE sets one"
UNSET = "(unset)"  # a value that removes the key, so the built-in default applies


class ConfigTarget(Protocol):
    """What /config needs of the REPL: the picker, and the prompt's keys to change at once."""

    async def choose(self, title: str, options: Sequence[Option], default: int = 0) -> int | None: ...
    def set_editor_mode(self, vim: bool) -> None: ...


@dataclass(frozen=True)
class ConfigItem:
    """One setting: its key path in the file, its name in the list, the values offered (with what each does) and
    when a change counts (`now`: at once, else from the next session)."""

    key: tuple[str, ...]
    label: str
    values: tuple[tuple[Any, str], ...]
    default: str
    now: bool = False

    @property
    def name(self) -> str:
        return ".".join(self.key)


ITEMS = (
    ConfigItem(("model",), "Model", (), "the built-in default", now=True),
    ConfigItem(("permissions", "defaultMode"), "Default permission mode", (
        ("default", "ask before edits and commands"),
        ("acceptEdits", "file edits in the working folders run without asking"),
        ("plan", "read-only tools only, until you approve a plan"),
        ("bypassPermissions", "every tool runs without asking (only where nothing can be lost)"),
        (None, f"{UNSET}: default")), "default"),
    ConfigItem(("editorMode",), "Editor mode", (("normal", "emacs-style keys"),
                                                 ("vim", "vi keys: Esc for normal mode")), "normal", now=True),
    ConfigItem(("outputStyle",), "Output style", (), "default", now=True),
    ConfigItem(("alwaysThinkingEnabled",), "Thinking", (
        (True, "the model thinks before answering (models that can)"), (False, "no extended thinking"),
        (None, f"{UNSET}: on")), "on"),
    ConfigItem(("effortLevel",), "Effort", (*((level, "") for level in EFFORT_LEVELS),
                                            (None, f"{UNSET}: the model's own default")), "the model's default"),
    ConfigItem(("statusLine",), "Status line", (), "none"),
)
_BY_NAME = {item.name.lower(): item for item in ITEMS} | {"defaultmode": ITEMS[1], "thinking": ITEMS[4],
                                                          "effort": ITEMS[5], "vim": ITEMS[2]}


def in_force(parts: Any, on_disk: Settings) -> Settings:
    """The settings files as they are now, as this session may use them (an untrusted folder's filtered)."""
    return on_disk if parts.trusted else without_project_widening(on_disk)[0]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, dict) and "command" in value:
        return f"runs {value['command']}"
    return str(value)


def config_rows(parts: Any, settings: Settings) -> list[Option]:
    """One picker row per setting: name, value in force, and the key and file it comes from."""
    rows = []
    for item in ITEMS:
        found = setting_source(settings, item.key)
        if item.key == ("model",):
            value = f"{parts.agent.model.name}" + (f" (\"{found[0]}\")" if found else " (default: not set)")
        else:
            value = _shown(found[0]) if found else f"{item.default} (not set)"
        where = f"{item.name} in {found[1]}" if found else item.name
        value = one_line(value)
        rows.append(Option(f"{item.label:<24} {value if len(value) <= 60 else value[:59] + '…'}", one_line(where)))
    return rows


async def config_command(parts: Any, rest: str, *, on_disk: Settings, target: ConfigTarget,
                         warn: Callable[[str], None], model: Callable[[str], Awaitable[None]],
                         output_style: Callable[[str], Awaitable[None]]) -> bool:
    """`/config [KEY=VALUE]`; `model` runs `/model` and `output_style` `/output-style` (for their pickers).
    Returns whether something was changed."""
    delegated = {("model",): model, ("outputStyle",): output_style}
    settings = in_force(parts, on_disk)
    rest = rest.strip()
    if rest:
        key, sep, text = rest.partition("=")
        item = _BY_NAME.get(key.strip().lower())
        if not sep or item is None:
            warn(f"usage: /config [KEY=VALUE] with KEY one of {', '.join(i.name for i in ITEMS)}")
            return False
        if item.key in delegated:
            await delegated[item.key](text.strip())
            return True
        parsed = _parse(item, text.strip())
        if parsed is _INVALID:
            offered = ", ".join(_shown(v) if v is not None else "unset" for v, _ in item.values)
            warn(f"/config: {item.name} takes one of: {offered or 'nothing here (edit the file)'}")
            return False
        return _save(parts, item, parsed, settings, target, warn)
    rows = config_rows(parts, settings)
    chosen = await target.choose("Settings (Enter to change one; Esc to close)", rows, 0)
    if chosen is None:
        return False
    item = ITEMS[chosen]
    if item.key in delegated:
        await delegated[item.key]("")
        return True
    if not item.values:
        print(f"  {item.name} is a command: set it in {USER_SETTINGS_DISPLAY}, e.g. "
              "\"statusLine\": {\"type\": \"command\", \"command\": \"~/.claude/statusline.sh\"}")
        return False
    found = setting_source(settings, item.key)
    unset = next((i for i, (v, _) in enumerate(item.values) if v is None), 0)  # else the first is the default
    current = next((i for i, (v, _) in enumerate(item.values) if found and v == found[0]), unset)
    options = [Option(_shown(v) if v is not None else UNSET, what) for v, what in item.values]
    picked = await target.choose(f"{item.label} ({item.name})", options, current)
    if picked is None:
        return False
    return _save(parts, item, item.values[picked][0], settings, target, warn)


_INVALID = object()


def _parse(item: ConfigItem, text: str) -> Any:
    lowered = text.lower()
    if lowered in ("", "unset", "none", "null"):
        return None if any(v is None for v, _ in item.values) else _INVALID
    for value, _ in item.values:
        if isinstance(value, bool) and lowered in (("true", "on", "yes") if value else ("false", "off", "no")):
            return value
        if isinstance(value, str) and value.lower() == lowered:
            return value
    return _INVALID


def _save(parts: Any, item: ConfigItem, value: Any, settings: Settings, target: ConfigTarget,
          warn: Callable[[str], None]) -> bool:
    try:
        remember_setting(user_settings_path(parts.env), item.key, value)
    except (ConfigError, OSError) as exc:
        warn(clean(f"/config: {item.name} not changed: {exc}"))
        return False
    shown = _shown(value) if value is not None else f"unset ({item.default})"
    when = "now and in new sessions" if item.now else "in new sessions"
    print(f"  {item.label}: {shown} — saved as {item.name} in {USER_SETTINGS_DISPLAY}, used {when}")
    if item.key == ("editorMode",):
        target.set_editor_mode(value == "vim")
    found = setting_source(settings, item.key)
    if found is not None and found[1] != USER_SETTINGS_DISPLAY:
        warn(one_line(f"{found[1]} sets {item.name} too, and wins over {USER_SETTINGS_DISPLAY}"))
    return True

