"""The MCP protocol's plain data: protocol versions of both eras, `_meta` keys, error codes, and the wire objects
the client hands out (`McpTool`, `CallToolResult`), with the small helpers that read them.

Nothing here does I/O or keeps state; the client, the era negotiation and the manager all build on it.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from mini_claude.errors import InvalidToolHeadersError, ProtocolError
from mini_claude.mcp.headers import HeaderParam, tool_header_params
from mini_claude.mcp.schema import MAX_SCHEMA_DEPTH, schema_depth_problem
from mini_claude.mcp.transports.json_depth import nested_deeper_than

__all__ = [
    "DEFAULT_TOOL_MAX_TIMEOUT_MS",
    "DEFAULT_TOOL_TIMEOUT_MS",
    "HANDLER_CAPABILITIES",
    "INCOMPLETE_RESULT_TYPES",
    "KNOWN_PROTOCOL_VERSIONS",
    "LATEST_MODERN_VERSION",
    "LATEST_PROTOCOL_VERSION",
    "LIST_CHANGED",
    "LOG_LEVELS",
    "MAX_INPUT_ROUNDS",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "MODERN_PROTOCOL_VERSIONS",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "UNSUPPORTED_VERSION_CODES",
    "WITHHELD_LOG_KEY",
    "CallToolResult",
    "McpTool",
    "ServerHello",
    "WithheldTool",
    "is_number",
    "listed_versions",
    "read_tools",
    "supported_versions",
    "tool_max_timeout_s",
    "tool_timeout_s",
    "withheld_reason",
]

log = logging.getLogger(__name__)

# the legacy era: versions negotiated by `initialize` (newest first); LATEST_PROTOCOL_VERSION is what we offer
SUPPORTED_PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0]
# the modern (stateless, per-request `_meta`) era, newest first
MODERN_PROTOCOL_VERSIONS = ("2026-07-28",)
LATEST_MODERN_VERSION = MODERN_PROTOCOL_VERSIONS[0]
KNOWN_PROTOCOL_VERSIONS = MODERN_PROTOCOL_VERSIONS + SUPPORTED_PROTOCOL_VERSIONS

# UnsupportedProtocolVersionError: -32022 on the wire today (the harness, the SDKs), -32004 in one spec draft
UNSUPPORTED_VERSION_CODES = frozenset({-32022, -32004})

_META_PREFIX = "io.modelcontextprotocol/"
META_PROTOCOL_VERSION = _META_PREFIX + "protocolVersion"
META_CLIENT_CAPABILITIES = _META_PREFIX + "clientCapabilities"
META_CLIENT_INFO = _META_PREFIX + "clientInfo"
META_SERVER_INFO = _META_PREFIX + "serverInfo"

INCOMPLETE_RESULT_TYPES = frozenset({"incomplete", "input_required"})  # the spec's name, and the suite's
MAX_INPUT_ROUNDS = 10  # multi-round-trip: input rounds one request may take before we call it a server bug

# list_changed notification -> the list methods whose cached answers it makes stale
LIST_CHANGED: Mapping[str, tuple[str, ...]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}

# server -> client request method -> the capability a handler for it lets us declare (only what we really handle)
# notifications/message and logging/setLevel levels, least severe first (RFC 5424)
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

HANDLER_CAPABILITIES: Mapping[str, tuple[str, Mapping[str, Any]]] = {
    "roots/list": ("roots", {"listChanged": True}),
    "sampling/createMessage": ("sampling", {}),
    # an empty object means form mode (the spec's backward-compatible default); pass `capability=` for url mode
    "elicitation/create": ("elicitation", {}),
}

# the attribute of a "withholding tool" log record that holds its WithheldTool (read by `mini-claude mcp`)
WITHHELD_LOG_KEY = "mcp_withheld_tool"

DEFAULT_TOOL_TIMEOUT_MS = 600_000  # MCP_TOOL_TIMEOUT's default (Claude Code's unit: milliseconds)
DEFAULT_TOOL_MAX_TIMEOUT_MS = 3_600_000  # MCP_TOOL_MAX_TIMEOUT's default


def tool_timeout_s(env: Mapping[str, str] | None = None) -> float:
    """How long a tools/call may go without an answer or a progress notification: MCP_TOOL_TIMEOUT (milliseconds)
    in `env` (default: the process environment), else `DEFAULT_TOOL_TIMEOUT_MS`."""
    return _env_ms(env, "MCP_TOOL_TIMEOUT", DEFAULT_TOOL_TIMEOUT_MS)


def tool_max_timeout_s(env: Mapping[str, str] | None = None) -> float:
    """The hard cap on one tools/call, progress or not: MCP_TOOL_MAX_TIMEOUT (ms), else
    `DEFAULT_TOOL_MAX_TIMEOUT_MS` (one hour)."""
    return _env_ms(env, "MCP_TOOL_MAX_TIMEOUT", DEFAULT_TOOL_MAX_TIMEOUT_MS)


def _env_ms(env: Mapping[str, str] | None, name: str, default_ms: int) -> float:
    raw = (os.environ if env is None else env).get(name, "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            log.warning("%s=%r is not a number of milliseconds; using %d", name, raw, default_ms)
        else:
            if value > 0 and math.isfinite(value):
                return value / 1000.0
            log.warning("%s=%r must be a positive number of milliseconds; using %d", name, raw, default_ms)
    return default_ms / 1000.0


@dataclass(frozen=True)
class McpTool:
    """One tool as the server listed it. `raw` is the wire object, for anything not lifted into a field."""

    name: str
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]
    raw: dict[str, Any] = field(repr=False)

    @property
    def task_support(self) -> str:
        """`execution.taskSupport`: "forbidden" (the default), "optional" or "required" (call it as a task)."""
        execution = self.raw.get("execution")
        value = execution.get("taskSupport") if isinstance(execution, dict) else None
        return value if value in ("optional", "required") else "forbidden"

    @property
    def visibility(self) -> tuple[str, ...]:
        """MCP Apps (`io.modelcontextprotocol/ui`): who may see and call the tool, from `_meta.ui.visibility`:
        "model" (the agent) and/or "app" (a view of the same server). Absent or not a list of strings: both, the
        extension's default. Servers list app-only tools whether or not the client declared the extension."""
        meta = self.raw.get("_meta")
        ui = meta.get("ui") if isinstance(meta, dict) else None
        value = ui.get("visibility") if isinstance(ui, dict) else None
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(value)
        return ("model", "app")

    @property
    def ui_resource_uri(self) -> str | None:
        """MCP Apps: the `ui://` resource that shows this tool's results (`_meta.ui.resourceUri`, else the
        deprecated flat `_meta["ui/resourceUri"]`); None when absent or not a `ui://` URI."""
        meta = self.raw.get("_meta")
        if not isinstance(meta, dict):
            return None
        ui = meta.get("ui")
        for value in (ui.get("resourceUri") if isinstance(ui, dict) else None, meta.get("ui/resourceUri")):
            if isinstance(value, str) and value.startswith("ui://") and len(value) <= 2048:
                return value
        return None

    @property
    def model_visible(self) -> bool:
        """Whether the model may be offered this tool (an app-only tool is for a server's own view)."""
        return "model" in self.visibility

    @property
    def read_only_hint(self) -> bool:
        """True only when the server says so explicitly (hints are untrusted; absent means "may write")."""
        return self.annotations.get("readOnlyHint") is True

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> McpTool | None:
        """Build from a `tools/list` entry; None (logged by the caller) when it has no usable name."""
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            return None
        given = raw.get("annotations")
        annotations: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
        title = raw.get("title")
        if not isinstance(title, str):
            title = annotations.get("title") if isinstance(annotations.get("title"), str) else None
        description = raw.get("description")
        schema = raw.get("inputSchema")
        output_schema = raw.get("outputSchema")
        return cls(
            name=name,
            title=title,
            description=description if isinstance(description, str) else None,
            # the spec requires an object schema; a server that sends none still gets a callable tool
            input_schema=dict(schema) if isinstance(schema, dict) else {"type": "object"},
            output_schema=dict(output_schema) if isinstance(output_schema, dict) else None,
            annotations=annotations,
            raw=raw,
        )


@dataclass(frozen=True)
class WithheldTool:
    """A listed tool that is not offered, and why (e.g. "input schema nested deeper than 64 levels")."""

    server: str
    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.name}: {self.reason}"


def withheld_reason(raw: dict[str, Any]) -> str | None:
    """Why a `tools/list` entry must not be offered although it has a name: its schemas (or the rest of it) nest
    deeper than MAX_SCHEMA_DEPTH, so code that recurses into them could not handle it. None when it is fine."""
    if not nested_deeper_than(raw, MAX_SCHEMA_DEPTH + 1):  # the usual case: one walk over the entry
        return None
    for key, what in (("inputSchema", "input schema"), ("outputSchema", "output schema")):
        problem = schema_depth_problem(raw.get(key), what)
        if problem is not None:
            return problem
    return f"tool definition nested deeper than {MAX_SCHEMA_DEPTH + 1} levels"  # annotations, _meta, …


def read_tools(listed: list[dict[str, Any]], *, server: str
               ) -> tuple[list[McpTool], dict[str, tuple[HeaderParam, ...]]]:
    """The tools of a `tools/list` listing, and the SEP-2243 header parameters of those that declare some.
    Entries without a name, repeating one, or with invalid `x-mcp-header` annotations (such a tool must not be
    offered) are dropped, each with a warning naming `server`. A tool nested too deep (`withheld_reason`) is
    withheld: a warning whose record carries a `WithheldTool` under `WITHHELD_LOG_KEY` (`mcp tools` and
    `mcp list` collect these to show the reason), and the other tools are offered as usual."""
    tools: list[McpTool] = []
    seen: set[str] = set()
    headers: dict[str, tuple[HeaderParam, ...]] = {}
    for raw in listed:
        tool = McpTool.from_wire(raw)
        if tool is None:
            log.warning("%s: ignoring a tool without a name: %.200r", server, raw)
            continue
        if tool.name in seen:
            log.warning("%s: ignoring a second tool named %r", server, tool.name)
            continue
        reason = withheld_reason(raw)
        if reason is not None:
            seen.add(tool.name)
            withheld = WithheldTool(server, tool.name, reason)
            log.warning("%s: withholding tool %r: %s", server, tool.name, reason,
                        extra={WITHHELD_LOG_KEY: withheld})
            continue
        try:
            params = tool_header_params(tool.input_schema)
        except InvalidToolHeadersError as exc:
            log.warning("%s: ignoring tool %r: %s", server, tool.name, exc)
            continue
        seen.add(tool.name)
        tools.append(tool)
        if params:
            headers[tool.name] = params
    return tools, headers


@dataclass(frozen=True)
class CallToolResult:
    """A `tools/call` result: content blocks (dicts, as sent), structured content, and the isError flag."""

    content: list[dict[str, Any]]
    structured_content: Any | None
    is_error: bool
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_wire(cls, result: Any, *, tool: str, server: str) -> CallToolResult:
        """Check a `tools/call` result of `tool` from `server`: ProtocolError when it is no object or its content
        no list; content items that are not objects are dropped (logged)."""
        if not isinstance(result, dict):
            raise ProtocolError(f"tools/call {tool}: result is not an object: {result!r:.200}", server=server)
        content = result.get("content")
        if content is None:
            content = []
        if not isinstance(content, list):
            raise ProtocolError(f"tools/call {tool}: result content is not a list: {content!r:.200}", server=server)
        blocks = [block for block in content if isinstance(block, dict)]
        if len(blocks) != len(content):
            log.warning("%s: tools/call %s: dropped %d content item(s) that are not objects", server, tool,
                        len(content) - len(blocks))
        return cls(content=blocks, structured_content=result.get("structuredContent"),
                   is_error=result.get("isError") is True, raw=result)


@dataclass(frozen=True)
class ServerHello:
    """What a handshake answer (`initialize` or `server/discover` result) says about the server."""

    capabilities: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # serverInfo: name, version, ...
    instructions: str | None = None  # None when absent or blank

    @classmethod
    def from_wire(cls, result: dict[str, Any], *, modern: bool) -> ServerHello:
        """Read a handshake result (a `modern` one may carry `serverInfo` in its `_meta` instead)."""
        capabilities = result.get("capabilities")
        meta = result.get("_meta")
        in_meta = meta.get(META_SERVER_INFO) if modern and isinstance(meta, dict) else None
        info = result.get("serverInfo", in_meta)
        instructions = result.get("instructions")
        return cls(capabilities=capabilities if isinstance(capabilities, dict) else {},
                   info=info if isinstance(info, dict) else {},
                   instructions=instructions if isinstance(instructions, str) and instructions.strip() else None)


def is_number(value: Any) -> TypeGuard[int | float]:
    """A JSON number (`true`/`false` are not numbers, though Python's bool is an int)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def supported_versions(data: Any) -> list[str]:
    """The versions an unsupported-version error's `data.supported` lists ([] when it lists none)."""
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def listed_versions(result: Any) -> list[str]:
    """The `supportedVersions` of a `server/discover` result ([] when it has none, or is no object)."""
    supported = result.get("supportedVersions") if isinstance(result, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []
