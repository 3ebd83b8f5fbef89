"""HTTP connections shared by the model clients of many sessions in one process (the Python API's sessions).

A session's model client normally owns its `httpx.AsyncClient` and closes it when the session ends. Given an
`HttpPool`, it takes the pool's client for its API's origin instead — one per base URL, with the same TLS context,
timeouts and fixed headers every session would have built — so sixteen sessions talking to one API hold one pool of
connections, not sixteen; a session's end leaves the shared client open and `HttpPool.aclose` closes them all.
An `httpx.AsyncClient` belongs to the event loop it was first used in: keep one pool per loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpPool"]


class HttpPool:
    def __init__(self) -> None:
        self._clients: dict[str, httpx.AsyncClient] = {}

    def client(self, key: str, make: Callable[[], httpx.AsyncClient]) -> httpx.AsyncClient:
        """The shared client for `key` (the API's base URL), made by `make` the first time."""
        client = self._clients.get(key)
        if client is None or client.is_closed:
            client = self._clients[key] = make()
        return client

    def __len__(self) -> int:
        return len(self._clients)

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()
