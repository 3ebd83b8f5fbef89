"""What an untrusted folder's settings files lose.

Project files (project and local) come from the repository, so until its folder is trusted (`mini_claude.trust`)
`without_project_widening` drops what they would *widen*: allow rules, a `defaultMode` other than
`default`/`plan`, `additionalDirectories`, `enableAllProjectMcpServers`/`enabledMcpjsonServers`, `env`, `hooks`,
`statusLine`, a `model` that names a backend (`openai:gpt-4o` chooses where the user's prompts and key go; a bare
model name does not) and every helper command (`apiKeyHelper`, `*Helper`, `awsAuthRefresh`,
`awsCredentialExport`). What they *restrict* (deny and ask rules, `disabledMcpjsonServers`, `default`/`plan` modes) always applies, and the
user's own file, and the command line's `--settings`, are never filtered. `shellEnvironment.passThrough` (the
secret-looking variables shell commands may see, mini_claude.secrets) counts only from the user's own file and
`--settings`, trusted folder or not: in a repository's file it is one warning and nothing else.
"""

from __future__ import annotations

from typing import Any

from mini_claude.errors import ConfigError
from mini_claude.settings import (
    KNOWN_PERMISSION_MODES,
    LOCAL_SETTINGS_DISPLAY,
    MODEL_BACKENDS,
    PROJECT_SETTINGS_DISPLAY,
    USER_SETTINGS_DISPLAY,
    Settings,
    merge_layer,
)

__all__ = ["without_project_widening"]

# modes a project file may set without trust: neither lets a tool run without asking where `default` would ask
_RESTRICTING_MODES = ("default", "plan")
# top-level keys that run a command of the file's choosing or change the environment of what runs
_WIDENING_KEYS = ("env", "hooks", "statusLine", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport",
                  "enableAllProjectMcpServers", "enabledMcpjsonServers")


def without_project_widening(settings: Settings) -> tuple[Settings, list[str]]:
    """`settings` as an untrusted folder may have them: the project and local files without the keys that widen
    (see the module docstring), merged again over the user's file. Also returns what was dropped, one entry per
    file (`.claude/settings.json permissions.allow, env`), for the one warning line. Values are never quoted: a
    mode name is the only value shown, and only a known one."""
    kept = Settings(user=settings.user, flag=settings.flag, flag_display=settings.flag_display,
                    loaded_files=list(settings.loaded_files), errors=settings.errors,
                    key_reports=settings.key_reports)
    scratch: list[ConfigError] = []  # the original load reported every malformed value already
    dropped: list[str] = []
    for attr, display in (("user", USER_SETTINGS_DISPLAY), ("project", PROJECT_SETTINGS_DISPLAY),
                          ("local", LOCAL_SETTINGS_DISPLAY)):
        raw: dict[str, Any] = getattr(settings, attr)
        if attr != "user":
            raw, keys = _strip_widening(raw)
            setattr(kept, attr, raw)
            if keys:
                dropped.append(f"{display} {', '.join(keys)}")
        merge_layer(kept, raw, display, scratch)
    if settings.flag:
        merge_layer(kept, settings.flag, settings.flag_display, scratch)  # the user's own command line
    return kept, dropped


def _strip_widening(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy of one project file's object without its widening keys, and the names of those that were set."""
    kept = dict(raw)
    dropped: list[str] = []
    perms = raw.get("permissions")
    if isinstance(perms, dict):
        perms = dict(perms)
        kept["permissions"] = perms
        for key in ("allow", "additionalDirectories"):
            if key in perms and perms.pop(key) not in (None, [], ""):
                dropped.append(f"permissions.{key}")
        mode = perms.get("defaultMode")
        if mode is not None and mode not in _RESTRICTING_MODES:
            del perms["defaultMode"]
            shown = f"={mode}" if mode in KNOWN_PERMISSION_MODES else ""
            dropped.append(f"permissions.defaultMode{shown}")
    model = raw.get("model")
    if isinstance(model, str) and ":" in model and model.partition(":")[0].lower() in MODEL_BACKENDS:
        del kept["model"]  # `openai:…` would choose the backend (and so where the user's prompts go)
        dropped.append("model")
    for key in raw:
        if key in _WIDENING_KEYS or key.endswith("Helper"):
            value = kept.pop(key)
            if value not in (None, False, "", [], {}):
                dropped.append(key)
    return kept, dropped
