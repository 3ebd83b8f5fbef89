"""Fixtures for the CLI tests: a mock model server per test, logging its requests to a file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario

StartMock = Callable[..., MockModelServer]


@pytest.fixture
def mock_model(tmp_path: Path) -> Iterator[StartMock]:
    """`mock_model(turns)` starts a MockModelServer whose request log is `server.log_path`."""
    servers: list[MockModelServer] = []

    def start(turns: list[dict[str, Any]]) -> MockModelServer:
        server = MockModelServer(parse_scenario({"turns": turns}), log_path=tmp_path / f"mock-{len(servers)}.jsonl")
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
