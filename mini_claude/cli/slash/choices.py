"""`/model`: choose the session's model with the arrow-key picker (cli/terminal/picker.py), or name it
(`/model NAME`), and remember the choice for the sessions that follow.

The choice is remembered where Claude Code 2.1.328 keeps it: `"model"` in the user's `~/.claude/settings.json`,
as the name chosen (`"sonnet"`, not the id it stands for, so a newer model behind the alias is used next time);
choosing "Default" removes the key, so the built-in default (or `ANTHROPIC_MODEL`) is used again. The rest of the
file is kept, and it is written atomically (jsonfile). `load_settings` reads the key at the next start; a
`--model` flag, `ANTHROPIC_MODEL` or a project's own `model` still win there, and the message says so.

`remember_setting` (one key of the user's settings file set or removed) is shared with `/config` (config.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.agent.compaction import context_tokens
from mini_claude.cli.terminal.picker import Option
from mini_claude.cli.terminal.render import clean
from mini_claude.errors import ConfigError
from mini_claude.jsonfile import read_json_object, write_json_atomic
from mini_claude.models.base import Switchable
from mini_claude.models.catalog import ALIASES, DEFAULT_MODEL, OPUSPLAN, describe, lookup, resolve
from mini_claude.paths import user_home
from mini_claude.settings import USER_SETTINGS_DISPLAY

__all__ = ["DEFAULT_CHOICE", "ModelChoice", "model_choices", "model_command", "remember_setting", "user_settings_path"]

DEFAULT_CHOICE = "default"  # the picker's first row: no `"model"` in the user's file
Choose = Callable[[str, Sequence[Option], int], Awaitable[int | None]]


@dataclass(frozen=True)
class ModelChoice:
    """One row of the picker: the name saved (`sonnet`, `default`), the id it stands for now, and what to show."""

    name: str
    model_id: str
    option: Option


def user_settings_path(env: Mapping[str, str]) -> Path:
    return user_home(dict(env)) / ".claude" / "settings.json"


def model_choices(env: Mapping[str, str]) -> list[ModelChoice]:
    """Default, each alias, then `opusplan`: each with the id it resolves to here and that model's facts."""
    default_id = resolve((env.get("ANTHROPIC_MODEL") or "").strip() or DEFAULT_MODEL, env)
    rows = [ModelChoice(DEFAULT_CHOICE, default_id,
                        Option(f"{'Default':<8}", f"{default_id} · {_facts(default_id)} (no \"model\" in your settings)"))]
    for alias in ALIASES:
        model_id = resolve(alias, env)
        rows.append(ModelChoice(alias, model_id, Option(f"{alias:<8}", f"{model_id} · {_facts(model_id)}")))
    opus, sonnet = resolve("opus", env), resolve("sonnet", env)
    rows.append(ModelChoice(OPUSPLAN, sonnet, Option(OPUSPLAN, f"{opus} in plan mode, {sonnet} otherwise")))
    return rows


def _facts(model_id: str) -> str:
    info = lookup(model_id)
    if info is None:
        return "not in this version's table"
    price = (f" · ${_dollars(info.price_in)}/${_dollars(info.price_out or 0)} per Mtok"
             if info.price_in is not None else "")
    return f"{info.label}, {info.context_window // 1000}k context, {info.max_output // 1000}k output{price}"


def _dollars(amount: float) -> str:
    return f"{amount:.2f}" if amount < 1 else f"{amount:g}"


def _current_row(rows: list[ModelChoice], requested: str, model_id: str, saved: str | None) -> int:
    """The row of the model in use: by the name asked for (`sonnet`), else by id; Default when nothing is saved."""
    for index, row in enumerate(rows):
        if row.name != DEFAULT_CHOICE and row.name == requested.strip().lower():
            return index
    if saved is None and rows[0].model_id == model_id:
        return 0
    return next((i for i, row in enumerate(rows) if i and row.model_id == model_id), 0)


async def model_command(parts: Any, name: str, *, choose: Choose, warn: Callable[[str], None]) -> bool:
    """`/model [NAME]`: without NAME, the picker (the current one preselected; Esc keeps it). Switches the session
    and remembers the choice. Returns whether the model changed (the status line then refreshes)."""
    model = parts.agent.model
    env: dict[str, str] = parts.env
    name = name.strip()
    if not name:
        rows = model_choices(env)
        requested = model.requested if isinstance(model, Switchable) else model.name
        saved = _saved_model(user_settings_path(env))
        current = _current_row(rows, requested, model.name, saved)
        chosen = await choose(clean(f"Select model (in use: {model.name}) — the choice is saved for new sessions"),
                              [row.option for row in rows], current)
        if chosen is None:
            print(clean(f"  kept {model.name}"))
            return False
        name = rows[chosen].name
    if isinstance(model, Switchable):  # Anthropic's API: an alias is a full id, the limits follow the model
        model.switch(rows_default(env) if name == DEFAULT_CHOICE else name, env)
        warning = describe(parts.agent.model.name)
        if warning:
            warn(warning)
    elif name != DEFAULT_CHOICE:  # (another backend's default is chosen when a session starts)
        model.name = name
    parts.agent.context.tokens = context_tokens(env, model.name)  # the window follows the model
    print(clean(f"  model: {model.name}" + (f" ({name})" if name not in (model.name, DEFAULT_CHOICE) else "")))
    try:
        remember_setting(user_settings_path(env), ("model",), None if name == DEFAULT_CHOICE else name)
    except (ConfigError, OSError) as exc:
        warn(clean(f"/model: not remembered for the next sessions: {exc}"))
        return True
    if name == DEFAULT_CHOICE:
        print(f"  removed \"model\" from {USER_SETTINGS_DISPLAY}: new sessions use the default")
    else:
        print(f"  remembered as \"model\" in {USER_SETTINGS_DISPLAY} for new sessions")
    if (env.get("ANTHROPIC_MODEL") or "").strip() and name != DEFAULT_CHOICE:
        warn("ANTHROPIC_MODEL is set in the environment: it wins over the saved choice at the next start")
    return True


def rows_default(env: Mapping[str, str]) -> str:
    """What "Default" switches to: `ANTHROPIC_MODEL` when set, else the built-in default."""
    return (env.get("ANTHROPIC_MODEL") or "").strip() or DEFAULT_MODEL


def _saved_model(path: Path) -> str | None:
    errors: list[ConfigError] = []
    data = read_json_object(path, USER_SETTINGS_DISPLAY, errors) or {}
    value = data.get("model")
    return value if isinstance(value, str) else None


def remember_setting(path: Path, key: Sequence[str], value: Any) -> None:
    """Set the (nested) `key` of the user's settings file to `value` (None removes it; an emptied parent object
    goes too), everything else kept, written atomically. A file that cannot be read as a settings object is left
    alone (ConfigError), and so is a parent key that is not an object."""
    errors: list[ConfigError] = []
    data = read_json_object(path, USER_SETTINGS_DISPLAY, errors)
    if errors:
        raise errors[0]
    data = dict(data or {})
    parents = [data]
    for part in key[:-1]:
        child = parents[-1].get(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"\"{part}\" is not an object; not changed", file=USER_SETTINGS_DISPLAY)
        child = dict(child)
        parents[-1][part] = child
        parents.append(child)
    if value is None:
        parents[-1].pop(key[-1], None)
        for parent, part in zip(reversed(parents[:-1]), reversed(key[:-1]), strict=True):
            if parent[part] == {}:
                del parent[part]
    else:
        parents[-1][key[-1]] = value
    write_json_atomic(path, data, new_mode=0o600)
