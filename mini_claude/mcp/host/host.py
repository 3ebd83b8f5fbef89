"""`McpHost`: the client side of every connection that is not a call we make — what servers may ask of us.

For each new client (startup and every reconnect, through `McpManager(client_setup=host.setup,
client_ready=host.ready)`) it registers the server → client request handlers and declares exactly the
capabilities they serve: `roots` (listChanged), `sampling` (with tools), `elicitation` (form and url); and it
listens to `notifications/message` (server logs) and `notifications/elicitation/complete`. Once connected it sends
the server's configured `logLevel`. Resources (`@server:uri`, subscriptions) and prompts (slash commands) are read
through the manager it is bound to. The policies live in the services (roots.py, sampling.py, elicit.py,
server_log.py, resources.py, prompts.py); the person is reached only through the `HostUI` (ui.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from mini_claude.errors import McpError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.host.elicit import ELICITATION_CAPABILITY, ElicitationService
from mini_claude.mcp.host.prompts import PromptService
from mini_claude.mcp.host.resources import ResourceService
from mini_claude.mcp.host.roots import Roots
from mini_claude.mcp.host.sampling import SamplingService, sampling_capability
from mini_claude.mcp.host.server_log import ServerLogs
from mini_claude.mcp.host.ui import HostUI
from mini_claude.mcp.manager import McpManager
from mini_claude.mcp.transports.base import SupportsStderrSink
from mini_claude.models.base import Model

__all__ = ["McpHost", "sampling_policy"]

log = logging.getLogger(__name__)


def sampling_policy(cfg: ServerConfig) -> str:
    """The server's sampling policy; a repository's own config cannot grant itself `allow` (it asks instead)."""
    if cfg.sampling == "allow" and cfg.scope == "project":
        return "ask"
    return cfg.sampling


class McpHost:
    """Serves what every server asks of the agent, through one HostUI.

        host = McpHost(ui, roots=[cwd], model=lambda: agent.model, log_dir=state / "mcp-logs")
        manager = McpManager(servers, client_setup=host.setup, client_ready=host.ready)
    """

    def __init__(self, ui: HostUI, *, roots: Iterable[Path], model: Callable[[], Model | None],
                 log_dir: Path) -> None:
        self.ui = ui
        self.roots = Roots(roots)
        self.sampling = SamplingService(model, ui)
        self.elicitation = ElicitationService(ui)
        self.logs = ServerLogs(log_dir, ui)
        self.resources = ResourceService(on_updated=lambda server, uri: ui.notice(
            server, f"resource {uri} changed; the model sees it with your next message"))
        self.prompts = PromptService()
        self._clients: dict[str, McpClient] = {}

    def setup(self, cfg: ServerConfig, client: McpClient) -> None:
        """Before connect: handlers and the capabilities they serve."""
        name = cfg.name
        self.sampling.policies[name] = sampling_policy(cfg)
        client.set_request_handler("roots/list", self.roots.handler())
        client.set_request_handler("sampling/createMessage", self.sampling.handler(name),
                                   capability=sampling_capability())
        client.set_request_handler("elicitation/create", self.elicitation.handler(name),
                                   capability=ELICITATION_CAPABILITY)
        client.on_notification("notifications/message", self.logs.on_message(name))
        client.on_notification("notifications/elicitation/complete", self.elicitation.on_complete(name))
        client.on_notification("notifications/resources/updated", self.resources.on_notification(name))
        client.on_notification("notifications/prompts/list_changed", lambda _m, _p: self.prompts.forget(name))
        client.on_notification("notifications/resources/list_changed",
                               lambda _m, _p: self.resources.refresh(name))  # a coroutine: the client runs it
        self.prompts.forget(name)  # a new connection lists its prompts again
        if isinstance(client.transport, SupportsStderrSink):  # its stderr kept in its log from the first byte
            client.transport.on_stderr = self.logs.stderr_sink(name)
        self._clients[name] = client

    def bind(self, manager: McpManager) -> None:
        """The manager whose servers this host serves (resources and prompts are read through it)."""
        self.resources.bind(manager)
        self.prompts.bind(manager)

    async def ready(self, cfg: ServerConfig, client: McpClient) -> None:
        """Once connected: the configured log level, to a server that declares logging."""
        if cfg.log_level is None or "logging" not in client.server_capabilities:
            return
        try:
            await client.request("logging/setLevel", {"level": cfg.log_level}, timeout_s=10.0)
        except McpError as exc:  # a server that will not filter its logs still works
            log.info("%s: logging/setLevel %s refused: %s", cfg.name, cfg.log_level, exc)

    async def add_root(self, folder: Path) -> bool:
        """Add a root and tell every connected server; False when it was one already."""
        if not self.roots.add(folder):
            return False
        for name, client in list(self._clients.items()):
            if not client.is_connected:
                continue
            try:
                await client.notify_roots_changed()
            except McpError as exc:
                log.info("%s: could not send roots/list_changed: %s", name, exc)
        return True
