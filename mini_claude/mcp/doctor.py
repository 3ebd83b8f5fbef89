"""`mini-claude mcp doctor`: what a user needs to fix one MCP server, found by trying it.

`diagnose(cfg, …)` checks the command (found on the server's PATH?), then connects with the host's capabilities
(`setup`, the session's `McpHost.setup`), lists the tools, pings, optionally calls one tool, and closes, watching
everything on the way: the time to the first reply and to ready, the protocol era and version, the capabilities,
the non-JSON lines on stdout and the JSON-RPC oddities the client logged, the stderr tail, the tools the tool
reader withheld and the schemas the model API would reject, the names that had to be renamed or hashed
(`apply_names`, across every diagnosed server), the definitions' tokens, how the server ended (by itself; needing
SIGKILL). Each finding that needs the user is a `Problem`: a stable `code`, the `cause` and the `fix`, one line
each. A server held back (needs approval, denied, disabled) is never started: its problem says why.

Nothing here prints: `mini_claude.cli.mcp.doctor` shows a `Diagnosis` (text, or `--json` via `to_json`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from mini_claude.errors import (
    AuthRequiredError,
    HttpStatusError,
    JsonRpcError,
    McpError,
    McpTimeoutError,
    ProtocolError,
    ServerExitedError,
    SpawnError,
    TransportError,
)
from mini_claude.logredact import redact_text, redact_url
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.connect import build_transport, server_environment
from mini_claude.mcp.doctor_watch import FirstReply, watching
from mini_claude.mcp.naming import ToolNameTable, qualify_tool_name
from mini_claude.mcp.protocol import McpTool
from mini_claude.mcp.trace import tapping
from mini_claude.mcp.transports.base import SupportsStderr

__all__ = ["Diagnosis", "Problem", "apply_names", "diagnose"]

LOUD_STDERR_BYTES = 32 * 1024  # more than this on stderr during a probe of seconds: a server logging heavily
ClientSetup = Callable[[ServerConfig, McpClient], None]


@runtime_checkable
class _EndsWithExitCode(Protocol):
    """A transport that knows how its process ended (stdio: `exit_code`, negative for a signal)."""

    exit_code: int | None


@dataclass(frozen=True)
class Problem:
    code: str   # stable, for scripts: "command-not-found", "exits-at-start", "call-hangs", ...
    cause: str  # one line: what is wrong
    fix: str    # one line: what to do about it


@dataclass
class Diagnosis:
    server: str
    type: str
    source: str
    command: str | None = None  # the command line (stdio) or the URL
    command_path: str | None = None  # where the command was found on the server's PATH
    held: str | None = None  # why a session would not start it
    first_reply_s: float | None = None  # start → the first message from the server
    ready_s: float | None = None  # start → initialized
    era: str | None = None
    protocol_version: str | None = None
    server_info: dict[str, Any] = field(default_factory=dict)
    capabilities: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    withheld: dict[str, str] = field(default_factory=dict)  # tool -> why it is not offered
    rejected: dict[str, str] = field(default_factory=dict)  # tool -> why the model API would refuse its schema
    renamed: dict[str, str] = field(default_factory=dict)  # raw tool name -> the name the model sees
    definition_tokens: int = 0  # the tools' definitions in a request, 4 characters a token (ToolSearch's estimate)
    ping_ms: float | None = None
    call: dict[str, Any] | None = None  # {"tool", "ok", "seconds", "error"} when --call was given
    non_json_stdout: list[str] = field(default_factory=list)
    protocol_notes: list[str] = field(default_factory=list)  # what the client logged about this server
    stderr_tail: str = ""
    ended: str | None = None  # how the process ended, when it did
    auth: str = "none (stdio)"
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, code: str, cause: str, fix: str) -> None:
        if all(p.code != code for p in self.problems):  # a URL's secrets never reach the report
            self.problems.append(Problem(code, redact_text(cause), redact_text(fix)))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data


def find_command(cfg: ServerConfig, env: Mapping[str, str]) -> str | None:
    """Where a stdio server's command is (its own PATH, its `cwd` for a relative path), or None."""
    assert cfg.command is not None
    command = cfg.command
    if "/" in command:
        path = Path(command) if os.path.isabs(command) or cfg.cwd is None else Path(cfg.cwd) / command
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(command, path=server_environment(env, cfg.env).get("PATH"))


async def diagnose(cfg: ServerConfig, env: Mapping[str, str], *, held: str | None, setup: ClientSetup | None,
                   timeout_s: float, call: tuple[str, dict[str, Any]] | None = None,
                   log_file: Path | None = None, keep_stderr: Callable[[bytes], None] | None = None) -> Diagnosis:
    """Try one server and say what is wrong with it. Bounded: each step by `timeout_s`, the close by the
    transport's own bounds. Never raises for the server's faults. `keep_stderr` receives the stderr the probe
    saw (the server's log: `ServerLogs.stderr_sink`)."""
    diag = Diagnosis(cfg.name, cfg.type, cfg.source)
    if cfg.type == "stdio":
        diag.command = shlex.join([cfg.command or "", *cfg.args])
        diag.command_path = find_command(cfg, env)
        if diag.command_path is None:
            diag.add("command-not-found", f"command {cfg.command!r} not found on the server's PATH",
                     f"install it, or give its absolute path in {cfg.source} (mcpServers.{cfg.name}.command)")
            return diag
    else:
        diag.command = redact_url(cfg.url or "")
        diag.auth = "oauth" if cfg.oauth else "headers" if cfg.headers or cfg.headers_helper else "none configured"
    if cfg.disabled:
        diag.add("disabled", f'"disabled": true in {cfg.source}', f"remove that key to use {cfg.name}")
        return diag
    if held is not None:
        diag.held = held
        diag.add("held", held, "approve or enable it as the cause says; the doctor never starts a held server")
        return diag
    with watching(cfg.name) as watch, tapping(FirstReply(cfg.name)) as tap:
        assert isinstance(tap, FirstReply)
        await _probe(cfg, env, diag, setup=setup, timeout_s=timeout_s, call=call, tap=tap)
    diag.non_json_stdout = [redact_text(line) for line in watch.noise]
    diag.protocol_notes = [redact_text(note) for note in watch.notes]
    diag.withheld.update(watch.withheld)
    if keep_stderr is not None and diag.stderr_tail:
        keep_stderr((diag.stderr_tail + "\n").encode("utf-8", "replace"))
    _judge(diag, tap, log_file)
    return diag


async def _probe(cfg: ServerConfig, env: Mapping[str, str], diag: Diagnosis, *, setup: ClientSetup | None,
                 timeout_s: float, call: tuple[str, dict[str, Any]] | None, tap: FirstReply) -> None:
    started = time.monotonic()
    client: McpClient | None = None
    stage = answered = "initialize"
    try:
        transport = build_transport(cfg, env)
        client = McpClient(transport, name=cfg.name, protocol_version=cfg.protocol_version)
        if setup is not None:
            setup(cfg, client)
        await client.connect(timeout_s=timeout_s)
        diag.ready_s = round(time.monotonic() - started, 3)
        diag.era, diag.protocol_version = client.era, client.protocol_version
        diag.server_info = dict(client.server_info)
        diag.capabilities = sorted(client.server_capabilities)
        if cfg.type != "stdio":
            diag.auth += ", connected"
        stage = "tools/list"
        tools = await asyncio.wait_for(client.list_tools(), timeout_s) if "tools" in client.server_capabilities \
            else []
        _look_at_tools(diag, tools)
        answered = stage
        if call is not None:
            stage = f"tools/call {call[0]}"
            diag.call = await _call(client, call, timeout_s)
            answered = stage
        # after a call that got no answer, the ping tells a hanging tool from a stuck server
        stage = "ping after the call" if diag.call is not None and diag.call.get("timed_out") else "ping"
        began = time.monotonic()
        await client.request("ping", {}, timeout_s=timeout_s)
        diag.ping_ms = round((time.monotonic() - began) * 1000, 1)
    except McpError as exc:
        _failed(diag, cfg, stage, exc, timeout_s, answered)
    except (OSError, ValueError) as exc:  # defensive: a foreign error is still a finding, never a traceback
        diag.add("unexpected", f"{stage} failed: {exc!r}", "run with --debug and report it")
    finally:
        if tap.at is not None:
            diag.first_reply_s = round(tap.at - started, 3)
        if client is not None:
            ended_by_itself = client.closed_error if diag.ready_s is not None else None  # not our failed connect
            with contextlib.suppress(McpError):
                await client.close()
            _ending(diag, client, ended_by_itself)


async def _call(client: McpClient, call: tuple[str, dict[str, Any]], timeout_s: float) -> dict[str, Any]:
    tool, arguments = call
    began = time.monotonic()
    record: dict[str, Any] = {"tool": tool}
    try:
        result = await client.call_tool(tool, arguments, timeout_s=timeout_s)
        record.update(ok=not result.is_error, seconds=round(time.monotonic() - began, 3))
    except McpTimeoutError:
        record.update(ok=False, seconds=round(time.monotonic() - began, 3), timed_out=True,
                      error=f"no answer within {timeout_s:g}s")
    except JsonRpcError as exc:
        record.update(ok=False, seconds=round(time.monotonic() - began, 3), error=str(exc))
    return record


def _look_at_tools(diag: Diagnosis, tools: list[McpTool]) -> None:
    diag.tools = [t.name for t in tools]
    chars = 0
    for tool in tools:
        qualified = qualify_tool_name(diag.server, tool.name)
        chars += len(_definition_json(qualified, tool))
        why = _rejected_schema(tool.input_schema)
        if why is not None:
            diag.rejected[tool.name] = why
    diag.definition_tokens = chars // 4


def _definition_json(name: str, tool: McpTool) -> str:
    return json.dumps({"name": name, "description": tool.description or "", "input_schema": tool.input_schema},
                      ensure_ascii=False)


def _rejected_schema(schema: Any) -> str | None:
    """Why the model API would refuse this input schema (it wants a JSON Schema object of type "object")."""
    if not isinstance(schema, dict):
        return "input schema is not a JSON object"
    if schema.get("type") != "object":
        return f'input schema type is {schema.get("type")!r}, the model API takes only "object"'
    if "properties" in schema and not isinstance(schema["properties"], dict):
        return "input schema properties is not an object"
    return None


def apply_names(diagnoses: list[Diagnosis]) -> None:
    """Fill each diagnosis's `renamed`: the tools whose name the model sees is not `mcp__server__tool` (illegal
    characters replaced, too long and hashed, or a collision across the servers diagnosed together)."""
    table = ToolNameTable((d.server, tool) for d in diagnoses for tool in d.tools)
    for diag in diagnoses:
        for tool in diag.tools:
            qualified = table.qualified(diag.server, tool)
            if qualified != f"mcp__{diag.server}__{tool}":
                diag.renamed[tool] = qualified


def _failed(diag: Diagnosis, cfg: ServerConfig, stage: str, exc: McpError, timeout_s: float,
            answered: str) -> None:
    by_hand = f"run it by hand to see the whole error: {diag.command}" if cfg.type == "stdio" else \
        f"check that {diag.command} is up and serves MCP"
    if isinstance(exc, ServerExitedError):
        how = _exit_words(exc.exit_code)
        last = _last_line(exc.stderr_tail)
        said = f": {last}" if last else " (nothing on stderr)"
        if stage == "initialize":
            diag.add("exits-at-start", f"{how} before answering initialize{said}", by_hand)
        elif exc.exit_code == 0:  # no crash: it thinks its work is done
            diag.add("exits-after-answering", f"{how} on its own after answering {answered}{said}",
                     "a server must keep running until its stdin closes: report it to its author")
        else:
            diag.add("exits-during-" + stage.split()[0].replace("/", "-"), f"{how} during {stage}{said}",
                     "it crashed on this request: see its stderr (below) and report it to the server's author")
    elif isinstance(exc, SpawnError):
        diag.add("cannot-start", str(exc), f"fix mcpServers.{cfg.name} in {cfg.source}")
    elif isinstance(exc, AuthRequiredError):
        diag.auth = "needs login"
        diag.add("needs-login", "the server needs an OAuth login", f"mini-claude mcp login {cfg.name}")
    elif isinstance(exc, McpTimeoutError):
        _timed_out(diag, cfg, stage, timeout_s)
    elif isinstance(exc, HttpStatusError):
        diag.add("http-error", f"{stage}: HTTP {exc.status}", f"check the URL and headers of {cfg.name} in "
                                                             f"{cfg.source}")
    elif isinstance(exc, TransportError):
        diag.add("unreachable", f"{stage}: {exc.message}", by_hand)
    elif isinstance(exc, (ProtocolError, JsonRpcError)):
        diag.add("protocol-error", f"{stage}: {exc.message}",
                 "the server breaks the MCP protocol here: report it to its author (or pin protocolVersion)")
    else:
        diag.add("error", f"{stage}: {exc.message}", by_hand)


def _timed_out(diag: Diagnosis, cfg: ServerConfig, stage: str, timeout_s: float) -> None:
    if stage == "initialize":
        diag.add("no-initialize", f"no answer to initialize within {timeout_s:g}s",
                 "make sure it speaks MCP over stdio (JSON-RPC lines on stdout) and starts in time; a slow "
                 "start needs MCP_TIMEOUT (ms) or a longer --timeout" if cfg.type == "stdio" else
                 f"make sure {diag.command} serves MCP (Streamable HTTP, or -t sse for a legacy SSE server)")
    elif stage == "ping after the call":
        diag.add("stuck", f"{diag.call['tool'] if diag.call else 'the tool'} got no answer within {timeout_s:g}s "
                          f"and then neither did ping: the server is stuck or stopped reading its input",
                 "restart it (/mcp reconnect, or a new session) and report the hang to its author")
    elif stage == "ping":
        diag.add("no-ping", f"no answer to ping within {timeout_s:g}s", "the server is busy or stuck: see its "
                                                                          "stderr and report it")
    else:
        diag.add("slow-" + stage.split()[0].replace("/", "-"), f"{stage}: no answer within {timeout_s:g}s",
                 "see its stderr (below)")


def _judge(diag: Diagnosis, tap: FirstReply, log_file: Path | None) -> None:
    """The problems that are not failures: the server works, but something needs fixing."""
    if diag.call is not None and diag.call.get("timed_out") and not any(p.code == "stuck" for p in diag.problems):
        diag.add("call-hangs", f"tools/call {diag.call['tool']} got no answer within {diag.call['seconds']:g}s, "
                               f"though the server still answers ping",
                 "the tool hangs (or needs longer: its \"timeout\" in the config); report it to the author")
    if diag.non_json_stdout:
        diag.add("stdout-noise", f"{len(diag.non_json_stdout)} non-JSON line(s) on stdout, e.g. "
                                 f"{diag.non_json_stdout[0][:80]!r}",
                 "stdout is for JSON-RPC only: make the server log to stderr")
    if diag.protocol_notes:
        diag.add("protocol-oddities", f"{len(diag.protocol_notes)} malformed or unexpected message(s): "
                                      f"{diag.protocol_notes[0][:120]}",
                 "mini-claude skips them; report them to the server's author")
    if tap.replaced:
        diag.add("invalid-utf8", "it sent text that is not valid UTF-8 (shown as U+FFFD)",
                 "the server must write UTF-8; report it to its author")
    if diag.withheld:
        name, why = next(iter(diag.withheld.items()))
        diag.add("tools-withheld", f"{len(diag.withheld)} tool(s) not offered to the model, e.g. {name!r}: {why}",
                 "the server's author must fix the tool definition; the other tools work")
    if diag.rejected:
        name, why = next(iter(diag.rejected.items()))
        diag.add("schema-rejected", f"{len(diag.rejected)} tool(s) the model API would refuse, e.g. {name!r}: {why}",
                 f"the server's author must fix the schema; until then a request offering it may fail: "
                 f"mini-claude mcp disable {diag.server}")
    if len(diag.stderr_tail.encode("utf-8", "replace")) >= LOUD_STDERR_BYTES:
        where = f" (its log: {log_file})" if log_file is not None and log_file.exists() else ""
        diag.add("stderr-flood", f"it wrote over {LOUD_STDERR_BYTES // 1024} KB to stderr while probed{where}",
                 "lower its log level (its own option or env variable; \"logLevel\" for MCP logging)")


def _ending(diag: Diagnosis, client: McpClient, ended_by_itself: McpError | None) -> None:
    transport = client.transport
    if isinstance(transport, SupportsStderr):
        diag.stderr_tail = redact_text(transport.stderr_text())
    code = transport.exit_code if isinstance(transport, _EndsWithExitCode) else None
    if ended_by_itself is not None:
        diag.ended = str(ended_by_itself)
        if not diag.problems:  # it answered everything, then left
            code_of = ended_by_itself.exit_code if isinstance(ended_by_itself, ServerExitedError) else code
            diag.add("exits-after-answering", f"{_exit_words(code_of)} on its own after answering",
                     "a server must keep running until its stdin closes: report it to its author")
    elif code is not None and code == -9:
        diag.ended = "killed with SIGKILL"
        diag.add("ignores-shutdown", "it ignored stdin closing and SIGTERM: it had to be killed (SIGKILL)",
                 "a server must exit when its stdin closes: report it to its author")


def _exit_words(code: int | None) -> str:
    if code is None:
        return "it closed its stdout"
    if code < 0:
        return f"it was killed by signal {-code}"
    return f"it exited with code {code}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""

