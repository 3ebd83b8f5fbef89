"""Claude Code-format settings files: `~/.claude/settings.json` (user), `<cwd>/.claude/settings.json` (project),
`<cwd>/.claude/settings.local.json` (local) and `--settings FILE_OR_JSON` (flag), read in that order and merged
(the flag's layer last, so it wins, as in Claude Code).

Lists (permission rules) are concatenated, each rule remembering the file and key it came from; single values
(`permissions.defaultMode`, `model`) come from the last file that sets them; `env` dicts are merged, later files
winning. `apiKeyHelper` is kept with the file it came from (an error message names it). `session_env` is the
environment the session's children get: the real one with `env` on top. A malformed file or value becomes a `ConfigError` in `Settings.errors` (file + key) and everything else
still loads. Missing files are fine. Files are read through `jsonfile`'s bounded door (regular files only, at most
10 MB, at most 128 levels deep). Nothing is printed; the CLI reports `errors`.

Project files (project and local) come from the repository: until its folder is trusted, what they would widen is
dropped (settings_trust.py's `without_project_widening`).

`sandbox` (the OS sandbox for shell commands) is read by mini_claude/sandbox/config.py: from a repository's files,
trusted or not, only what makes it stricter counts. `hooks` is parsed by mini_claude/settings_hooks.py.

Keys a file sets that mini-claude does not act on (Claude Code settings it lacks, or misspellings) are kept per file
in `key_reports` (settings_keys.py), so `doctor` and `--debug` name them instead of dropping them silently.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.errors import ConfigError
from mini_claude.jsonfile import json_type, parse_json_object, read_json_object
from mini_claude.sandbox.config import SandboxConfig, merge_sandbox
from mini_claude.settings_hooks import HOOK_EVENTS, SettingsHook, merge_hooks
from mini_claude.settings_keys import KeyReport, key_report

__all__ = [
    "EDITOR_MODES",
    "FLAG_SETTINGS_DISPLAY",
    "HOOK_EVENTS",
    "KEPT_ENV_VARS",
    "KNOWN_PERMISSION_MODES",
    "LOCAL_SETTINGS_DISPLAY",
    "MODEL_BACKENDS",
    "PROJECT_SETTINGS_DISPLAY",
    "USER_SETTINGS_DISPLAY",
    "KeyReport",
    "Settings",
    "SettingsHelper",
    "SettingsHook",
    "SettingsRule",
    "load_settings",
    "merge_layer",
    "read_flag_settings",
    "session_env",
    "setting_source",
]

# The names shown in messages: "path as given", with `~` for the home directory.
USER_SETTINGS_DISPLAY = "~/.claude/settings.json"
PROJECT_SETTINGS_DISPLAY = ".claude/settings.json"
LOCAL_SETTINGS_DISPLAY = ".claude/settings.local.json"
FLAG_SETTINGS_DISPLAY = "--settings"

# What `env` may not set: where mini-claude keeps its own state (trust, approvals, tokens) and whose home it reads
# are decided by the real environment, before any settings file is trusted.
KEPT_ENV_VARS = frozenset({"HOME", "MINI_CLAUDE_STATE_DIR", "XDG_STATE_HOME"})

# Claude Code's names for permissions.defaultMode that mini-claude implements. Kept here (not imported from
# permissions/, a higher layer) so an unknown mode is reported as a settings problem instead of aborting startup.
KNOWN_PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")

# `editorMode`: the prompt's keys, Claude Code's names (`/vim` and `/config` write it to the user's file)
EDITOR_MODES = ("normal", "vim")

# the model backends a `model` value may name as `backend:name` (models.factory chooses by this prefix)
MODEL_BACKENDS = ("anthropic", "openai")

_RULE_LISTS = ("allow", "deny", "ask")
@dataclass(frozen=True)
class SettingsRule:
    """One permission rule (or additional directory) string as written, with the file (display form) and key it
    came from."""

    text: str
    file: str
    key: str


@dataclass(frozen=True)
class SettingsHelper:
    """A helper command (`apiKeyHelper`) as written, with the file (display form) it came from."""

    command: str
    file: str


@dataclass
class Settings:
    """The merged settings. `user`, `project` and `local` are each file's raw JSON object ({} when missing or
    malformed), for code that must read keys from one file only (MCP approval keys come from `user`)."""

    permissions_allow: list[SettingsRule] = field(default_factory=list)
    permissions_deny: list[SettingsRule] = field(default_factory=list)
    permissions_ask: list[SettingsRule] = field(default_factory=list)
    default_mode: str | None = None
    additional_directories: list[SettingsRule] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    always_thinking: bool | None = None  # `alwaysThinkingEnabled` (False: no extended thinking)
    effort_level: str | None = None  # `effortLevel`: low, medium, high, xhigh or max (models/catalog.py)
    output_style: str | None = None  # `outputStyle`: the output style's name (agent/output_styles.py)
    editor_mode: str | None = None  # `editorMode`: "vim" turns on vi keys in the REPL's prompt, "normal" emacs keys
    api_key_helper: SettingsHelper | None = None
    hooks: list[SettingsHook] = field(default_factory=list)  # every file's hooks, in file order (all run)
    # `shellEnvironment.passThrough`: secret-looking variables (names or `*` globs) shell commands still get
    shell_pass_through: list[str] = field(default_factory=list)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)  # `sandbox` (a repository's file only narrows it)
    user: dict[str, Any] = field(default_factory=dict)
    project: dict[str, Any] = field(default_factory=dict)
    local: dict[str, Any] = field(default_factory=dict)
    flag: dict[str, Any] = field(default_factory=dict)  # --settings (a file or a JSON string)
    flag_display: str = FLAG_SETTINGS_DISPLAY
    loaded_files: list[str] = field(default_factory=list)
    errors: list[ConfigError] = field(default_factory=list)
    # per file (display name): the keys it sets that mini-claude does not act on (settings_keys.py)
    key_reports: dict[str, KeyReport] = field(default_factory=dict)


def load_settings(*, cwd: Path, home: Path, flag: tuple[str, dict[str, Any]] | None = None,
                  sources: Collection[str] | None = None) -> Settings:
    """Read and merge the user, project and local settings files (only those of `sources`, `--setting-sources`;
    None: all), then `flag` (`read_flag_settings`: its display name and object). Never raises for file content
    problems."""
    wanted = sources
    settings = Settings()
    user_path = home / ".claude" / "settings.json"
    project_path = cwd / ".claude" / "settings.json"
    sources: list[tuple[str, Path, str]] = [("user", user_path, USER_SETTINGS_DISPLAY)]
    # Run from the home directory, the project file *is* the user file: read it once.
    if not _same_file(user_path, project_path):
        sources.append(("project", project_path, PROJECT_SETTINGS_DISPLAY))
    sources.append(("local", cwd / ".claude" / "settings.local.json", LOCAL_SETTINGS_DISPLAY))

    for attr, path, display in sources:
        if wanted is not None and attr not in wanted:
            continue
        raw = read_json_object(path, display, settings.errors)
        if raw is None:
            continue
        settings.loaded_files.append(display)
        setattr(settings, attr, raw)
        merge_layer(settings, raw, display)
        _note_keys(settings, raw, display)
    if flag is not None:
        settings.flag_display, settings.flag = flag
        settings.loaded_files.append(settings.flag_display)
        merge_layer(settings, settings.flag, settings.flag_display)
        _note_keys(settings, settings.flag, settings.flag_display)
    return settings


def setting_source(settings: Settings, key: tuple[str, ...]) -> tuple[Any, str] | None:
    """The raw value of the (nested) `key` and the display name of the file it comes from: the last layer that sets
    it (user, project, local, then `--settings`), as `settings` holds them (filtered for trust or not)."""
    found: tuple[Any, str] | None = None
    for raw, display in ((settings.user, USER_SETTINGS_DISPLAY), (settings.project, PROJECT_SETTINGS_DISPLAY),
                         (settings.local, LOCAL_SETTINGS_DISPLAY), (settings.flag, settings.flag_display)):
        value: Any = raw
        for part in key:
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            found = (value, display)
    return found


def _note_keys(settings: Settings, raw: dict[str, Any], display: str) -> None:
    report = key_report(raw)
    if report:
        settings.key_reports[display] = report


def read_flag_settings(value: str, cwd: Path) -> tuple[str, dict[str, Any]]:
    """`--settings VALUE`: a JSON object when VALUE starts with `{`, else a settings file (relative to `cwd`, `~`
    expanded), read through the same bounded door. Returns (display name, object); raises ConfigError naming the
    flag when the file is missing or either is not a JSON object: a settings file the user named must not be
    silently skipped."""
    errors: list[ConfigError] = []
    if value.lstrip().startswith("{"):
        display = f"{FLAG_SETTINGS_DISPLAY} (JSON)"
        raw = parse_json_object(value, display, errors)
    else:
        path = Path(value).expanduser()
        path = path if path.is_absolute() else cwd / path
        display = f"{FLAG_SETTINGS_DISPLAY} {value}"
        if not path.exists():
            raise ConfigError("no such file", file=display)
        raw = read_json_object(path, display, errors)
    if errors:
        raise errors[0]
    if raw is None:
        raise ConfigError("not a settings file", file=display)
    return display, raw


def session_env(base: Mapping[str, str], settings: Settings) -> dict[str, str]:
    """The environment of what the session runs — shell commands, MCP servers, hooks, the apiKeyHelper: `base`
    (the real process environment, never a project's `.env`) with the settings' `env` on top, as Claude Code
    applies it. Pass settings already filtered for trust: a repository's `env` counts only in a trusted folder."""
    return {**base, **settings.env}


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def merge_layer(settings: Settings, raw: dict[str, Any], display: str, errors: list[ConfigError] | None = None
                ) -> None:
    if errors is None:
        errors = settings.errors

    def bad(key: str, message: str) -> None:
        errors.append(ConfigError(message, file=display, key=key))

    if "permissions" in raw:
        perms = raw["permissions"]
        if not isinstance(perms, dict):
            bad("permissions", f"expected an object, got {json_type(perms)}")
        else:
            for name in _RULE_LISTS:
                if name not in perms:
                    continue
                key = f"permissions.{name}"
                items = perms[name]
                if not isinstance(items, list):
                    bad(key, f"expected a list of rule strings, got {json_type(items)}")
                    continue
                target: list[SettingsRule] = getattr(settings, f"permissions_{name}")
                for index, item in enumerate(items):
                    if isinstance(item, str):
                        target.append(SettingsRule(item, display, f"{key}[{index}]"))
                    else:
                        bad(f"{key}[{index}]", f"expected a rule string, got {json_type(item)}")
            if "defaultMode" in perms:
                mode = perms["defaultMode"]
                if not isinstance(mode, str):
                    bad("permissions.defaultMode", f"expected a string, got {json_type(mode)}")
                elif mode not in KNOWN_PERMISSION_MODES:
                    bad("permissions.defaultMode",
                        f"unknown mode {mode!r} (expected one of: {', '.join(KNOWN_PERMISSION_MODES)})")
                else:
                    settings.default_mode = mode
            if "additionalDirectories" in perms:
                _merge_directories(settings, perms["additionalDirectories"], display, bad)

    if "env" in raw:
        env = raw["env"]
        if not isinstance(env, dict):
            bad("env", f"expected an object of strings, got {json_type(env)}")
        else:
            for name, value in env.items():
                if name in KEPT_ENV_VARS:
                    bad(f"env.{name}", "not applied: mini-claude reads its home and state folder from the real "
                                       "environment")
                elif isinstance(value, str):
                    settings.env[name] = value
                else:
                    bad(f"env.{name}", f"expected a string, got {json_type(value)}")

    if "hooks" in raw:
        merge_hooks(settings.hooks, raw["hooks"], display, bad)

    if "shellEnvironment" in raw:
        _merge_shell_environment(settings, raw["shellEnvironment"], display, bad)
    if "sandbox" in raw:  # a repository's file may turn it on or narrow it, never widen it (sandbox/config.py)
        trusted = display not in (PROJECT_SETTINGS_DISPLAY, LOCAL_SETTINGS_DISPLAY)
        settings.sandbox = merge_sandbox(settings.sandbox, raw["sandbox"], trusted=trusted, bad=bad)

    if "apiKeyHelper" in raw:
        helper = raw["apiKeyHelper"]
        if isinstance(helper, str) and helper.strip():
            settings.api_key_helper = SettingsHelper(helper, display)
        elif helper not in (None, ""):
            bad("apiKeyHelper", f"expected a command string, got {json_type(helper)}")

    if "model" in raw:
        model = raw["model"]
        if isinstance(model, str):
            settings.model = model
        else:
            bad("model", f"expected a string, got {json_type(model)}")

    if "alwaysThinkingEnabled" in raw:
        thinking = raw["alwaysThinkingEnabled"]
        if isinstance(thinking, bool):
            settings.always_thinking = thinking
        else:
            bad("alwaysThinkingEnabled", f"expected true or false, got {json_type(thinking)}")

    if "outputStyle" in raw:
        style = raw["outputStyle"]
        if isinstance(style, str) and style.strip():
            settings.output_style = style.strip()
        else:
            bad("outputStyle", f"expected an output style name, got {json_type(style)}")

    if "effortLevel" in raw:
        effort = raw["effortLevel"]
        if isinstance(effort, str) and effort.strip():
            settings.effort_level = effort.strip().lower()
        else:
            bad("effortLevel", f"expected a level name (low, medium, high, xhigh, max), got {json_type(effort)}")

    if "editorMode" in raw:
        editor = raw["editorMode"]
        if editor in EDITOR_MODES:
            settings.editor_mode = editor
        else:
            got = json_type(editor) if not isinstance(editor, str) else "another name"
            bad("editorMode", f"expected \"normal\" or \"vim\", got {got}")


def _merge_directories(settings: Settings, items: Any, display: str, bad: Callable[[str, str], None]) -> None:
    key = "permissions.additionalDirectories"
    if not isinstance(items, list):
        bad(key, f"expected a list of directory paths, got {json_type(items)}")
        return
    for index, item in enumerate(items):
        if isinstance(item, str) and item.strip():
            settings.additional_directories.append(SettingsRule(item, display, f"{key}[{index}]"))
        else:
            bad(f"{key}[{index}]", f"expected a directory path, got {json_type(item)}")


def _merge_shell_environment(settings: Settings, section: Any, display: str, bad: Callable[[str, str], None]) -> None:
    """`{"passThrough": ["NPM_TOKEN", "GH_*"]}`, from the user's own file or `--settings` only: a repository must
    not be able to send the user's secrets to the commands the model runs."""
    if display in (PROJECT_SETTINGS_DISPLAY, LOCAL_SETTINGS_DISPLAY):
        bad("shellEnvironment", f"ignored: a repository's settings cannot pass your secret-looking variables to "
                                f"commands (set it in {USER_SETTINGS_DISPLAY} or --settings)")
        return
    items = section.get("passThrough", []) if isinstance(section, dict) else None
    if not isinstance(items, list):
        bad("shellEnvironment.passThrough" if isinstance(section, dict) else "shellEnvironment",
            f"expected a list of variable names, got {json_type(items if isinstance(section, dict) else section)}")
        return
    for index, item in enumerate(items):
        if isinstance(item, str) and item.strip():
            settings.shell_pass_through.append(item.strip())
        else:
            got = "an empty string" if isinstance(item, str) else json_type(item)
            bad(f"shellEnvironment.passThrough[{index}]", f"expected a variable name, got {got}")
