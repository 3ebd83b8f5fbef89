"""Root test configuration: a mock model server per test, and a tiny retry delay for the model backends.

Helpers shared across folders live in importable modules (`tests/peers.py`), not in conftest files: several
conftest.py files exist, so `import conftest` would be ambiguous."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario

StartMock = Callable[..., MockModelServer]


@pytest.fixture(autouse=True)
def _tiny_retry_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_CLAUDE_RETRY_BASE_S", "0.001")


@pytest.fixture
def mock_model() -> Iterator[StartMock]:
    """`mock_model(turns, **kwargs)` starts a MockModelServer for a list of turns; all stop at teardown."""
    servers: list[MockModelServer] = []

    def start(turns: list[dict[str, Any]], **kwargs: Any) -> MockModelServer:
        server = MockModelServer(parse_scenario({"turns": turns}), **kwargs)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
