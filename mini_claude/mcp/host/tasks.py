"""Task-augmented tool calls (2025-11-25 tasks): how a tool with `execution.taskSupport: "required"` is called.

`tools/call` carries `task: {ttl}` and is answered at once with a task; the task is polled with `tasks/get` at the
server's `pollInterval` (bounded to [`MIN_POLL_S`, `MAX_POLL_S`]) and each status change is reported; once it is
`completed` or `failed` — or `input_required`, when the server wants an answer through our elicitation or
sampling handlers while we wait — `tasks/result` returns the tool's result (polling goes on meanwhile). The idle
timeout counts from the last status change and pauses while the task waits for the user; on timeout or
interruption the server gets `tasks/cancel` (best effort, bounded).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from mini_claude.errors import McpError, McpTimeoutError, ProtocolError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.protocol import CallToolResult, is_number

__all__ = ["TASK_TTL_MS", "TaskRunner"]

log = logging.getLogger(__name__)

TASK_TTL_MS = 3_600_000
MIN_POLL_S = 0.05
MAX_POLL_S = 5.0
REQUEST_TIMEOUT_S = 30.0
CANCEL_TIMEOUT_S = 5.0
TERMINAL = frozenset({"completed", "failed", "cancelled"})

StatusCallback = Callable[[str, str, str | None], None]  # (tool, status, status message)


class TaskRunner:
    """A `ToolRunner` (mini_claude.mcp.manager) for task-augmented calls; `on_status` hears each status change.
    `result_timeout_s` bounds the wait for `tasks/result` (the manager's hard cap applies on top)."""

    def __init__(self, on_status: StatusCallback | None = None, *, result_timeout_s: float = 3600.0) -> None:
        self.on_status = on_status
        self.result_timeout_s = result_timeout_s

    async def __call__(self, client: McpClient, tool: str, arguments: dict[str, Any],
                       timeout_s: float) -> CallToolResult:
        params = {"name": tool, "arguments": arguments, "task": {"ttl": TASK_TTL_MS}}
        created = await client.request("tools/call", params, timeout_s=timeout_s)
        task = created.get("task") if isinstance(created, dict) else None
        if not isinstance(task, dict):  # a server may answer a task request directly
            return CallToolResult.from_wire(created, tool=tool, server=client.name)
        task_id = task.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise ProtocolError(f"tools/call {tool}: the task has no taskId", server=client.name)
        try:
            result = await self._follow(client, tool, task_id, task, timeout_s)
        except (asyncio.CancelledError, TimeoutError, McpTimeoutError):
            await self._cancel(client, task_id)
            raise
        return CallToolResult.from_wire(result, tool=tool, server=client.name)

    async def _follow(self, client: McpClient, tool: str, task_id: str, task: dict[str, Any],
                      timeout_s: float) -> Any:
        """Poll the task, reporting each change, and fetch `tasks/result` once it has ended or needs input (the
        server asks its questions while that request is open). The idle clock restarts at each status change and
        stops while the task waits for the user."""
        loop = asyncio.get_running_loop()
        status, message = _status(task)
        self._report(tool, status, message)
        changed_at = loop.time()
        result: asyncio.Future[Any] | None = None
        try:
            while True:
                if status == "cancelled":
                    raise McpError(f"the server cancelled the task running {tool}"
                                   f"{': ' + message if message else ''}", server=client.name)
                if result is None and (status in TERMINAL or status == "input_required"):
                    result = asyncio.ensure_future(client.request("tasks/result", {"taskId": task_id},
                                                                  timeout_s=self.result_timeout_s))
                if result is not None:
                    await asyncio.wait({result}, timeout=_poll_s(task))
                    if result.done():
                        return result.result()
                else:
                    await asyncio.sleep(_poll_s(task))
                if status != "input_required" and loop.time() - changed_at > timeout_s:
                    raise McpTimeoutError(f"task {task_id} of {tool}", timeout_s, server=client.name)
                if status in TERMINAL:
                    continue  # only its result is awaited now
                task = await client.request("tasks/get", {"taskId": task_id}, timeout_s=REQUEST_TIMEOUT_S)
                if not isinstance(task, dict):
                    raise ProtocolError(f"tasks/get {task_id}: not a task", server=client.name)
                now = _status(task)
                if now != (status, message):
                    (status, message), changed_at = now, loop.time()
                    self._report(tool, status, message)
        finally:
            if result is not None and not result.done():
                result.cancel()

    def _report(self, tool: str, status: str, message: str | None) -> None:
        if self.on_status is not None:
            try:
                self.on_status(tool, status, message)
            except Exception:
                log.exception("task status callback failed")

    async def _cancel(self, client: McpClient, task_id: str) -> None:
        with contextlib.suppress(Exception):
            await asyncio.shield(client.request("tasks/cancel", {"taskId": task_id}, timeout_s=CANCEL_TIMEOUT_S))


def _status(task: dict[str, Any]) -> tuple[str, str | None]:
    status = task.get("status")
    message = task.get("statusMessage")
    return (status if isinstance(status, str) else "working"), (message if isinstance(message, str) else None)


def _poll_s(task: dict[str, Any]) -> float:
    interval = task.get("pollInterval")
    seconds = interval / 1000.0 if is_number(interval) else 1.0
    return min(max(seconds, MIN_POLL_S), MAX_POLL_S)
