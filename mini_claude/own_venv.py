"""The agent's own Python environment kept out of the user's world.

When mini-claude runs from a virtualenv (its set-up's `.venv`, or the one `uv tool install` / `pipx install` made),
the commands it runs for the user — the model's shell commands, hooks, MCP servers — must find the user's
`python3`, `pip` and `pytest`, not ours: `without_own_virtualenv` takes our virtualenv's `bin` folder off `PATH`, and
`VIRTUAL_ENV` (with `VIRTUAL_ENV_PROMPT`) when it names ours — the README once said to activate it. A virtualenv the
user activated for their own project is another folder and stays as it is. The CLI's sessions start from this
environment (session/start.py `build_env`); the Python API's keep the program's own, whose interpreter is the user's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["without_own_virtualenv"]


def without_own_virtualenv(env: Mapping[str, str], *, prefix: str = sys.prefix,
                           base_prefix: str = sys.base_prefix) -> dict[str, str]:
    """`env` without the virtualenv at `prefix` (the running interpreter's), when it is one."""
    cleaned = dict(env)
    if os.path.realpath(prefix) == os.path.realpath(base_prefix):
        return cleaned  # not a virtualenv: nothing of ours to take away
    own = Path(prefix).resolve()
    if cleaned.get("VIRTUAL_ENV") and _same(cleaned["VIRTUAL_ENV"], own):
        cleaned.pop("VIRTUAL_ENV")
        cleaned.pop("VIRTUAL_ENV_PROMPT", None)
    path = cleaned.get("PATH")
    if path:
        kept = [entry for entry in path.split(os.pathsep) if not (entry and _same(entry, own / "bin"))]
        cleaned["PATH"] = os.pathsep.join(kept)
    return cleaned


def _same(raw: str, place: Path) -> bool:
    try:
        return Path(raw).expanduser().resolve() == place
    except (OSError, RuntimeError):
        return False
