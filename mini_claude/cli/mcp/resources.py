"""`mini-claude mcp resources NAME`, `mcp read NAME URI`, `mcp enable|disable NAME`, `mcp reset-project-choices`
(see command.py for the rest).
Server text is printed through `clean`; `--json` prints the server's objects as JSON (escaped by the encoder)."""

from __future__ import annotations

import sys
from pathlib import Path

from mini_claude.cli.terminal.render import clean, json_text
from mini_claude.mcp.manager import McpManager

__all__ = ["print_resource", "print_resources", "reset_project_choices", "switch"]


async def print_resources(manager: McpManager, server: str, as_json: bool) -> int:
    client = await manager.connected_client(server)
    if "resources" not in client.server_capabilities:
        print(clean(f"{server} offers no resources."))
        return 0
    resources = await client.list_resources()
    templates = await client.list_resource_templates()
    if as_json:
        print(json_text({"resources": resources, "resourceTemplates": templates}, indent=2))
        return 0
    for resource in resources:
        name = resource.get("name") or ""
        mime = f" ({resource['mimeType']})" if isinstance(resource.get("mimeType"), str) else ""
        print(clean(f"@{server}:{resource.get('uri')}  {name}{mime}"))
    for template in templates:
        print(clean(f"@{server}:{template.get('uriTemplate')}  {template.get('name') or ''} (template)"))
    if not resources and not templates:
        print(clean(f"{server} lists no resources."))
    return 0


async def print_resource(manager: McpManager, server: str, uri: str, as_json: bool) -> int:
    client = await manager.connected_client(server)
    contents = await client.read_resource(uri)
    if as_json:
        print(json_text(contents, indent=2))
        return 0
    for item in contents:
        if isinstance(item.get("text"), str):
            print(clean(item["text"]))
        else:
            size = len(item.get("blob") or "") * 3 // 4
            print(clean(f"[{item.get('mimeType') or 'binary'} content, about {size} bytes; --json shows it]"))
    return 0


async def switch(name: str, *, enabled: bool) -> int:
    """`mcp enable|disable NAME`: switch the server on or off for this project, then say what a session here would
    do with it — "Enabled" only when nothing else holds it back; otherwise what does and how to change that
    (exit 1)."""
    from mini_claude.cli.mcp.world import project_view
    from mini_claude.mcp.approval import ApprovalStore
    from mini_claude.mcp.config_edit import set_server_enabled
    from mini_claude.mcp.manager import ServerStatus
    from mini_claude.paths import user_home

    path = set_server_enabled(name, enabled, cwd=Path.cwd(), home=user_home())
    if not enabled:
        _say(f"Disabled MCP server {name!r} for this project ({path})")
        return 0
    after = await project_view(mcp_config=[], strict=False, trust_project_mcp=False, warn=False)
    cfg = after.config.servers.get(name)
    if cfg is None:  # it may come from --mcp-config in the runs to come: the switch applies to it then
        _say(f"Enabled MCP server {name!r} for this project ({path}); no server of that name is in this "
             f"folder's config files (one given with --mcp-config is switched on too)")
        return 0
    if cfg.disabled:
        _say(f"MCP server {name!r} stays off: its entry in {cfg.source} says \"disabled\": true (edit that file)")
        return 1
    held = after.held.get(name)
    if held is None:
        _say(f"Enabled MCP server {name!r} for this project ({path})")
        return 0
    status, reason = held
    store = ApprovalStore.default(after.env)
    if status is ServerStatus.DISABLED and store.lookup(after.cwd, cfg) == "denied":
        reason = ("you declined it for this project earlier; `mini-claude mcp reset-project-choices` forgets "
                  "that, and the next interactive session asks again")
    _say(f"MCP server {name!r} stays off: {reason}")
    return 1


def reset_project_choices() -> int:
    """`mcp reset-project-choices`: forget every approval and rejection of project servers (.mcp.json) made in this
    folder, as Claude Code's command does; the next session asks again."""
    from mini_claude.mcp.approval import ApprovalStore

    store = ApprovalStore.default()
    gone = store.reset(Path.cwd())
    if gone:
        _say(f"Forgot your choices for {len(gone)} project MCP server(s) here: {', '.join(gone)}. "
             f"You will be asked about them again in the next interactive session.")
    else:
        _say("No approvals or rejections of project MCP servers are remembered for this folder.")
    return 0


def _say(text: str) -> None:
    sys.stdout.write(clean(text) + "\n")
