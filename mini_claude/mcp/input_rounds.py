"""The modern era's multi-round requests: a result that asks for input (`resultType` incomplete, with
`inputRequests` and/or `requestState`) is answered with the client's own server → client request handlers and
the original request re-sent (a fresh id, the original params plus this round's `inputResponses` and the echoed
`requestState`, nothing older), at most `MAX_INPUT_ROUNDS` times. A result without `resultType` is complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mini_claude.errors import ProtocolError
from mini_claude.mcp.handshakes import Handshakes
from mini_claude.mcp.jsonrpc import RequestHandler
from mini_claude.mcp.protocol import INCOMPLETE_RESULT_TYPES, MAX_INPUT_ROUNDS

__all__ = ["request_with_input_rounds"]


async def request_with_input_rounds(negotiator: Handshakes, method: str, params: Any, *, timeout: float | None,
                                    handlers: Mapping[str, RequestHandler], server: str) -> Any:
    """Send `method` in the modern era; answer each incomplete result from `handlers` and re-send, until complete."""
    original = dict(params) if isinstance(params, dict) else {}
    current = original
    for _ in range(MAX_INPUT_ROUNDS + 1):
        result = await negotiator.modern_request(method, current, timeout=timeout)
        if not isinstance(result, dict) or result.get("resultType") not in INCOMPLETE_RESULT_TYPES:
            return result  # no resultType means "complete"
        responses = await _answer_input_requests(method, result.get("inputRequests"), handlers, server)
        # each retry is a new request: the original params plus this round's answers, nothing older
        current = {k: v for k, v in original.items() if k not in ("inputResponses", "requestState")}
        if responses is not None:
            current["inputResponses"] = responses
        if "requestState" in result:
            current["requestState"] = result["requestState"]
    raise ProtocolError(f"{method}: server still asks for input after {MAX_INPUT_ROUNDS} rounds", server=server)


async def _answer_input_requests(method: str, requests: Any, handlers: Mapping[str, RequestHandler],
                                 server: str) -> dict[str, Any] | None:
    """Results of an incomplete result's `inputRequests`, from our server → client request handlers."""
    if requests is None:
        return None
    if not isinstance(requests, dict):
        raise ProtocolError(f"{method}: inputRequests is not an object: {requests!r:.200}", server=server)
    responses: dict[str, Any] = {}
    for key, request in requests.items():
        wanted = request.get("method") if isinstance(request, dict) else None
        if not isinstance(wanted, str):
            raise ProtocolError(f"{method}: input request {key!r} has no method", server=server)
        handler = handlers.get(wanted)
        if handler is None:
            raise ProtocolError(f"{method}: server asks for {wanted} input, which this client does not "
                                "provide", server=server)
        responses[key] = await handler(request.get("params"))
    return responses
