"""`mini-claude mcp serve`: the agent's own tools (Read, Write, Edit, NotebookEdit, Glob, Grep, Bash, WebFetch)
served as MCP tools to another MCP client — over stdio, or Streamable HTTP with `--port` (loopback unless `--host`
says otherwise, with a warning; the transport is the only difference) — behind the same permission gate a session in this folder
has: its settings (a project's settings widen nothing until the folder is trusted), deny rules, and the
outside / secret / protected path checks.

Every call goes as the model's does (agent/tool_calls.py): the input is checked against the tool's schema, the
gate decides, the tool runs, and its result is masked (known secret values) and capped. When the gate would ask
the user: a client that declared the `elicitation` capability is asked through `elicitation/create` (a yes/no form
naming the call); any other client's call is refused with the reason and the rule that would allow it.
Hooks do not run here (there is no session); background Bash commands are refused (nothing would collect them).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import signal
import sys
from pathlib import Path
from typing import Any

from mini_claude import __version__
from mini_claude.agent.calls import masked, wrong_input
from mini_claude.errors import ConfigError
from mini_claude.mcp.protocol import SUPPORTED_PROTOCOL_VERSIONS
from mini_claude.mcp.server import McpServerCore, ServerTool, ToolCallContext
from mini_claude.mcp.transports.http_server import HttpMcpServer, is_loopback
from mini_claude.mcp.transports.stdio_server import serve_stdio
from mini_claude.paths import user_home
from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions.answers import AskContext, PermissionAnswer
from mini_claude.secrets import mask
from mini_claude.session.gate_parts import build_gate, shell_tool
from mini_claude.session.mcp_half import additional_dirs
from mini_claude.session.parts import SessionOptions
from mini_claude.session.start import build_env, load_session_settings, settle_trust
from mini_claude.tools.base import Tool, ToolContext, ToolResult

__all__ = ["SERVED_TOOLS", "build_core", "serve_command"]

SERVED_TOOLS = ("Read", "Write", "Edit", "NotebookEdit", "Glob", "Grep", "Bash", "WebFetch")
MAX_RESULT_CHARS = 200_000
ELICIT_TIMEOUT_S = 600.0

_current: contextvars.ContextVar[ToolCallContext | None] = contextvars.ContextVar("mcp_serve_call", default=None)


class _StderrUI:
    """The session's notices (trust, rule problems) as stderr lines: stdout is the protocol's."""

    def info(self, text: str) -> None:
        print(f"mini-claude mcp serve: {text}", file=sys.stderr, flush=True)

    def warn(self, text: str) -> None:
        print(f"mini-claude mcp serve: warning: {text}", file=sys.stderr, flush=True)


def _annotations(tool: Tool) -> dict[str, Any]:
    name = tool.name
    notes: dict[str, Any] = {"title": name, "readOnlyHint": bool(tool.read_only)}
    if not tool.read_only:
        notes["destructiveHint"] = name in ("Bash", "Write")
        notes["idempotentHint"] = False
    notes["openWorldHint"] = name in ("Bash", "WebFetch")
    return notes


def _mcp_content(result: ToolResult) -> list[dict[str, Any]]:
    """Anthropic content blocks → MCP content blocks (text, image; anything else as text)."""
    blocks: list[dict[str, Any]] = []
    for block in result.content:
        kind = block.get("type")
        source = block.get("source")
        if kind == "text":
            blocks.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image" and isinstance(source, dict) and source.get("type") == "base64":
            blocks.append({"type": "image", "data": source.get("data", ""),
                           "mimeType": source.get("media_type", "image/png")})
        else:
            blocks.append({"type": "text", "text": json.dumps(block)})
    if result.aside:
        blocks.append({"type": "text", "text": result.aside})
    return blocks


async def _ask(gate_ref: list[PermissionGate], tool: Tool, args: dict[str, Any],
               context: AskContext) -> PermissionAnswer:
    """The gate's question: an elicitation form when the client can show one, else a refusal saying why."""
    ctx = _current.get()
    why = context.reason or "it is not allowed by a rule"
    rules = ", ".join(f'"{r}"' for r in gate_ref[0].suggested_rules(tool, args)) if gate_ref else ""
    allow_hint = f"; add {rules} to permissions.allow in .claude/settings.json to allow it" if rules else ""
    if ctx is None or "elicitation" not in ctx.client_capabilities:
        return PermissionAnswer(allow=False, message=(
            f"{tool.name} needs the user's approval ({why}), and this MCP client cannot be asked (it did not declare "
            f"the elicitation capability){allow_hint}"))
    shown = mask(json.dumps(args, ensure_ascii=False))  # the form goes to another program: no known secret value
    if len(shown) > 2000:
        shown = shown[:2000] + "…"
    schema = {"type": "object", "properties": {"allow": {"type": "boolean", "title": f"Allow {tool.name}?"}},
              "required": ["allow"]}
    try:
        answer = await ctx.elicit(f"mini-claude: allow {tool.name} {shown}? ({why})", schema,
                                  timeout_s=ELICIT_TIMEOUT_S)
    except Exception as exc:  # the client failed or timed out: no approval
        return PermissionAnswer(allow=False, message=f"{tool.name} was not approved (asking failed: {exc})")
    content = answer.get("content")
    if answer.get("action") == "accept" and isinstance(content, dict) and content.get("allow") is True:
        return PermissionAnswer(allow=True)
    return PermissionAnswer(allow=False, message=f"the user declined this {tool.name} call")


async def build_core(cwd: Path, env: dict[str, str], *, mode: str | None = None) -> tuple[McpServerCore, ToolContext]:
    """The served tools behind this folder's gate (settings and trust settled as a non-interactive session's)."""
    from mini_claude.tools.builtins import builtin_tools
    from mini_claude.tools.output import cap_result
    from mini_claude.tools.shell import BashTool

    opts = SessionOptions(cwd=cwd)
    settings = load_session_settings(cwd, env)
    settings, _model_env, _trusted = await settle_trust(opts, env, settings, _StderrUI(), ask=None)
    mode_name = mode or settings.default_mode or "default"
    try:
        permission_mode = PermissionMode.parse(mode_name)
    except ValueError as exc:
        raise ConfigError(str(exc), key="permissions.defaultMode" if mode is None else None) from exc
    if permission_mode is PermissionMode.BYPASS:
        permission_mode = PermissionMode.DEFAULT  # nobody is watching a served session: the gate always holds
    rules = RuleSet.from_settings(settings)
    for err in rules.errors:
        _StderrUI().warn(f"permissions: {err} (rule ignored)")
    gate_ref: list[PermissionGate] = []

    async def ask(tool: Tool, args: dict[str, Any], context: AskContext) -> PermissionAnswer:
        return await _ask(gate_ref, tool, args, context)

    dirs = additional_dirs(settings, cwd, user_home(env))
    guarded = build_gate(cwd, env, settings, mode=permission_mode, rules=rules, ask=ask, dirs=dirs,
                         warn=_StderrUI().warn)
    gate, ctx = guarded.gate, guarded.ctx
    gate_ref.append(gate)
    served: list[ServerTool] = []
    for tool in builtin_tools():
        if tool.name not in SERVED_TOOLS:
            continue
        if isinstance(tool, BashTool):
            tool = shell_tool(guarded, env)
        served.append(ServerTool(tool.name, tool.description, tool.input_schema, _handler(tool, gate, ctx, cap_result),
                                 annotations=_annotations(tool), with_context=True))
    core = McpServerCore("mini-claude", __version__, served,
                         instructions="mini-claude's file, search and shell tools, behind this folder's permission "
                                      "rules.")
    return core, ctx


def _handler(tool: Tool, gate: PermissionGate, ctx: ToolContext, cap: Any) -> Any:
    async def handle(args: dict[str, Any], call: ToolCallContext) -> dict[str, Any]:
        problem = wrong_input(tool, args, tool.name)
        if problem:
            return {"content": [{"type": "text", "text": problem}], "isError": True}
        if tool.name == "Bash" and args.get("run_in_background") is True:
            return {"content": [{"type": "text", "text": "run_in_background is not available over mcp serve: "
                                 "nothing would collect the command's output"}], "isError": True}
        token = _current.set(call)
        try:
            decision = await gate.check(tool, args)
        finally:
            _current.reset(token)
        if not decision.allowed:
            result = masked(ToolResult.error(decision.reason))
        else:
            run_args = decision.updated_input if decision.updated_input is not None else args
            try:
                result = await tool.run(run_args, ctx)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                result = ToolResult.error(f"{tool.name} failed: {exc}" if str(exc) else f"{tool.name} failed: {exc!r}")
            result = cap(masked(result), ctx, tool_name=tool.name, max_chars=MAX_RESULT_CHARS)
        out: dict[str, Any] = {"content": _mcp_content(result)}
        if result.is_error:
            out["isError"] = True
        return out
    return handle


async def _serve(cwd: Path, mode: str | None, port: int | None, host: str | None) -> int:
    env = build_env(cwd)
    core, ctx = await build_core(cwd, env, mode=mode)
    try:
        if port is None:
            await serve_stdio(core)
            return 0
        return await _serve_http(core, port, host or "127.0.0.1")
    finally:
        await ctx.background.aclose()
        await core.aclose()


async def _serve_http(core: McpServerCore, port: int, host: str) -> int:
    """Streamable HTTP until SIGINT or SIGTERM (0); 1 when the address cannot be bound."""
    ui = _StderrUI()
    if not is_loopback(host):
        ui.warn(f"binding {host}: other machines can reach these tools (the permission rules still hold, but "
                f"anyone who can connect may ask)")
    server = HttpMcpServer(core, versions=SUPPORTED_PROTOCOL_VERSIONS, host=host, port=port)
    try:
        url = await server.start()
    except OSError as exc:
        ui.warn(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        return 1
    ui.info(f"listening on {url}")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await server.close()
    return 0


def serve_command(mode: str | None = None, *, port: int | None = None, host: str | None = None) -> int:
    """Serve until the client closes stdin (stdio), or until SIGINT / SIGTERM (HTTP, with `port`)."""
    if host is not None and port is None:
        _StderrUI().warn("--host needs --port (stdio has no address)")
        return 2
    if port is not None and not 0 <= port <= 65535:
        _StderrUI().warn(f"--port {port}: not a TCP port")
        return 2
    return asyncio.run(_serve(Path.cwd().resolve(), mode, port, host))
