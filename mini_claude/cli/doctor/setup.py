"""The doctor's install and keys sections: what runs (mini-claude, Python, the optional programs found on the
session's PATH), whether the state folder can be written and how big it is; which model credential is in force and
where it came from, the endpoint, the model.

A credential is *named*, never shown, not even in part: the report carries variable names, file names and the
redacted endpoint only. An `apiKeyHelper` is not run (it may ask for a login); only its program is looked for, and
its command line is not printed (it may hold a key). An endpoint that is not a URL is not shown either (a key
pasted into the wrong variable would be).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from mini_claude import __version__
from mini_claude.cli.doctor.rows import Row, Scene, Section
from mini_claude.errors import ModelError
from mini_claude.logredact import redact_url
from mini_claude.models.factory import (
    api_key_helper,
    choose_backend,
    create_model,
    model_environment,
    split_provider,
)
from mini_claude.settings import LOCAL_SETTINGS_DISPLAY, PROJECT_SETTINGS_DISPLAY, USER_SETTINGS_DISPLAY

__all__ = ["MIN_PYTHON", "OPTIONAL_PROGRAMS", "folder_size", "install_section", "keys_section"]

MIN_PYTHON = (3, 11)
VERSION_TIMEOUT_S = 5.0
MAX_SIZE_ENTRIES = 200_000  # a state folder walked further is reported as "at least"
# program -> what is missing without it
OPTIONAL_PROGRAMS = {
    "rg": "Grep searches in Python instead of ripgrep (slower on big trees)",
    "git": "shell commands that use git fail",
    "node": "MCP servers written in JavaScript cannot run",
    "npx": "MCP servers started with npx (most published ones) cannot start",
}
CREDENTIAL_VARS = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")
NO_KEY_FIX = ("set ANTHROPIC_API_KEY (export it in your shell, or put it under \"env\" in ~/.claude/settings.json); "
              "or ANTHROPIC_AUTH_TOKEN for a gateway, an \"apiKeyHelper\" in ~/.claude/settings.json, "
              "OPENAI_API_KEY (with OPENAI_BASE_URL for another compatible server), or OPENAI_BASE_URL alone for a "
              "local server that needs no key")


async def install_section(scene: Scene) -> Section:
    section = Section("install", "Install")
    section.add("mini-claude", __version__, version=__version__)
    python = platform.python_version()
    row = section.add("python", f"{python} ({sys.executable})", version=python, path=sys.executable)
    if sys.version_info[:2] < MIN_PYTHON:
        row.problem("python-too-old", f"Python {python} is older than {'.'.join(map(str, MIN_PYTHON))}",
                    f"reinstall mini-claude with Python {'.'.join(map(str, MIN_PYTHON))} or newer")
    path = scene.session_env.get("PATH", os.defpath)
    found = {name: shutil.which(name, path=path) for name in OPTIONAL_PROGRAMS}
    versions = await asyncio.gather(*(_version(where) if where and name in ("rg", "git", "node") else _none()
                                      for name, where in found.items()))
    for (name, where), version in zip(found.items(), versions, strict=True):
        if where is None:
            section.add(name, "not found (optional)", found=False).note(f"without it: {OPTIONAL_PROGRAMS[name]}")
        else:
            shown = f"{version} ({where})" if version else where
            section.add(name, shown, found=True, path=where, version=version)
    await asyncio.to_thread(_state_row, section, scene.state)  # file-system work off the event loop
    return section


async def _none() -> str | None:
    return None


async def _version(program: str) -> str | None:
    """The first line of `program --version`, bounded; None when it fails. The child is always reaped."""
    try:
        proc = await asyncio.create_subprocess_exec(program, "--version", stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.DEVNULL)
    except OSError:
        return None
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), VERSION_TIMEOUT_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return None
    lines = out.decode("utf-8", "replace").strip().splitlines()
    return lines[0][:80] if proc.returncode == 0 and lines else None


def _state_row(section: Section, state: Path) -> None:
    fix = f"make {state} writable by you (chmod u+w), or point MINI_CLAUDE_STATE_DIR at a writable folder"
    if not state.exists():
        ancestor = next((p for p in state.parents if p.exists()), Path("/"))
        row = section.add("state", f"{state} (not created yet: made on first use)", path=str(state), exists=False)
        if not (ancestor.is_dir() and os.access(ancestor, os.W_OK | os.X_OK)):
            row.problem("state-not-writable", f"{state} cannot be created: {ancestor} is not writable", fix)
        return
    if not state.is_dir():
        section.add("state", str(state), path=str(state), exists=True).problem(
            "state-not-a-folder", f"{state} is not a folder", "remove or rename it, or set MINI_CLAUDE_STATE_DIR")
        return
    size, files, complete = folder_size(state)
    text = f"{state} · {_bytes(size)}{'' if complete else ' at least'} in {files:,} file{'s' * (files != 1)}"
    row = section.add("state", text, path=str(state), exists=True, bytes=size, files=files, complete=complete)
    try:
        with tempfile.NamedTemporaryFile(dir=state, prefix=".doctor-"):
            pass
    except OSError as exc:
        row.problem("state-not-writable", f"{state} is not writable ({exc.strerror or exc})", fix)


def folder_size(folder: Path) -> tuple[int, int, bool]:
    """(bytes, files, complete) of the regular files under `folder`, symlinks not followed, at most
    `MAX_SIZE_ENTRIES` entries looked at (complete is False beyond)."""
    total = files = seen = 0
    stack = [folder]
    while stack:
        current = stack.pop()
        with contextlib.suppress(OSError), os.scandir(current) as entries:
            for entry in entries:
                seen += 1
                if seen > MAX_SIZE_ENTRIES:
                    return total, files, False
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
                        files += 1
    return total, files, True


def _bytes(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


def keys_section(scene: Scene) -> Section:
    """Which credential a session here would use, named with where it came from; the endpoint; the model."""
    section = Section("keys", "Keys")
    settings = scene.effective
    dotenv_env = model_environment(scene.env, scene.dotenv, trusted=scene.trust.trusted)
    env = {**dotenv_env.env, **settings.env}  # as start_session builds the model client's environment

    def origin(name: str) -> str:
        return _origin(name, scene, dotenv_env.env)

    for name in (*CREDENTIAL_VARS, "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        if name in env and not env[name].strip():
            section.add("variable", f"{name} is set but empty ({origin(name)}): it counts as not set", variable=name)
    helper = settings.api_key_helper
    provider = split_provider(settings.model)[0]
    try:
        backend = choose_backend(env, provider, helper=helper is not None)
    except ModelError as exc:
        cause = "no model credential found" if not env.get("MINI_CLAUDE_BACKEND", "").strip() else str(exc)
        section.add("credential", "none", source=None).problem("no-credential", cause, NO_KEY_FIX)
        _dotenv_row(section, scene, dotenv_env.ignored)
        return section
    source, also = _credential(backend, env, helper.file if helper else None)
    text = f"{source} ({origin(source)})" if source in env else source
    row = section.add("credential", f"{text} → {backend}", source=source, backend=backend, also_set=also)
    for other in also:
        if other in env:  # a helper not run gets its own note below
            row.note(f"{other} is set too ({origin(other)})")
    if helper is not None and backend == "anthropic" and source != "ANTHROPIC_AUTH_TOKEN":  # the helper would run
        _check_helper(row, helper.command, helper.file, scene.session_env)
    elif helper is not None:
        row.note(f"the apiKeyHelper of {helper.file} is not run: {source} is used instead")
    _endpoint_row(section, backend, env, origin)
    try:
        key_helper = api_key_helper(helper, cwd=scene.cwd, env=scene.session_env) if helper else None
        model = create_model(None, env, settings_model=settings.model, key_helper=key_helper)
        section.add("model", f"{model.name} ({_model_origin(backend, env, settings.model, origin)})",
                    name=model.name)
    except ModelError as exc:
        row.problem("no-credential", str(exc), NO_KEY_FIX)
    _dotenv_row(section, scene, dotenv_env.ignored)
    return section


def _credential(backend: str, env: Mapping[str, str], helper_file: str | None) -> tuple[str, list[str]]:
    """(the credential in force, the others set) — credentials.py's order: the token, the helper, the key."""
    def has(name: str) -> bool:
        return bool(env.get(name, "").strip())

    if backend == "openai":
        return ("OPENAI_API_KEY" if has("OPENAI_API_KEY") else "none (OPENAI_BASE_URL alone: a keyless server)",
                [])
    helper = f"apiKeyHelper ({helper_file})" if helper_file else None
    ranked = [name for name in ("ANTHROPIC_AUTH_TOKEN", helper, "ANTHROPIC_API_KEY")
              if name is not None and (name == helper or has(name))]
    if not ranked:
        return "none", []
    return ranked[0], ranked[1:]


def _check_helper(row: Row, command: str, file: str, env: Mapping[str, str]) -> None:
    """The helper's program found on the session's PATH (its command line is never shown)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return  # /bin/sh will say what is wrong with it when it runs
    if not words or any(ch in words[0] for ch in "$`;|&<>(){}="):
        return
    program = words[0]
    if "/" in program:
        path = Path(program).expanduser()
        found = path.is_file() and os.access(path, os.X_OK)
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath)) is not None
    if not found:
        row.problem("helper-not-found", f"apiKeyHelper ({file}): its program {Path(program).name!r} is not found",
                    f"install it, or give its absolute path in {file} (\"apiKeyHelper\")")


def _endpoint_row(section: Section, backend: str, env: Mapping[str, str], origin: Callable[[str], str]) -> None:
    name = "ANTHROPIC_BASE_URL" if backend == "anthropic" else "OPENAI_BASE_URL"
    value = env.get(name, "").strip()
    if not value:
        default = "https://api.anthropic.com" if backend == "anthropic" else "https://api.openai.com/v1"
        section.add("endpoint", f"{default} (default)", url=default, variable=None)
        return
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        section.add("endpoint", f"{name} ({origin(name)}): not a URL (not shown)", url=None, variable=name).problem(
            "bad-endpoint", f"{name} is not an http(s) URL",
            f"set {name} to the server's address, e.g. https://gateway.example.com")
        return
    shown = redact_url(value)
    section.add("endpoint", f"{shown} ({name}, {origin(name)})", url=shown, variable=name)


def _model_origin(backend: str, env: Mapping[str, str], settings_model: str | None,
                  origin: Callable[[str], str]) -> str:
    if backend == "anthropic" and env.get("ANTHROPIC_MODEL", "").strip():
        return f"ANTHROPIC_MODEL, {origin('ANTHROPIC_MODEL')}"
    if split_provider(settings_model)[1]:
        return "\"model\" in the settings"
    if env.get("MINI_CLAUDE_MODEL", "").strip():
        return f"MINI_CLAUDE_MODEL, {origin('MINI_CLAUDE_MODEL')}"
    return "the default"


def _origin(name: str, scene: Scene, model_env: Mapping[str, str]) -> str:
    """Where a variable of the model client's environment came from: a settings file's `env` (the last that
    sets it, as they merge), the environment, or the project's `.env`."""
    if name in scene.effective.env:
        files = [(USER_SETTINGS_DISPLAY, scene.effective.user), (PROJECT_SETTINGS_DISPLAY, scene.effective.project),
                 (LOCAL_SETTINGS_DISPLAY, scene.effective.local),
                 (scene.effective.flag_display, scene.effective.flag)]
        setting = [display for display, raw in files if isinstance(raw.get("env"), dict) and name in raw["env"]]
        return f"env in {setting[-1]}" if setting else "settings env"
    if name in scene.env:
        return "environment"
    if name in model_env:
        return ".env"
    return "unset"


def _dotenv_row(section: Section, scene: Scene, ignored: tuple[str, ...]) -> None:
    if not scene.dotenv:
        return
    names = sorted(scene.dotenv)
    row = section.add(".env", f"{scene.cwd / '.env'}: {len(names)} variable{'s' * (len(names) != 1)}",
                      variables=names, ignored=list(ignored))
    if ignored:
        row.note(f"not used until the folder is trusted: {', '.join(ignored)} (mini-claude trust)")
