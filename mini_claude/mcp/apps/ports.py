"""What the MCP Apps session side (`AppsService`, service.py) needs from the session around it, as declared
protocols the session layer fills in: the MCP manager (`ViewServers`, `ResourceReader`), the servers' log
(`ServerLog`), the gate and hooks a view's tool call passes (`ViewCallGate`, answering a `ViewCallAdmission`),
sampling (`ViewSampler`) and the front end (`AppsFront`: the REPL or the Python API; `NoFront` when none is bound),
which is told each view shown (`ViewNotice`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from mini_claude.errors import ViewRefusedError
from mini_claude.mcp.apps.views import View
from mini_claude.mcp.protocol import CallToolResult
from mini_claude.mcp.server_state import McpToolEntry

__all__ = ["AppsFront", "NoFront", "ResourceReader", "ServerLog", "ViewCallAdmission", "ViewCallGate", "ViewNotice",
           "ViewSampler", "ViewServers"]

log = logging.getLogger(__name__)


class ResourceReader(Protocol):
    """A connected server as a view's resources are read from it (McpClient fits)."""

    async def read_resource(self, uri: str) -> list[dict[str, Any]]: ...


class ViewServers(Protocol):
    """The MCP manager as the service uses it (McpManager fits)."""

    def tools(self) -> list[McpToolEntry]: ...

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> CallToolResult: ...

    async def connected_client(self, server: str) -> ResourceReader: ...


class ServerLog(Protocol):
    def record(self, server: str, params: Any) -> None: ...


@dataclass(frozen=True)
class ViewNotice:
    """A view is on the page: where, and whether the browser was opened for it."""

    url: str
    server: str
    tool: str
    view_id: str
    opened: bool


@dataclass(frozen=True)
class ViewCallAdmission:
    allowed: bool
    reason: str = ""
    arguments: dict[str, Any] | None = None  # what runs instead (a hook's or the user's change), when allowed
    call_id: str = ""  # the call's id as hooks and the permission question see it


class ViewCallGate(Protocol):
    """The session's checks on a view's tool call, the same as on the model's (session/apps_gate.py)."""

    async def admit(self, entry: McpToolEntry, arguments: dict[str, Any]) -> ViewCallAdmission: ...

    async def after(self, entry: McpToolEntry, admission: ViewCallAdmission, result: CallToolResult) -> None: ...


class ViewSampler(Protocol):
    """Sampling as the host answers it for servers (mcp/host/sampling.py's SamplingService fits)."""

    def policy(self, server: str) -> str: ...  # ask | allow | deny

    async def create_message(self, server: str, params: Any, *, view: str = "") -> dict[str, Any]: ...


class AppsFront(Protocol):
    """The front end as views reach it: the REPL, or the Python API."""

    def view_shown(self, notice: ViewNotice) -> None: ...

    def note(self, text: str) -> None: ...  # one warning line (server text: the front end neutralises it)

    async def user_message(self, view: View, text: str) -> None: ...  # raise ViewRefusedError when it cannot

    async def confirm(self, question: str, *, server: str = "") -> bool: ...
    # a whole y/n question; False where nobody can answer; `server`: the MCP server whose view asks (the user may
    # refuse all its views)


class NoFront:
    """No front end bound: views are logged, messages and links refused."""

    def view_shown(self, notice: ViewNotice) -> None:
        log.info("MCP Apps view of %s/%s: %s", notice.server, notice.tool, notice.url)

    def note(self, text: str) -> None:
        log.warning("%s", text)

    async def user_message(self, view: View, text: str) -> None:
        raise ViewRefusedError("this session takes no messages from views")

    async def confirm(self, question: str, *, server: str = "") -> bool:
        return False
