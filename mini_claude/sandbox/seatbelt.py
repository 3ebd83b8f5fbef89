"""The sandbox policy as a macOS Seatbelt profile (run as `sandbox-exec -p PROFILE /bin/bash -c COMMAND`).

The same policy as bwrap.py: reads everywhere but the secret places; writes only in the writable folders and the
private temporary folder, never to the protected paths (existing or not: Seatbelt denies by path, so no placeholder
is needed); no network but the loopback proxy port when one runs (macOS has no network namespace: the proxy
listens on 127.0.0.1 and the command is pointed at it). Later rules win in Seatbelt, so the denials come last.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mini_claude.sandbox.policy import SECRET_HOME_PATHS, SandboxPolicy

__all__ = ["SANDBOX_EXEC", "seatbelt_argv", "seatbelt_profile"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def _quote(path: Path | str) -> str:
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def seatbelt_profile(policy: SandboxPolicy, *, proxy_port: int | None = None) -> str:
    """The profile text for `policy`; `proxy_port`: the loopback port of the agent's proxy, if any."""
    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec)",
        "(allow process-fork)",
        "(allow signal (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow mach-lookup)",
        "(allow ipc-posix-shm)",
        "(allow file-read*)",
        "(allow file-write-data (literal \"/dev/null\") (literal \"/dev/zero\") (regex #\"^/dev/tty\"))",
        "(allow file-ioctl (regex #\"^/dev/tty\"))",
    ]
    writable = [policy.tmp_dir, *policy.writable]
    lines.append("(allow file-write* " + " ".join(f"(subpath {_quote(p)})" for p in writable) + ")")
    protected = policy.protected()
    if protected:
        lines.append("(deny file-write* " + " ".join(
            f"(subpath {_quote(item.path)})" if item.is_dir or item.path.is_dir() else f"(literal {_quote(item.path)})"
            for item in protected) + ")")
    secrets = [policy.home / rel for rel in SECRET_HOME_PATHS]
    if policy.state_dir is not None:
        secrets.append(policy.state_dir)
    lines.append("(deny file-read* file-write* " + " ".join(f"(subpath {_quote(p)})" for p in secrets) + ")")
    if proxy_port is not None:
        lines.append(f'(allow network-outbound (remote tcp "localhost:{proxy_port}"))')
    return "\n".join(lines) + "\n"


def seatbelt_argv(policy: SandboxPolicy, command: Sequence[str], *, proxy_port: int | None = None) -> list[str]:
    """`sandbox-exec -p PROFILE` then `command`."""
    return [SANDBOX_EXEC, "-p", seatbelt_profile(policy, proxy_port=proxy_port), *command]

