"""The floor: the least a correct asyncio stdio JSON-RPC client can do (no validation, no timeouts, no cleanup).

Example:

    client = RawClient([sys.executable, "bench/server.py"])
    await client.start()
    await client.request("initialize", {...})
    tools = (await client.request("tools/list", {}))["tools"]
    await client.close()
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

LINE_LIMIT_BYTES = 1 << 30  # StreamReader's default (64 KiB) would refuse a big result


class RawClient:
    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.proc: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 1
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LINE_LIMIT_BYTES)
        self._reader = asyncio.create_task(self._read_loop())

    async def _read_loop(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            future = self._pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"]))
                else:
                    future.set_result(message.get("result"))
        for future in self._pending.values():
            future.set_exception(ConnectionError("server closed stdout"))

    async def request(self, method: str, params: Any = None) -> Any:
        assert self.proc is not None and self.proc.stdin is not None
        request_id = self._next_id
        self._next_id += 1
        future = self._pending[request_id] = asyncio.get_running_loop().create_future()
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                          "params": params}).encode() + b"\n")
        return await future

    def notify(self, method: str, params: Any = None) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode() + b"\n")

    async def close(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            await self.proc.wait()
        if self._reader is not None:
            await self._reader
