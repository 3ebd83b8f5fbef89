"""Elicitation: a server asking the user for input (`elicitation/create`), in form mode or URL mode.

Form mode: the requested schema must be the spec's restricted one (a flat object of string / number / integer /
boolean / enum properties); the user's answer is checked against it (`mcp.elicitation.validate_content`) and asked
again, at most `MAX_FORM_TRIES` times, before the request is cancelled. URL mode: the user sees the URL (through
the UI's neutralising path) and decides; a server's later `notifications/elicitation/complete` is one notice line.
The -32042 "URL elicitation required" error of a tool call is turned into the same URL questions
(`url_elicitations`), so the user sees the URL and the model is told what happened. With nobody to ask every
request is declined.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mini_claude.errors import JsonRpcError
from mini_claude.mcp.elicitation import schema_defaults, validate_content
from mini_claude.mcp.host.ui import FormRequest, HostUI, UrlRequest

__all__ = ["ELICITATION_CAPABILITY", "URL_ELICITATION_REQUIRED", "ElicitationService"]

ELICITATION_CAPABILITY: dict[str, Any] = {"form": {}, "url": {}}
URL_ELICITATION_REQUIRED = -32042
INVALID_PARAMS = -32602
MAX_FORM_TRIES = 3
_PRIMITIVES = frozenset({"string", "number", "integer", "boolean", "array"})


class ElicitationService:
    """Serves `elicitation/create` for every server through one HostUI."""

    def __init__(self, ui: HostUI) -> None:
        self.ui = ui

    def handler(self, server: str) -> Callable[[Any], Any]:
        async def handle(params: Any) -> dict[str, Any]:
            return await self.elicit(server, params)
        return handle

    def on_complete(self, server: str) -> Callable[[str, Any], None]:
        def complete(_method: str, params: Any) -> None:
            ident = params.get("elicitationId") if isinstance(params, dict) else None
            self.ui.notice(server, f"finished the request it sent you to a web page for ({str(ident)[:80]})")
        return complete

    async def elicit(self, server: str, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict):
            raise JsonRpcError(INVALID_PARAMS, "elicitation/create params must be an object")
        message = _text(params.get("message"))
        mode = params.get("mode", "form")
        if mode == "url":
            url, ident = params.get("url"), params.get("elicitationId")
            if not isinstance(url, str) or not url or not isinstance(ident, str):
                raise JsonRpcError(INVALID_PARAMS, "elicitation/create: url mode needs url and elicitationId")
            return {"action": await self.ui.open_url(UrlRequest(server, message, url, ident))}
        if mode != "form":
            raise JsonRpcError(INVALID_PARAMS, f"elicitation/create: unknown mode {str(mode)[:40]!r}")
        schema = params.get("requestedSchema")
        problem = _schema_problem(schema)
        if problem is not None:
            raise JsonRpcError(INVALID_PARAMS, f"elicitation/create: requestedSchema {problem}")
        assert isinstance(schema, dict)
        request = FormRequest(server, message, schema)
        for _ in range(MAX_FORM_TRIES):
            answer = await self.ui.fill_form(request)
            if answer.action != "accept":
                return {"action": "decline" if answer.action == "decline" else "cancel"}
            content = {**schema_defaults(schema), **(answer.content or {})}
            if not validate_content(schema, content):
                return {"action": "accept", "content": content}
        return {"action": "cancel"}

    async def url_elicitations(self, server: str, error: JsonRpcError) -> list[str]:
        """Show the URLs of a -32042 error to the user; one line per URL saying what the user did, for the model."""
        data = error.data if isinstance(error.data, dict) else {}
        lines = []
        for item in data.get("elicitations") or ():
            if not isinstance(item, dict) or not isinstance(item.get("url"), str):
                continue
            message, ident = _text(item.get("message")), _text(item.get("elicitationId"))
            action = await self.ui.open_url(UrlRequest(server, message, item["url"], ident))
            outcome = {"accept": "the user opened it", "decline": "the user declined to open it"}.get(
                action, "the user dismissed it")
            lines.append(f"The server asked the user to open a web page ({item['url'][:200]}): {outcome}.")
        return lines


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "must be an object schema"
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return "properties must be an object"
    for name, prop in properties.items():
        if not isinstance(prop, dict) or (prop.get("type") not in _PRIMITIVES and "enum" not in prop \
                and "oneOf" not in prop):
            return f"property {str(name)[:40]!r} is not a primitive (string, number, integer, boolean, enum)"
    return None
