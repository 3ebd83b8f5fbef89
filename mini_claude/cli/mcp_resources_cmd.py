"""`mini-claude mcp resources NAME`, `mcp read NAME URI`, `mcp enable|disable NAME` (see mcp_cmd.py for the rest).
Server text is printed through `clean`; `--json` prints the server's objects as JSON (escaped by the encoder)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mini_claude.cli.render import clean
from mini_claude.mcp.manager import McpManager

__all__ = ["print_resource", "print_resources", "switch"]


async def print_resources(manager: McpManager, server: str, as_json: bool) -> int:
    client = await manager.connected_client(server)
    if "resources" not in client.server_capabilities:
        print(clean(f"{server} offers no resources."))
        return 0
    resources = await client.list_resources()
    templates = await client.list_resource_templates()
    if as_json:
        print(json.dumps({"resources": resources, "resourceTemplates": templates}, indent=2))
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
        print(json.dumps(contents, indent=2))
        return 0
    for item in contents:
        if isinstance(item.get("text"), str):
            print(clean(item["text"]))
        else:
            size = len(item.get("blob") or "") * 3 // 4
            print(clean(f"[{item.get('mimeType') or 'binary'} content, about {size} bytes; --json shows it]"))
    return 0


def switch(name: str, *, enabled: bool) -> int:
    from mini_claude.mcp.config_edit import set_server_enabled
    from mini_claude.paths import user_home

    path = set_server_enabled(name, enabled, cwd=Path.cwd(), home=user_home())
    sys.stdout.write(clean(f"{'Enabled' if enabled else 'Disabled'} MCP server {name!r} for this project "
                           f"({path})") + "\n")
    return 0
