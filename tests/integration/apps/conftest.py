"""Fixtures for the MCP Apps browser tests: a session through the Python API (`mini_claude.api.Client`, in this
process) against the mock model, with real MCP server processes and Apps on (`mcpApps.openBrowser: "never"`), and
Debian's chromium driven by Playwright (`executable_path`, never `playwright install`). Helpers: support.py.

The session stays open while the browser shows the view the session announced (a SystemMessage `mcp_app_view`
whose data holds the view's URL); both are closed by their fixtures, whatever the test did."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mini_claude.api import Client, Options
from tests.helpers import chromium_path, require
from tests.integration.apps.support import AppsWorld


@pytest.fixture
def apps_world(tmp_path: Path) -> AppsWorld:
    project, home, state = tmp_path / "project", tmp_path / "home", tmp_path / "state"
    for folder in (project, home):
        folder.mkdir()
    return AppsWorld(project, home, state)


@pytest.fixture
async def open_client() -> AsyncIterator[Callable[[Options], Awaitable[Client]]]:
    """`await open_client(options)`: a connected `Client`; every one is disconnected at teardown."""
    clients: list[Client] = []

    async def start(options: Options) -> Client:
        client = Client(options)
        clients.append(client)
        await client.connect()
        return client

    yield start
    for client in clients:
        await client.disconnect()


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    """Debian's chromium under Playwright (skipped, or failed under CI, when it is missing); closed after."""
    executable = chromium_path()
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        require("playwright", "the Python package is not installed (it is in the dev extras: pip install -e .[dev])")

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            await launched.close()


