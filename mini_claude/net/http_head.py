"""One HTTP/1.x request head, read strictly, for the loopback servers mini-claude runs itself (the MCP Apps view
server, mcp/apps/loopback.py; `mcp serve --port`, mcp/transports/http_server.py).

`parse_request_head(head, single=...)`: the request line must be `METHOD /target HTTP/1.x` (origin-form only: these
servers are nobody's proxy), each header line `Name: value` with nothing between the name and its colon and no
folded continuation line (RFC 9112 §5: both are refused, since two readers could split them differently). Names are
lower-cased; a name in `single` (Host, Origin, Content-Length, …) may appear once; other repeated names are joined
with ", " as RFC 9110 §5.3 allows. Anything else raises `HeadError` with what was wrong (the caller answers 400).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

__all__ = ["HeadError", "RequestHead", "parse_request_head"]


class HeadError(ValueError):
    """A request head that is not a well-formed HTTP/1.x head; the message says what was wrong."""


@dataclass(frozen=True)
class RequestHead:
    method: str
    target: str
    headers: dict[str, str]


def parse_request_head(head: bytes, *, single: Collection[str] = ()) -> RequestHead:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1].startswith("/"):
        raise HeadError("not an HTTP/1.x request line with an origin-form target")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        raw, sep, value = line.partition(":")
        name = raw.lower()
        if not sep or not name or raw != raw.strip() or any(c in name for c in " \t"):
            raise HeadError("a malformed header line")
        if name in headers and name in single:
            raise HeadError(f"the {name} header is repeated")
        headers[name] = f"{headers[name]}, {value.strip()}" if name in headers else value.strip()
    return RequestHead(parts[0], parts[1], headers)
