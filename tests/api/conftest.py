"""The Python API's tests: a project folder, an isolated home and state folder, and the mock model, as a program
using `mini_claude.api` would have them. Sessions get `env` through their Options, never through os.environ."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mini_claude.api import Options, ToolResultBlock, UserMessage, query


@dataclass
class ApiWorld:
    project: Path
    home: Path
    state: Path
    lines: list[str]  # what sessions said through Options.stderr

    @classmethod
    def made_in(cls, tmp_path: Path) -> ApiWorld:
        """A project and a home folder (made) and a state folder (not yet) under `tmp_path`."""
        project, home, state = tmp_path / "project", tmp_path / "home", tmp_path / "state"
        for folder in (project, home):
            folder.mkdir()
        return cls(project, home, state, [])

    def env(self, url: str, **extra: str) -> dict[str, str]:
        return {"HOME": str(self.home), "MINI_CLAUDE_STATE_DIR": str(self.state), "ANTHROPIC_BASE_URL": url,
                "ANTHROPIC_API_KEY": "sk-test", "MINI_CLAUDE_RETRY_BASE_S": "0.001", **extra}

    def options(self, url: str, **fields: Any) -> Options:
        env = {**self.env(url), **fields.pop("env", {})}
        fields.setdefault("stderr", self.lines.append)
        return Options(cwd=self.project, env=env, **fields)


@pytest.fixture
def world(tmp_path: Path) -> ApiWorld:
    return ApiWorld.made_in(tmp_path)


Turns = list[dict[str, Any]]
StartMock = Callable[..., Any]


def text(answer: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": answer}]}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


async def collect(prompt: str, options: Options) -> list[object]:
    """Every message of one `query`."""
    return [message async for message in query(prompt=prompt, options=options)]


def tool_results(messages: list[object]) -> list[ToolResultBlock]:
    """The tool results the session sent back to the model, in order."""
    return [b for m in messages if isinstance(m, UserMessage) for b in m.content if isinstance(b, ToolResultBlock)]
