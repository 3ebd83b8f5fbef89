#!/usr/bin/env python3
"""A small stdlib stdio MCP server that serves skills (SEP-2640), some of them tampered with, for the tests.

    python skills_server.py [--log PATH] [--tamper MODE] [--no-extension] [--page-size N]

--log PATH       append one JSON line per request received: {"method": ..., "uri": ...}
--tamper MODE    what the server does to skill "pdf-processing" (the others stay good):
                 digest       SKILL.md served with different bytes of the same size (listed digest/size: originals)
                 size         SKILL.md served with extra bytes
                 frontmatter  SKILL.md's description changed, and the listing's digest/size match the served bytes
                 file-digest  SKILL.md good, references/FORMS.md served changed
                 dynamic      the entry lists no resources
--no-extension   do not declare the skills extension (skills/list is still answered, to catch a client asking)
--page-size N    skills/list pages of N entries (nextCursor)

Skills: pdf-processing (SKILL.md, references/FORMS.md), git-workflow (SKILL.md with metadata and a multi-line
description), acme/billing/refunds and acme/support/refunds (two skills named "refunds").
Exits on stdin EOF.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from typing import Any

EXTENSION = "io.modelcontextprotocol/skills"

PDF_SKILL = """---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
---

Skill body. See references/FORMS.md for the forms.
"""
PDF_FORMS = "Supporting content: the forms.\n"
GIT_SKILL = """---
name: git-workflow
description: Follow this team's Git conventions
  for branching and commits
license: Apache-2.0
metadata:
  version: "2.1.0"
---

Always branch from main.
"""


def refunds(team: str) -> str:
    return f"---\nname: refunds\ndescription: Refunds for {team}\n---\n\n{team} refunds body.\n"


FILES: dict[str, str] = {
    "skill://pdf-processing/SKILL.md": PDF_SKILL,
    "skill://pdf-processing/references/FORMS.md": PDF_FORMS,
    "skill://git-workflow/SKILL.md": GIT_SKILL,
    "skill://acme/billing/refunds/SKILL.md": refunds("billing"),
    "skill://acme/support/refunds/SKILL.md": refunds("support"),
}
SKILLS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("skill://pdf-processing/SKILL.md",
     {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
     ["skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md"]),
    ("skill://git-workflow/SKILL.md",
     {"name": "git-workflow", "description": "Follow this team's Git conventions for branching and commits",
      "license": "Apache-2.0", "metadata": {"version": "2.1.0"}},
     ["skill://git-workflow/SKILL.md"]),
    ("skill://acme/billing/refunds/SKILL.md", {"name": "refunds", "description": "Refunds for billing"},
     ["skill://acme/billing/refunds/SKILL.md"]),
    ("skill://acme/support/refunds/SKILL.md", {"name": "refunds", "description": "Refunds for support"},
     ["skill://acme/support/refunds/SKILL.md"]),
]


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def served(uri: str, tamper: str | None) -> str:
    text = FILES[uri]
    if uri == "skill://pdf-processing/SKILL.md":
        if tamper == "digest":
            return text.replace("Skill body.", "Evil body!!")
        if tamper == "size":
            return text + "extra bytes the entry did not account for\n"
        if tamper == "frontmatter":
            return text.replace("description: Extract, fill, and assemble PDF documents",
                                "description: Exfiltrate credentials")
    if uri == "skill://pdf-processing/references/FORMS.md" and tamper == "file-digest":
        return text.replace("forms", "FORMS")
    return text


def entries(tamper: str | None) -> list[dict[str, Any]]:
    result = []
    for uri, frontmatter, files in SKILLS:
        resources = []
        for file_uri in files:
            # the listing describes the untampered files, except in "frontmatter" mode, whose listing matches
            # the bytes served (only the front matter comparison can catch it)
            text = served(file_uri, tamper) if tamper == "frontmatter" else FILES[file_uri]
            resources.append({"uri": file_uri, "digest": digest(text), "size": len(text.encode("utf-8"))})
        entry: dict[str, Any] = {"uri": uri, "frontmatter": frontmatter, "resources": resources}
        if tamper == "dynamic" and uri.startswith("skill://pdf-processing/"):
            del entry["resources"]
        result.append(entry)
    return result


def handle(method: str, params: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    if method == "initialize":
        capabilities: dict[str, Any] = {"resources": {}}
        if not args.no_extension:
            capabilities["extensions"] = {EXTENSION: {}}
        return {"protocolVersion": params.get("protocolVersion", "2025-11-25"), "capabilities": capabilities,
                "serverInfo": {"name": "skills-server", "version": "1.0.0"}}
    if method == "tools/list":
        return {"tools": []}
    if method == "skills/list":
        items = entries(args.tamper)
        if not args.page_size:
            return {"skills": items}
        start = int(params.get("cursor") or 0)
        page: dict[str, Any] = {"skills": items[start:start + args.page_size]}
        if start + args.page_size < len(items):
            page["nextCursor"] = str(start + args.page_size)
        return page
    if method == "resources/read":
        uri = params.get("uri")
        if uri not in FILES:
            raise KeyError(uri)
        return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": served(uri, args.tamper)}]}
    if method == "ping":
        return {}
    raise LookupError(method)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    parser.add_argument("--tamper", choices=["digest", "size", "frontmatter", "file-digest", "dynamic"])
    parser.add_argument("--no-extension", action="store_true")
    parser.add_argument("--page-size", type=int, default=0)
    args = parser.parse_args()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, msg_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if args.log and method:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"method": method, "uri": params.get("uri")}) + "\n")
        if msg_id is None or method is None:
            continue
        try:
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "result": handle(method, params, args)}
        except KeyError as exc:
            reply = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32002, "message": f"no resource {exc}"}}
        except LookupError:
            reply = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": "method not found"}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
