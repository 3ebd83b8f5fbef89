"""`SkillRegistry`: every skill the agent may load, from every origin, under names the model can use.

Origins: the agent's own skills (`.claude/skills` in the project, then the user's), and the skills each ready MCP
server lists (SEP-2640). Names follow the SEP's per-origin namespacing, so an MCP skill never shadows another
origin's: a local skill keeps its name (a project skill wins over a same-named user skill); an MCP skill is
`<server>:<name>`, and when two entries of one server share a name each becomes `<server>:<skill path>`.

The registry only ever holds listings (name + description). Content is fetched when the model loads a skill
(`load`) or reads one of its files (`read_file`); MCP content is verified by `mini_claude.mcp.skills.McpSkill`.

`server_changed(name, client)` (wired to the MCP manager's change callback) lists a newly ready server's skills
in the background and drops a server's skills when it goes down; `settle()` waits for listings in flight. A remote
server whose connection was lost (`server_lost`) keeps its skills listed: the manager reconnects it on the next
use, so loading one of its skills asks `client_for(server)` (the manager's `connected_client`) for a live client
first. A reconnected server's skills stay listed until its new listing replaces them; an unchanged entry keeps
its verified content.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from mini_claude.errors import McpError, ToolError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.skills import McpSkill, SkillEntry, list_skills, supports_skills
from mini_claude.skills.local import LocalSkill

__all__ = ["DEFAULT_SETTLE_TIMEOUT_S", "AvailableSkill", "ClientFor", "SkillRegistry"]

log = logging.getLogger(__name__)

DEFAULT_SETTLE_TIMEOUT_S = 10.0

ClientFor = Callable[[str], Awaitable[McpClient]]  # server name -> its connected client (reconnecting it)


@dataclass(frozen=True)
class AvailableSkill:
    """One loadable skill: `name` is what the model passes to the Skill tool; `origin` says where it is from
    ("project", "user", or "mcp:<server>"); `source` is the LocalSkill or McpSkill that loads it."""

    name: str
    description: str
    origin: str
    source: LocalSkill | McpSkill

    @property
    def location(self) -> str:
        """Where relative paths in the skill resolve: its directory or its `skill://` root."""
        return self.source.location if isinstance(self.source, LocalSkill) else self.source.entry.root


class SkillRegistry:
    """Skills by name. Example:

        registry = SkillRegistry(discover_local_skills(project, home))
        registry.server_changed("docs", client)   # lists the server's skills in the background
        await registry.settle()
        text = await registry.load("docs:pdf-processing")
    """

    def __init__(self, local: Iterable[LocalSkill] = (), *, client_for: ClientFor | None = None) -> None:
        self._client_for = client_for
        self._local: dict[str, LocalSkill] = {}
        for skill in local:
            if skill.name in self._local:
                log.info("skill %r in %s is shadowed by the one in %s", skill.name, skill.directory,
                         self._local[skill.name].directory)
                continue
            self._local[skill.name] = skill
        self._servers: dict[str, tuple[McpClient, list[McpSkill]]] = {}
        self._listing: dict[str, asyncio.Task[None]] = {}
        self._listed_client: dict[str, McpClient] = {}

    # ---- the listing -------------------------------------------------------------------------------------------

    def available(self) -> list[AvailableSkill]:
        """Local skills (by name), then each server's (by server, then name)."""
        result = [AvailableSkill(s.name, s.description, s.origin, s) for s in self._local.values()]
        for server in sorted(self._servers):
            _client, skills = self._servers[server]
            counts: dict[str, int] = {}
            for skill in skills:
                counts[skill.entry.name] = counts.get(skill.entry.name, 0) + 1
            named = []
            for skill in skills:
                label = skill.entry.name if counts[skill.entry.name] == 1 else skill.entry.path
                named.append(AvailableSkill(f"{server}:{label}", skill.entry.description, f"mcp:{server}", skill))
            result.extend(sorted(named, key=lambda s: s.name))
        return result

    def get(self, name: str) -> AvailableSkill | None:
        for skill in self.available():
            if skill.name == name:
                return skill
        return None

    def set_server_skills(self, server: str, client: McpClient, entries: Iterable[SkillEntry]) -> None:
        """Replace a server's skills. An entry equal to one already held keeps its McpSkill (its verified
        content, or its refusal: the entry pins every file's digest), now read through `client`; a changed
        entry starts over (it must be verified afresh)."""
        previous = self._servers.get(server, (client, []))[1]
        skills = [next((s for s in previous if s.entry == entry), None) or McpSkill(client, entry)
                  for entry in _unique(entries)]
        for skill in skills:
            skill.client = client
        if skills:
            self._servers[server] = (client, skills)
        else:
            self._servers.pop(server, None)

    def drop_server(self, server: str) -> None:
        self._servers.pop(server, None)
        self._listed_client.pop(server, None)
        task = self._listing.pop(server, None)
        if task is not None:
            task.cancel()

    async def refresh_server(self, server: str, client: McpClient) -> None:
        """List the server's skills now (nothing when it does not declare the extension). Errors are logged."""
        if not supports_skills(client):
            self.set_server_skills(server, client, [])
            return
        try:
            entries = await list_skills(client)
        except McpError as exc:
            log.warning("%s: listing skills failed: %s", server, exc)
            return
        self.set_server_skills(server, client, entries)

    def server_changed(self, server: str, client: McpClient | None) -> None:
        """A server became ready (`client`) or went down (None). A client already listed is not listed again;
        the skills of a server listed before stay until the new client's listing replaces them."""
        if client is None:
            self.drop_server(server)
            return
        if self._listed_client.get(server) is client:
            return
        task = self._listing.pop(server, None)
        if task is not None:
            task.cancel()
        self._listed_client[server] = client
        if not supports_skills(client):
            self._servers.pop(server, None)
            return
        task = asyncio.get_running_loop().create_task(self.refresh_server(server, client),
                                                      name=f"skills-list-{server}")
        self._listing[server] = task
        task.add_done_callback(lambda t: self._listing.pop(server, None) if self._listing.get(server) is t
                               else None)

    def server_lost(self, server: str) -> None:
        """A remote server's connection was lost (it reconnects on its next use): its skills stay listed."""
        log.debug("%s: connection lost; its skills stay listed (loading one reconnects)", server)

    async def settle(self, timeout_s: float = DEFAULT_SETTLE_TIMEOUT_S) -> None:
        """Wait (bounded) for the skill listings in flight."""
        tasks = [t for t in self._listing.values() if not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)

    async def aclose(self) -> None:
        tasks = list(self._listing.values())
        self._listing.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # ---- loading -----------------------------------------------------------------------------------------------

    def _require(self, name: str) -> AvailableSkill:
        skill = self.get(name)
        if skill is None:
            known = ", ".join(s.name for s in self.available()) or "none"
            raise ToolError(f"unknown skill {name!r} (available: {known})")
        return skill

    async def load(self, name: str) -> str:
        """The skill's SKILL.md text (verified for MCP skills). Raises ToolError or McpError
        (SkillVerificationError for a refused skill)."""
        skill = self._require(name)
        if isinstance(skill.source, McpSkill) and not skill.source.loaded:
            await self._connect(skill.source)
        return await skill.source.load()

    async def read_file(self, name: str, path: str) -> str:
        """A supporting file of the skill (relative to its root, or a URI for MCP skills)."""
        skill = self._require(name)
        if isinstance(skill.source, McpSkill):
            await self._connect(skill.source)
        return await skill.source.read_file(path)

    async def _connect(self, skill: McpSkill) -> None:
        """Give a skill whose connection is gone the server's live client (the manager reconnects a lost one).
        A refused skill reads nothing, so it needs none."""
        if skill.client.is_connected or skill.refused is not None or self._client_for is None:
            return
        server = skill.entry.server
        client = await self._client_for(server)
        held = self._servers.get(server)
        if held is not None:
            self._servers[server] = (client, held[1])
            for other in held[1]:
                other.client = client
        skill.client = client


def _unique(entries: Iterable[SkillEntry]) -> list[SkillEntry]:
    """Entries with a repeated `uri` keep the first (a skill is identified by its uri within a server)."""
    seen: set[str] = set()
    result = []
    for entry in entries:
        if entry.uri in seen:
            log.warning("%s: skills/list lists %s twice; keeping the first", entry.server, entry.uri)
            continue
        seen.add(entry.uri)
        result.append(entry)
    return result
