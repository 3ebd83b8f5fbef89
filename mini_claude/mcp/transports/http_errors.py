"""What an HTTP answer that is not a plain success means, for the Streamable HTTP and legacy SSE transports.

It owns turning a non-2xx response into an `HttpStatusError` (with a short, one-line body excerpt and the
`WWW-Authenticate` challenge), telling when a Streamable HTTP error carries a JSON-RPC error reply instead (then
delivered as that request's answer), and the small readers both need: the media type, a bounded body excerpt, a
body read up to a cap (`read_bounded`: Content-Length is believed only to refuse early, never to allocate),
tolerant JSON decoding (depth-bounded). httpx exceptions (no answer at all) are described by `mini_claude.net.errors`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mini_claude.errors import HttpSessionExpiredError, HttpStatusError
from mini_claude.mcp.transports.json_depth import bound_message, refuse_undecodable
from mini_claude.net.bodies import read_capped

if TYPE_CHECKING:
    import httpx

__all__ = [
    "BODY_EXCERPT_CHARS",
    "MAX_ERROR_BODY_BYTES",
    "decode_json",
    "error_reply",
    "may_carry_error_reply",
    "media_type",
    "one_line",
    "read_bounded",
    "read_excerpt",
    "session_status_error",
    "status_error",
]

BODY_EXCERPT_CHARS = 200
MAX_ERROR_BODY_BYTES = 256 * 1024  # an HTTP error's JSON body read to look for a JSON-RPC error reply
_EXCERPT_READ_BYTES = BODY_EXCERPT_CHARS * 4  # enough bytes for BODY_EXCERPT_CHARS characters of UTF-8


def media_type(response: httpx.Response) -> str:
    """The response's media type, lower-case, without parameters ("" when there is none)."""
    value: str = response.headers.get("content-type", "")
    return value.split(";", 1)[0].strip().lower()


def decode_json(text: str) -> Any:
    """Decode one JSON message; raises ValueError when it is not JSON. A message nested deeper than the readers
    accept is returned as a `RefusedMessage` (see json_depth), which the session turns into that request's error."""
    try:
        message = json.loads(text)
    except RecursionError as exc:
        refused = refuse_undecodable(text)
        if refused is None:
            raise ValueError("JSON nested too deeply") from exc
        return refused
    return bound_message(message, text)


def one_line(text: str, limit: int = BODY_EXCERPT_CHARS) -> str:
    """`text` on one line (whitespace runs become one space), at most `limit` characters."""
    return " ".join(text.split())[:limit]


async def read_bounded(response: httpx.Response, limit: int) -> tuple[bytes, int | None]:
    """(the body, None) when it is at most `limit` bytes; else (what was read, its size): the declared
    Content-Length when it is over `limit` (then nothing is read), or the bytes read when reading stopped. Raises
    httpx.HTTPError (the caller translates it)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return b"", int(declared)
    return await read_capped(response, limit)


async def read_excerpt(response: httpx.Response) -> str:
    """Up to BODY_EXCERPT_CHARS of the body, on one line (an error page must not flood the message)."""
    import httpx

    data = b""
    try:
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) >= _EXCERPT_READ_BYTES:
                break
    except httpx.HTTPError:
        pass  # an excerpt is a courtesy: the status already says what happened
    return one_line(data.decode("utf-8", "replace"))


async def status_error(response: httpx.Response, what: str, server: str | None, *,
                       body: str | None = None) -> HttpStatusError:
    """An HttpStatusError for a non-2xx response (reads at most a little of the body, unless given `body`)."""
    excerpt = one_line(body) if body is not None else await read_excerpt(response)
    status = response.status_code
    text = f"{what}: HTTP {status} {response.reason_phrase}".rstrip()
    if excerpt:
        text += f": {excerpt}"
    return HttpStatusError(text, server=server, status=status, body_excerpt=excerpt,
                           www_authenticate=response.headers.get("www-authenticate"))


def session_status_error(error: HttpStatusError, what: str, *, has_session: bool) -> HttpStatusError:
    """`error` as Streamable HTTP reads it: a 404 while we hold a session id means the server forgot the session
    (`HttpSessionExpiredError`, which ends the connection); anything else stays as it is."""
    if error.status != 404 or not has_session:
        return error
    # (the session id is not shown: it is a bearer of the session)
    return HttpSessionExpiredError(
        f"{what}: the server no longer knows our session (HTTP 404): the session expired; reconnect to start a "
        "new one", server=error.server, status=404, body_excerpt=error.body_excerpt)


def may_carry_error_reply(response: httpx.Response, request_id: Any, *, has_session: bool) -> bool:
    """Whether an HTTP error answer to a request's POST may be a JSON-RPC error reply worth reading: a JSON body,
    and a status that does not mean something of its own (401/403: authorization; 404 with a session: it expired)."""
    status = response.status_code
    return (request_id is not None and status not in (401, 403) and not (status == 404 and has_session)
            and media_type(response) == "application/json")


def error_reply(text: str, request_id: Any, *, has_session: bool) -> dict[str, Any] | None:
    """The JSON-RPC error response to `request_id` that an HTTP error body holds (its id set to `request_id`),
    or None when the body is something else.

    A null id answers "this request" only before a session exists (-32022 and friends); with a session it is the
    server refusing the session itself (the TS SDK's 400 for an unknown one), which the caller must see as an HTTP
    status, so that a new session is started."""
    try:
        reply = decode_json(text)
    except ValueError:
        return None
    accepted = (request_id,) if has_session else (None, request_id)
    if (not isinstance(reply, dict) or not isinstance(reply.get("error"), dict) or "result" in reply
            or reply.get("id") not in accepted):
        return None
    return {**reply, "id": request_id}
