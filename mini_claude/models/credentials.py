"""The model client's credentials: which key or token goes in which header, where it came from, running the
`apiKeyHelper`, and naming what to fix when the API refuses them.

What an Anthropic request carries, as Claude Code 2.1.197 sends it (measured against the mock model):

* `ANTHROPIC_AUTH_TOKEN` set: `Authorization: Bearer TOKEN` (plus `x-api-key` when `ANTHROPIC_API_KEY` is set too);
  no helper is run.
* else an `apiKeyHelper`: its output as `Authorization: Bearer KEY` and as `x-api-key` (unless `ANTHROPIC_API_KEY`
  is set, which stays the `x-api-key`).
* else `ANTHROPIC_API_KEY` as `x-api-key`.

The helper runs with `/bin/sh -c` in the session's folder and environment, in its own process group, bounded by
`MINI_CLAUDE_API_KEY_HELPER_TIMEOUT_MS` (default 60 s; on timeout the group is killed and the child reaped); its
trimmed stdout is the key. The key is cached for `CLAUDE_CODE_API_KEY_HELPER_TTL_MS` (default 5 minutes, as
Claude Code), then the helper runs again before the next request; after a 401 it runs once more (`refresh`). A key
or token is never logged, never put in a message (`scrub` removes it from an API's error text), and a failing
helper's message names the file that set it, how it failed and the tail of its stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.errors import ModelError
from mini_claude.secrets import SECRETS

__all__ = [
    "HELPER_TIMEOUT_ENV",
    "HELPER_TTL_ENV",
    "AnthropicCredentials",
    "ApiKeyHelper",
    "OpenAICredentials",
    "helper_timeout_s",
    "helper_ttl_s",
    "refusal_hint",
    "scrub",
]

log = logging.getLogger(__name__)

HELPER_TTL_ENV = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"
HELPER_TIMEOUT_ENV = "MINI_CLAUDE_API_KEY_HELPER_TIMEOUT_MS"
DEFAULT_HELPER_TTL_S = 300.0  # Claude Code's default
# Claude Code waits up to 10 minutes; a minute is enough for a vault or SSO lookup and keeps a hung helper short.
DEFAULT_HELPER_TIMEOUT_S = 60.0
MAX_HELPER_OUTPUT_BYTES = 64 * 1024
STDERR_TAIL_CHARS = 200
KILL_WAIT_S = 5.0  # after SIGKILL of the group, for the child to be reaped
_POLL_S = 0.01


def _ms_setting(env: Mapping[str, str], name: str, default_s: float) -> float:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default_s
    try:
        value = int(raw)
    except ValueError:
        log.warning("ignoring %s=%r: not a whole number of milliseconds", name, raw)
        return default_s
    if value < 0:
        log.warning("ignoring %s=%r: negative", name, raw)
        return default_s
    return value / 1000


def helper_ttl_s(env: Mapping[str, str]) -> float:
    """How long a helper's key is used before the helper runs again (`CLAUDE_CODE_API_KEY_HELPER_TTL_MS`)."""
    return _ms_setting(env, HELPER_TTL_ENV, DEFAULT_HELPER_TTL_S)


def helper_timeout_s(env: Mapping[str, str]) -> float:
    """How long one helper run may take (`MINI_CLAUDE_API_KEY_HELPER_TIMEOUT_MS`)."""
    return _ms_setting(env, HELPER_TIMEOUT_ENV, DEFAULT_HELPER_TIMEOUT_S) or DEFAULT_HELPER_TIMEOUT_S


class ApiKeyHelper:
    """The `apiKeyHelper` command of a settings file: `key()` runs it when there is no fresh key, `invalidate()`
    makes the next `key()` run it again. Concurrent callers share one run."""

    def __init__(self, command: str, *, source: str, cwd: Path, env: Mapping[str, str], ttl_s: float,
                 timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.command = command
        self.source = source  # the settings file it came from, as shown to the user
        self.cwd = cwd
        self.env = dict(env)
        self.ttl_s = ttl_s
        self.timeout_s = timeout_s
        self.clock = clock
        self.runs = 0
        self._key: str | None = None
        self._at = 0.0
        self._lock = asyncio.Lock()

    def invalidate(self) -> None:
        self._key = None

    def cached(self) -> str | None:
        """The key last printed, if any (to scrub it from messages; never shown)."""
        return self._key

    async def key(self) -> str:
        async with self._lock:
            if self._key is not None and self.clock() - self._at < self.ttl_s:
                return self._key
            self._key = await self._run()
            self._at = self.clock()
            return self._key

    async def _run(self) -> str:
        self.runs += 1
        where = f"apiKeyHelper (in {self.source})"
        try:
            proc = await asyncio.create_subprocess_exec(
                "/bin/sh", "-c", self.command, cwd=self.cwd if self.cwd.is_dir() else None, env=self.env,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                start_new_session=True)
        except OSError as exc:
            raise ModelError(f"{where} could not start: {exc.strerror or exc}") from None
        assert proc.stdout is not None and proc.stderr is not None
        reads = [asyncio.ensure_future(_read_capped(proc.stdout)), asyncio.ensure_future(_read_capped(proc.stderr))]
        timed_out = False
        try:
            done = await _exited(proc, self.timeout_s)
            if done:
                await asyncio.wait(reads, timeout=1.0)  # what it wrote; a grandchild holding a pipe is cut off
            timed_out = not done
        finally:
            _kill_group(proc.pid)
            await _exited(proc, KILL_WAIT_S)
            for task in reads:
                task.cancel()
            await asyncio.gather(*reads, return_exceptions=True)
        out = reads[0].result() if reads[0].done() and not reads[0].cancelled() else b""
        err = reads[1].result() if reads[1].done() and not reads[1].cancelled() else b""
        if timed_out:
            raise ModelError(f"{where} timed out after {self.timeout_s:g}s (its process group was stopped); "
                             f"{HELPER_TIMEOUT_ENV} sets the limit")
        tail = _tail(err)
        if proc.returncode != 0:
            raise ModelError(f"{where} failed: exit code {proc.returncode}" + (f": {tail}" if tail else ""))
        key = out.decode("utf-8", "replace").strip()
        if not key:
            raise ModelError(f"{where} printed no key")
        SECRETS.add("apiKeyHelper", key)  # masked wherever a tool result or the terminal would show it
        return key


async def _read_capped(stream: asyncio.StreamReader) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(64 * 1024):
        if len(kept) < MAX_HELPER_OUTPUT_BYTES:
            kept += chunk[: MAX_HELPER_OUTPUT_BYTES - len(kept)]
    return bytes(kept)


async def _exited(proc: asyncio.subprocess.Process, timeout_s: float) -> bool:
    """Wait for the direct child's exit (not its pipes, which a grandchild may hold); False on timeout."""
    deadline = time.monotonic() + timeout_s
    while proc.returncode is None:
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL_S)
    return True


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _tail(data: bytes) -> str:
    text = " ".join(data.decode("utf-8", "replace").split())
    return text if len(text) <= STDERR_TAIL_CHARS else "…" + text[-STDERR_TAIL_CHARS:]


@dataclass
class AnthropicCredentials:
    """The Anthropic client's credentials, resolved per request (`headers`), with what a refusal should name."""

    api_key: str = field(default="", repr=False)  # never in a repr: a traceback or log line must not carry it
    auth_token: str = field(default="", repr=False)
    helper: ApiKeyHelper | None = None

    def __post_init__(self) -> None:
        SECRETS.add("ANTHROPIC_API_KEY", self.api_key)  # wherever they came from (the environment, .env, settings)
        SECRETS.add("ANTHROPIC_AUTH_TOKEN", self.auth_token)
        if self.auth_token:
            self.helper = None  # Claude Code sends the token and never runs the helper
        if not (self.api_key or self.auth_token or self.helper):
            raise ModelError("no Anthropic credentials")

    async def headers(self) -> dict[str, str]:
        """`x-api-key` and/or `Authorization` for the next request (may run the helper)."""
        if self.auth_token:
            headers = {"authorization": f"Bearer {self.auth_token}"}
            if self.api_key:
                headers["x-api-key"] = self.api_key
            return headers
        if self.helper is not None:
            key = await self.helper.key()
            return {"x-api-key": self.api_key or key, "authorization": f"Bearer {key}"}
        return {"x-api-key": self.api_key}

    async def refresh(self) -> bool:
        """After a 401: whether new credentials may help (a helper, run again on the next request)."""
        if self.helper is None:
            return False
        self.helper.invalidate()
        return True

    def names(self) -> str:
        """What the user would fix: the variables and helper in use."""
        if self.auth_token:
            return "ANTHROPIC_AUTH_TOKEN" + (" and ANTHROPIC_API_KEY" if self.api_key else "")
        if self.helper is not None:
            helper = f"the apiKeyHelper in {self.helper.source}"
            return f"ANTHROPIC_API_KEY and {helper}" if self.api_key else helper
        return "ANTHROPIC_API_KEY"

    def secrets(self) -> list[str]:
        cached = self.helper.cached() if self.helper is not None else None
        return [s for s in (self.api_key, self.auth_token, cached) if s]

    def refusal(self, status: int, refreshed: bool) -> str:
        return refusal_hint(status, self.names(), again=refreshed)


@dataclass
class OpenAICredentials:
    """An OpenAI-compatible client's key: `OPENAI_API_KEY`, or none for a local server (`keyless`)."""

    api_key: str = field(repr=False)
    keyless: bool = False

    def __post_init__(self) -> None:
        SECRETS.add("OPENAI_API_KEY", self.api_key)

    async def refresh(self) -> bool:
        return False

    def refusal(self, status: int, refreshed: bool) -> str:
        if self.keyless:
            return (" — this server wants credentials and OPENAI_API_KEY is not set: set it" if status == 401
                    else refusal_hint(status, "OPENAI_BASE_URL's server (no OPENAI_API_KEY)"))
        return refusal_hint(status, "OPENAI_API_KEY")

    def secrets(self) -> list[str]:
        return [] if self.keyless else [self.api_key]


def refusal_hint(status: int, names: str, *, again: bool = False) -> str:
    """The words after a 401/403: which credential to fix, never its value."""
    if status == 401:
        rerun = ", also after running the helper again" if again else ""
        return f" — the credentials from {names} were refused{rerun}: check or replace them"
    return f" — the credentials from {names} are not allowed to do this: check their permissions"


def scrub(text: str, secrets: list[str]) -> str:
    """`text` with every secret (of at least 4 characters) replaced by `***`."""
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    return text

