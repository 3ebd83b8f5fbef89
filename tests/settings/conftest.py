"""Fixtures for the settings tests: the real CLI (`python -m mini_claude`) against the mock model, which records
the credentials it was sent (`record_credentials`), real shell commands, real MCP servers and real helper
scripts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.integration.conftest import Cli


class SettingsCli(Cli):
    """`Cli` whose mock records auth headers, with helpers to write settings files."""

    def mock(self, turns: list[dict[str, Any]]) -> MockModelServer:
        server = MockModelServer(parse_scenario({"turns": turns}, source="test"), record_credentials=True)
        self.env["ANTHROPIC_BASE_URL"] = server.start()
        self.mocks.append(server)
        return server

    def user_settings(self, data: dict[str, Any]) -> Path:
        return _write(self.home / ".claude" / "settings.json", data)

    def project_settings(self, data: dict[str, Any], name: str = "settings.json") -> Path:
        return _write(self.work / ".claude" / name, data)

    def script(self, name: str, text: str) -> Path:
        path = self.tmp / name
        path.write_text(text)
        path.chmod(0o755)
        return path


def _write(path: Path, data: dict[str, Any]) -> Path:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[SettingsCli]:
    c = SettingsCli(tmp_path)
    yield c
    c.close()


def sent(mock: MockModelServer, header: str) -> list[str | None]:
    """The value of `header` in each /v1/messages request, in order."""
    return [r["headers"].get(header) for r in mock.requests if r["path"] == "/v1/messages"]


def models_sent(mock: MockModelServer) -> list[str]:
    return [str((r["body"] or {}).get("model")) for r in mock.requests if r["path"] == "/v1/messages"]
