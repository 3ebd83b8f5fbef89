"""Secrets out of commands and out of what the model and the screen see (issue 27, "Secrets stay out of commands").

Two halves, both below every other layer (this module imports nothing of mini-claude):

* **Which variables a command gets** (`command_env`). The agent's own credentials (`AGENT_CREDENTIAL_VARS`: model
  keys and auth tokens) never reach a command, whatever says so. Other variables whose *names* look like secrets
  (`looks_secret`) are left out of shell commands too, as Codex does by default, unless the user's own settings pass
  them through (`shellEnvironment.passThrough`, names or `*` globs) or a settings file's `env` set them (a value
  written into a settings file for the session's commands is the user's choice, not their environment leaking).

  Hooks, stdio servers and headersHelpers get everything but the agent's credentials (`without_credentials`).

* **Masking known secret values** (`SecretValues`, one per process: `SECRETS`). Whatever the session knows to be
  secret — the values of the secret-looking variables (passed through or not), the agent's credentials, an
  apiKeyHelper's key, MCP servers' OAuth tokens and `Authorization`-like header values — is registered once with a
  label, and `mask(text)` replaces every occurrence of a value (at least `MIN_SECRET_CHARS` long) with
  `[secret LABEL]`. It runs over every tool result and every line the terminal prints, so it is one compiled
  alternation, rebuilt only when a value is added.

What a name looks like: the name is split into words at `_`, `-` and `.` (case ignored); it looks secret when a word
is, or ends with, KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE or CREDENTIAL (or their plural), or is exactly
PAT, PASS, AUTH or COOKIE, or is PWD after the first word (`MYSQL_PWD`, never `PWD` or `OLDPWD`). Not secret, so
everyday tools keep working: a name whose last word names a place (FILE, PATH, DIR, SOCK, SOCKET: `SSH_AUTH_SOCK`,
`AWS_SHARED_CREDENTIALS_FILE`, `PASSWORD_STORE_DIR`), `GOOGLE_APPLICATION_CREDENTIALS` (a file's path), and words
that only start with a stem (`TOKENIZERS_PARALLELISM`, `KEYTIMEOUT`, `XKB_KEYMAP`, `GNOME_KEYRING_CONTROL`,
`GIT_AUTHOR_NAME`, `XAUTHORITY`, `GIT_ASKPASS`).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AGENT_CREDENTIAL_VARS",
    "DEFAULT_POLICY",
    "MIN_SECRET_CHARS",
    "SECRETS",
    "CommandEnv",
    "EnvPolicy",
    "SecretValues",
    "command_env",
    "looks_secret",
    "mask",
    "mask_blocks",
    "protect_own_memory",
    "register_credentials",
    "register_header_values",
    "scrub_own_environ",
    "without_credentials",
]

# The agent's own credentials: no shell command, hook, stdio server or headersHelper ever gets them, and a project
# config's `${VAR}` cannot name them (they would hand the user's model key to a program the repository chose).
AGENT_CREDENTIAL_VARS = frozenset({
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "MINI_CLAUDE_API_KEY",
})
# Shorter values are not masked: they would turn up in ordinary text ("true", a port number, a short word).
MIN_SECRET_CHARS = 8

_ENDING_STEMS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL")
_WHOLE_WORDS = frozenset({"PAT", "PASS", "AUTH", "COOKIE", "COOKIES"})
_PLACE_WORDS = frozenset({"FILE", "PATH", "DIR", "SOCK", "SOCKET"})
_NOT_SECRET = frozenset({"GOOGLE_APPLICATION_CREDENTIALS"})
_WORD_SPLIT = re.compile(r"[_.\-]+")
# a label is shown inside JSON strings and on the terminal: nothing there may need escaping or act on a terminal
_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9_.:@/ -]")


def looks_secret(name: str) -> bool:
    """Does a variable's (or header's) name look like it holds a secret? The rule is in the module docstring."""
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    words = [w for w in _WORD_SPLIT.split(upper) if w]
    if not words or words[-1] in _PLACE_WORDS:
        return False
    for index, word in enumerate(words):
        stem = word[:-1] if word.endswith("S") and not word.endswith("SS") else word
        if stem.endswith(_ENDING_STEMS) or word in _WHOLE_WORDS or (word == "PWD" and index > 0):
            return True
    return False


# --------------------------------------------------------------------------------------------------------------
# Masking known values


@dataclass
class SecretValues:
    """Known secret values, each with the label its mask shows. `mask` is safe to call from any thread."""

    _labels: dict[str, str] = field(default_factory=dict)
    _pattern: re.Pattern[str] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, label: str, value: str | None) -> None:
        """Mask `value` from now on as `[secret LABEL]` (values shorter than MIN_SECRET_CHARS are ignored; the
        first label a value was added with stays)."""
        if not value or len(value.strip()) < MIN_SECRET_CHARS:
            return
        value = value.strip()
        mark = f"[secret {_LABEL_UNSAFE.sub('_', label)[:80]}]"
        # its JSON-escaped spellings too: a result serialised before masking (structuredContent) holds those
        escaped = {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]} - {value}
        with self._lock:
            if value in self._labels:
                return
            self._labels[value] = mark
            for form in escaped:
                self._labels.setdefault(form, mark)
            self._pattern = None

    def __len__(self) -> int:
        return len(self._labels)

    def mask(self, text: str) -> str:
        """`text` with every known value replaced by its `[secret LABEL]`."""
        if not self._labels or not text:
            return text
        pattern = self._pattern
        if pattern is None:
            with self._lock:
                # longest first: a value that contains another is masked whole
                values = sorted(self._labels, key=len, reverse=True)
                pattern = self._pattern = re.compile("|".join(map(re.escape, values)))
        labels = self._labels
        return pattern.sub(lambda match: labels[match.group()], text)

    def clear(self) -> None:
        """Forget every value (tests)."""
        with self._lock:
            self._labels.clear()
            self._pattern = None


SECRETS = SecretValues()


def mask(text: str) -> str:
    """`SECRETS.mask(text)`: the process's known secret values masked."""
    return SECRETS.mask(text)


def mask_blocks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Content blocks (a tool result's, MCP's included) with every string inside masked; binary `data` (an image's
    base64) is left as it is. Returns the same list when nothing changed."""
    if not len(SECRETS):
        return blocks
    masked: list[dict[str, Any]] = [_masked(block) for block in blocks]
    return blocks if all(a is b for a, b in zip(masked, blocks, strict=True)) else masked


def _masked(value: Any, key: str = "") -> Any:
    if isinstance(value, str):
        return value if key == "data" else mask(value)
    if isinstance(value, dict):
        items = {k: _masked(v, k if isinstance(k, str) else "") for k, v in value.items()}
        return value if all(items[k] is value[k] for k in value) else items
    if isinstance(value, list):
        items_list = [_masked(v) for v in value]
        return value if all(a is b for a, b in zip(items_list, value, strict=True)) else items_list
    return value


def register_header_values(headers: Mapping[str, str], owner: str) -> None:
    """Register the secret values among an HTTP server's headers: `Authorization`/`Proxy-Authorization` (the whole
    value and the credential after its scheme) and every header whose name looks secret (`X-Api-Key`)."""
    for name, value in headers.items():
        lower = name.lower()
        if lower in ("authorization", "proxy-authorization"):
            SECRETS.add(f"{owner} {name}", value)
            SECRETS.add(f"{owner} {name}", value.partition(" ")[2])
        elif looks_secret(name):
            SECRETS.add(f"{owner} {name}", value)


# --------------------------------------------------------------------------------------------------------------
# The environment of a command


@dataclass(frozen=True)
class EnvPolicy:
    """What passes besides the ordinary variables: `pass_through` (names or `*` globs from the user's own
    settings' `shellEnvironment.passThrough`) and `chosen` (names a settings file's `env` set)."""

    pass_through: tuple[str, ...] = ()
    chosen: frozenset[str] = frozenset()

    def passes(self, name: str) -> bool:
        return name in self.chosen or any(fnmatch.fnmatchcase(name, pattern) for pattern in self.pass_through)


@dataclass(frozen=True)
class CommandEnv:
    """A command's environment and the names left out of it (sorted; never their values)."""

    env: dict[str, str]
    left_out: tuple[str, ...]


# nothing secret-looking passes: the policy of a Bash tool made without the session's settings
DEFAULT_POLICY = EnvPolicy()


def command_env(base: Mapping[str, str], policy: EnvPolicy = DEFAULT_POLICY) -> CommandEnv:
    """`base` without the agent's credentials and, unless `policy` passes them, the secret-looking variables. The
    value of each of them, passed or not, is registered for masking under its variable's name."""
    env: dict[str, str] = {}
    left_out: list[str] = []
    for name, value in base.items():
        credential = name in AGENT_CREDENTIAL_VARS
        if credential or looks_secret(name):
            SECRETS.add(name, value)  # passed or not, its value is still a secret on the screen
            if credential or not policy.passes(name):
                left_out.append(name)
                continue
        env[name] = value
    return CommandEnv(env, tuple(sorted(left_out)))


def without_credentials(base: Mapping[str, str], extra: Iterable[tuple[str, str]] = ()) -> dict[str, str]:
    """`base` without the agent's credentials (what hooks, stdio servers and headersHelpers get), plus `extra`."""
    env = {name: value for name, value in base.items() if name not in AGENT_CREDENTIAL_VARS}
    env.update(extra)
    return env


def register_credentials(env: Mapping[str, str], names: Collection[str] = AGENT_CREDENTIAL_VARS) -> None:
    """Register the values of the agent's credentials found in `env` for masking."""
    for name in names:
        SECRETS.add(name, env.get(name))


def scrub_own_environ() -> list[str]:
    """Overwrite, in this process's initial environment block, the values of the agent's credentials and of every
    secret-looking variable, so that `/proc/<agent pid>/environ` (which any process of the same user may read, a
    command the model runs included) no longer shows them. os.environ keeps them, and so does the C library's
    environment (each is set again first, which moves it to memory of its own), so the model client, hooks and
    servers get what they got before. Linux only; anything unexpected leaves the block as it was. Returns the names
    scrubbed. (The environment of the shell that started the agent is that shell's: only the OS sandbox, with a
    /proc of its own, hides it.)"""
    if not sys.platform.startswith("linux"):
        return []
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rindex(b")") + 2:].split()
        start, end = int(fields[47]), int(fields[48])  # fields 50 and 51: env_start, env_end
        with open("/proc/self/environ", "rb") as f:
            block = f.read()
    except (OSError, ValueError, IndexError):
        return []
    if not start or len(block) > end - start:
        return []
    scrubbed = []
    offset = 0
    for entry in block.split(b"\0"):
        name, eq, value = entry.partition(b"=")
        text = name.decode("utf-8", "replace")
        if eq and value and (text in AGENT_CREDENTIAL_VARS or looks_secret(text)) and text in os.environ:
            import ctypes  # only when there is something to blank

            os.putenv(text, os.environ[text])  # the C environment's entry moves off the block before it is blanked
            where = start + offset + len(name) + 1
            ctypes.memmove(where, b"*" * len(value), len(value))
            scrubbed.append(text)
        offset += len(entry) + 1
    return scrubbed


_PR_SET_DUMPABLE = 4


def protect_own_memory() -> bool:
    """Make this process non-dumpable (Linux `prctl(PR_SET_DUMPABLE, 0)`), so another process of the same user —
    a command the model runs, a hook, a stdio server — can no longer read `/proc/<agent pid>/mem` or `environ`,
    where the model key lives in the heap whatever `scrub_own_environ` blanked. Root (CAP_SYS_PTRACE) still can;
    so can a profiler started with sudo. `MINI_CLAUDE_DUMPABLE=1` leaves the process as it was (to attach py-spy
    as the same user). Returns whether the flag was set."""
    if not sys.platform.startswith("linux") or os.environ.get("MINI_CLAUDE_DUMPABLE") == "1":
        return False
    import ctypes

    try:
        return bool(ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
