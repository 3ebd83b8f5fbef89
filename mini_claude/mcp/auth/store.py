"""`TokenStore`: the OAuth state kept between runs, in `mcp-oauth.json` under the user's state directory.

Layout (never printed; the file is created 0600 and replaced atomically, so a crash never leaves half a file):

    {"version": 1,
     "servers": {"<name> <url>": {"issuer": "<current AS issuer>",
                                  "bound_issuer": "<the AS configured client credentials are bound to>",
                                  "clients": {"<issuer>": {client_id, client_secret, method, ...}},
                                  "tokens":  {"<issuer>": {access_token, token_type, expires_at, ...}}}}}

Tokens and client registrations are kept per server (name and URL: a changed URL starts afresh) and per
authorization-server issuer (credentials of one AS are never shown to another). `TokenStore(None)` keeps everything
in memory only (tests, the conformance client).

Every read-modify-write holds an exclusive `fcntl` lock on `<file>.lock`, so two mini-claude processes refreshing
or logging in at the same time never lose each other's update; reads need no lock (the file is replaced whole).

Bounded by what the user logged in to (one entry per server name and URL; `mcp logout NAME` drops a server's);
a file over `MAX_STORE_BYTES`, corrupt, or written by a newer version is set aside as `mcp-oauth.json.bad` with a
warning and the store starts empty (the daily state sweep removes set-aside files after 30 days).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mini_claude.paths import state_dir
from mini_claude.statefile import read_state

__all__ = ["STORE_FILE", "TokenStore"]

log = logging.getLogger(__name__)

STORE_FILE = "mcp-oauth.json"
_VERSION = 1
# a login's tokens and client registration are a few KB: this is thousands of them; a bigger file is set aside
MAX_STORE_BYTES = 8 * 1024 * 1024


class TokenStore:
    """Read-modify-write access to the store file. Every method re-reads the file, so two mini-claude processes
    see each other's logins; a missing or unreadable file reads as empty."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._memory: dict[str, Any] = {"version": _VERSION, "servers": {}}
        self._writes = 0

    @classmethod
    def default(cls, env: Mapping[str, str] | None = None) -> TokenStore:
        return cls(state_dir(env) / STORE_FILE)

    @staticmethod
    def server_key(name: str, url: str) -> str:
        return f"{name} {url}"

    # ---- whole entries -------------------------------------------------------------------------------------------

    def entry(self, key: str) -> dict[str, Any]:
        """A copy of one server's entry ({} when there is none)."""
        entry = self._load()["servers"].get(key)
        return json.loads(json.dumps(entry)) if isinstance(entry, dict) else {}

    def forget(self, key: str) -> bool:
        """Drop everything kept for one server. True if there was something."""
        with self._locked():
            data = self._load()
            if key not in data["servers"]:
                return False
            del data["servers"][key]
            self._save(data)
            return True

    def forget_server(self, name: str) -> bool:
        """Drop everything kept for every URL a server of this name had."""
        with self._locked():
            data = self._load()
            keys = [k for k in data["servers"] if k.split(" ", 1)[0] == name]
            for k in keys:
                del data["servers"][k]
            if keys:
                self._save(data)
            return bool(keys)

    # ---- single fields ---------------------------------------------------------------------------------------

    def field(self, key: str, name: str) -> Any:
        return self.entry(key).get(name)

    def set_field_once(self, key: str, name: str, value: str) -> str:
        """Set a top-level field of one server's entry unless it is already set; the value it has afterwards
        (checked and set under the lock, so two processes cannot both set different values)."""
        with self._locked():
            data = self._load()
            entry = data["servers"].setdefault(key, {})
            current = entry.get(name)
            if isinstance(current, str):
                return current
            entry[name] = value
            self._save(data)
            return value

    # ---- per issuer ----------------------------------------------------------------------------------------------

    def get(self, key: str, section: str, issuer: str) -> dict[str, Any] | None:
        value = self.entry(key).get(section, {}).get(issuer)
        return value if isinstance(value, dict) else None

    def put(self, key: str, section: str, issuer: str, value: dict[str, Any] | None) -> None:
        """Set (or, with None, delete) `section` ("clients" / "tokens") for `issuer`; also records the issuer."""
        with self._locked():
            data = self._load()
            entry = data["servers"].setdefault(key, {})
            bucket = entry.setdefault(section, {})
            if value is None:
                bucket.pop(issuer, None)
            else:
                bucket[issuer] = value
                entry["issuer"] = issuer
            self._save(data)

    # ---- the file ------------------------------------------------------------------------------------------------

    @property
    def identity(self) -> tuple[str, str]:
        """What tells two stores apart: the file's absolute path, or this object for an in-memory store."""
        if self.path is None:
            return ("memory", str(id(self)))
        return ("file", os.path.abspath(self.path))

    def stamp(self) -> tuple[int, ...]:
        """Changes whenever the stored data may have changed (a cheap check before re-reading)."""
        if self.path is None:
            return (self._writes,)
        try:
            st = self.path.stat()
        except OSError:
            return ()
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self.path is None:
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held for a file read and write: milliseconds
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _load(self) -> dict[str, Any]:
        if self.path is None:
            return self._memory
        # a corrupt, oversized or newer store is set aside (`<name>.bad`, never lost) with a one-line warning
        data = read_state(self.path, what="OAuth store", max_bytes=MAX_STORE_BYTES, version=_VERSION,
                          afresh="starting with no stored OAuth logins")
        if data is None or not isinstance(data.get("servers"), dict):
            return {"version": _VERSION, "servers": {}}
        return data

    def _save(self, data: dict[str, Any]) -> None:
        if self.path is None:
            self._memory = data
            self._writes += 1
            return
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # mkstemp creates the file 0600: the secrets are never readable by others, not even for an instant
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
