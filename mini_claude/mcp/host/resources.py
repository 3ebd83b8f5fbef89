"""Resources for the model and the user: listing and reading them across servers, `@server:uri` mentions in a
prompt, and subscriptions to what was attached.

`@server:uri` (after whitespace or at the start, `server` a configured server) attaches that resource's content
to the user's message, as Claude Code does: the text stays as typed and the content follows in blocks (converted
like a tool result: text inline, images as images, other blobs to a file). A resource that cannot be read is
named in a problem line instead. Attached resources of a server that supports it are subscribed to;
`notifications/resources/updated` marks them, and `take_updates()` hands the changed ones to the next turn.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mini_claude.errors import McpError
from mini_claude.mcp.content import convert_result
from mini_claude.mcp.host.completion import complete
from mini_claude.mcp.manager import McpManager
from mini_claude.mcp.protocol import CallToolResult
from mini_claude.mcp.server_state import ServerStatus

__all__ = ["MENTION", "Attached", "ResourceService", "find_mentions"]

log = logging.getLogger(__name__)

MENTION = re.compile(r"(?<!\S)@([A-Za-z0-9_.-]+):(\S+)")
MAX_ATTACHED_TOKENS = 25_000


class Attached:
    """What a prompt's mentions gave: content blocks for the model, and a line per mention that failed."""

    def __init__(self) -> None:
        self.blocks: list[dict[str, Any]] = []
        self.problems: list[str] = []


def find_mentions(text: str, servers: set[str]) -> list[tuple[str, str]]:
    """`(server, uri)` for each `@server:uri` in `text` naming a known server, in order, each once."""
    found: list[tuple[str, str]] = []
    for match in MENTION.finditer(text):
        pair = (match.group(1), match.group(2).rstrip(".,;)"))
        if pair[0] in servers and pair not in found:
            found.append(pair)
    return found


class ResourceService:
    """Resources of the manager's ready servers (`bind` the manager once it exists)."""

    def __init__(self, on_updated: Callable[[str, str], None] | None = None) -> None:
        self.manager: McpManager | None = None
        self.on_updated = on_updated
        self._subscribed: set[tuple[str, str]] = set()
        self._updated: list[tuple[str, str]] = []
        self._known: dict[str, list[str]] = {}  # server -> the uris it listed last (for completion)
        self._templates: dict[str, list[str]] = {}  # server -> its uri templates (for completion)

    def bind(self, manager: McpManager) -> None:
        self.manager = manager

    def _ready(self) -> McpManager:
        if self.manager is None:
            raise McpError("no MCP servers in this session")
        return self.manager

    def servers_with_resources(self) -> list[str]:
        manager = self.manager
        if manager is None:
            return []
        return [s.name for s in manager.states.values() if s.status is ServerStatus.READY and s.client is not None
                and "resources" in s.client.server_capabilities]

    async def list_all(self, server: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """`(server, resource)` for every listed resource of `server` or of every server that has any."""
        manager = self._ready()
        names = [server] if server is not None else self.servers_with_resources()
        listed: list[tuple[str, dict[str, Any]]] = []
        for name in names:
            client = await manager.connected_client(name)
            found = [r for r in await client.list_resources() if isinstance(r.get("uri"), str)]
            self._known[name] = [r["uri"] for r in found]
            listed.extend((name, r) for r in found)
        return listed

    async def refresh(self, server: str) -> None:
        """List a server's resources and templates again (after `resources/list_changed`, for completion)."""
        try:
            await self.list_all(server)
            self._templates[server] = [t["uriTemplate"] for t in await self.templates(server)
                                       if isinstance(t.get("uriTemplate"), str)]
        except McpError as exc:  # the old names stay; completion is a convenience
            log.info("%s: listing resources for completion failed: %s", server, exc)

    def cached_mentions(self) -> list[str]:
        """`@server:uri` for every resource listed so far (for completion, which must not wait)."""
        return [f"@{server}:{uri}" for server, uris in self._known.items() for uri in uris]

    def cached_templates(self) -> list[tuple[str, str]]:
        """`(server, uri template)` for every template listed so far."""
        return [(server, template) for server, templates in self._templates.items() for template in templates]

    async def complete_template(self, server: str, template: str, variable: str, value: str) -> list[str]:
        """`completion/complete` for one variable of a resource template; [] when not offered or failed."""
        return await complete(self.manager, server, {"type": "ref/resource", "uri": template}, variable, value)

    async def templates(self, server: str) -> list[dict[str, Any]]:
        client = await self._ready().connected_client(server)
        return await client.list_resource_templates()

    async def read(self, server: str, uri: str) -> list[dict[str, Any]]:
        client = await self._ready().connected_client(server)
        return await client.read_resource(uri)

    async def read_blocks(self, server: str, uri: str, *, spill_dir: Path) -> list[dict[str, Any]]:
        """A resource's content as model content blocks (text, images; big or binary content to a file)."""
        contents = await self.read(server, uri)
        result = CallToolResult(content=[{"type": "resource", "resource": c} for c in contents],
                                structured_content=None, is_error=False, raw={})
        converted = convert_result(result, spill_dir=spill_dir, stem=f"{server}-resource",
                                   max_output_tokens=MAX_ATTACHED_TOKENS)
        return [*converted.blocks, *({"type": "text", "text": f"[note: {w}]"} for w in converted.warnings)]

    async def attach_mentions(self, text: str, *, spill_dir: Path,
                              refused: Callable[[str, str], str | None] = lambda server, uri: None) -> Attached:
        """The content of every `@server:uri` in `text` (see the module docstring). `refused(server, uri)` says why
        it may not be read (a permission deny rule names the server; a command did not write it): not sent."""
        attached = Attached()
        manager = self.manager
        if manager is None:
            return attached
        for server, uri in find_mentions(text, set(manager.states)):
            why = refused(server, uri)
            if why:
                attached.problems.append(f"@{server}:{uri} was not attached: {why}")
                continue
            try:
                blocks = await self.read_blocks(server, uri, spill_dir=spill_dir)
            except McpError as exc:
                attached.problems.append(f"@{server}:{uri} was not attached: {exc}")
                continue
            attached.blocks.append({"type": "text", "text": f"[Contents of {server} resource {uri}]"})
            attached.blocks.extend(blocks)
            await self._subscribe(server, uri)
        return attached

    async def _subscribe(self, server: str, uri: str) -> None:
        manager = self._ready()
        state = manager.states.get(server)
        client = state.client if state is not None else None
        resources = client.server_capabilities.get("resources") if client is not None else None
        if client is None or (server, uri) in self._subscribed or not isinstance(resources, dict) \
                or not resources.get("subscribe"):
            return
        try:
            await client.request("resources/subscribe", {"uri": uri}, timeout_s=10.0)
            self._subscribed.add((server, uri))
        except McpError as exc:
            log.info("%s: resources/subscribe %s failed: %s", server, uri, exc)

    def on_notification(self, server: str) -> Callable[[str, Any], None]:
        def updated(_method: str, params: Any) -> None:
            uri = params.get("uri") if isinstance(params, dict) else None
            if not isinstance(uri, str) or (server, uri) not in self._subscribed:
                return
            if (server, uri) not in self._updated:
                self._updated.append((server, uri))
            if self.on_updated is not None:
                self.on_updated(server, uri)
        return updated

    def take_updates(self) -> list[tuple[str, str]]:
        """The subscribed resources updated since the last call."""
        updated, self._updated = self._updated, []
        return updated
