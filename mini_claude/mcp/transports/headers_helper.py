"""`HeadersHelper`: run a server's `headersHelper` command and take the JSON object of headers it prints.

Claude Code's semantics: the command runs through the shell with `CLAUDE_CODE_MCP_SERVER_NAME` and
`CLAUDE_CODE_MCP_SERVER_URL` set, must exit 0 within `HEADERS_HELPER_TIMEOUT_S` and print one JSON object whose
values are strings; those headers override the static `headers`. It runs in its own process group, killed as a
whole on timeout or cancellation. Errors name the config key and what is wrong, never a header value nor the
command's stderr (which may echo secrets; it is logged at debug level only).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import Mapping

from mini_claude.errors import TransportError
from mini_claude.jsonfile import json_type
from mini_claude.secrets import register_header_values

__all__ = ["HEADERS_HELPER_TIMEOUT_S", "HeadersHelper", "header_problem"]

log = logging.getLogger(__name__)

HEADERS_HELPER_TIMEOUT_S = 10.0
MAX_OUTPUT_BYTES = 64 * 1024  # a header object is small; more is a broken helper
REAP_TIMEOUT_S = 2.0
STDERR_EXCERPT_CHARS = 200


class HeadersHelper:
    """One server's `headersHelper` command. `await run()` returns the headers it printed.

    Example:

        helper = HeadersHelper("print-token --json", server="github", url="https://api.example/mcp", env=env)
        headers = await helper.run()   # {"Authorization": "Bearer ..."}
    """

    def __init__(self, command: str, *, server: str, url: str, env: Mapping[str, str] | None = None,
                 timeout_s: float = HEADERS_HELPER_TIMEOUT_S) -> None:
        self.command = command
        self.server = server
        self.url = url
        self.timeout_s = timeout_s
        self._env = dict(os.environ if env is None else env)
        self._env["CLAUDE_CODE_MCP_SERVER_NAME"] = server
        self._env["CLAUDE_CODE_MCP_SERVER_URL"] = url

    @property
    def key(self) -> str:
        return f"mcpServers.{self.server}.headersHelper"

    def _error(self, what: str) -> TransportError:
        return TransportError(f"{self.key}: {what}", server=self.server)

    async def run(self) -> dict[str, str]:
        """Run the command once. Raises TransportError (naming the key) when it fails or prints bad output."""
        try:
            proc = await asyncio.create_subprocess_shell(
                self.command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=self._env, start_new_session=True)
        except OSError as exc:
            raise self._error(f"cannot run the command: {exc.strerror or exc}") from None
        finished = False
        try:
            async with asyncio.timeout(self.timeout_s):
                stdout, stderr = await proc.communicate()
            finished = True
        except TimeoutError:
            raise self._error(f"no answer within {self.timeout_s:g}s (killed)") from None
        finally:
            if not finished:
                # timed out or cancelled: the whole group goes, even when the shell itself has exited (a
                # background child may still hold stdout open, which is why communicate() did not return)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                with contextlib.suppress(TimeoutError, ProcessLookupError):
                    async with asyncio.timeout(REAP_TIMEOUT_S):
                        await proc.wait()
        if proc.returncode != 0:
            # stderr may echo the secrets the helper handles: it goes to the debug log (capped), never into the
            # error, which reaches the server's status, `mcp list --json` and the model
            tail = " ".join(stderr.decode("utf-8", "replace").split())[-STDERR_EXCERPT_CHARS:]
            if tail:
                log.debug("%s: headersHelper stderr: %s", self.server, tail)
            raise self._error(f"the command exited with code {proc.returncode}"
                              + ("; its stderr is in the debug log" if tail else ""))
        return self._parse(stdout)

    def _parse(self, stdout: bytes) -> dict[str, str]:
        if len(stdout) > MAX_OUTPUT_BYTES:
            raise self._error(f"output is larger than {MAX_OUTPUT_BYTES // 1024} KiB; expected a JSON object")
        try:
            data = json.loads(stdout.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            # never quote the output: it holds the secrets
            raise self._error("output is not JSON; expected an object of string headers") from None
        if not isinstance(data, dict):
            raise self._error(f"output must be a JSON object of string headers, got {json_type(data)}")
        headers: dict[str, str] = {}
        for name, value in data.items():
            if not isinstance(value, str):
                raise self._error(f"header {name!r} must be a string, got {json_type(value)}")
            problem = header_problem(name, value)
            if problem is not None:
                raise self._error(problem)
            headers[name] = value
        register_header_values(headers, f"mcp:{self.server}")  # its secrets masked wherever shown
        log.debug("%s: headersHelper gave %d header(s): %s", self.server, len(headers), ", ".join(headers))
        return headers


_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def header_problem(name: str, value: str) -> str | None:
    """Why `name: value` cannot go on the wire (httpx would raise, or it would split the request), else None.
    The answer names the header, never its value."""
    if not name or not all(c in _TOKEN_CHARS for c in name):
        return f"{name!r} is not a valid header name"
    if "\r" in value or "\n" in value or "\0" in value:
        return f"the value of header {name!r} holds a line break or NUL"
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return f"the value of header {name!r} holds a character outside Latin-1"
    return None
