"""What the MCP Apps browser tests share (fixtures are in conftest.py): the test's world (a project, an isolated
home whose ~/.claude/settings.json holds the user's settings), a page watched on the network, the view's frame inside
the host page, the session's `mcp_app_view` announcements, and the CSP check against the spec's default."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mini_claude.api import Client, Options, ResultMessage, SystemMessage

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
VIEW_SUBTYPE = "mcp_app_view"
RENDER_TIMEOUT_MS = 20_000  # the first paint of a view: a page, a proxy frame and the view's own document
ANSWER_TIMEOUT_MS = 10_000  # a view's request answered by the session (a tool call, a refusal)


@dataclass
class AppsWorld:
    """A project folder and an isolated home (whose ~/.claude/settings.json is the user's settings)."""

    project: Path
    home: Path
    state: Path
    lines: list[str] = field(default_factory=list)  # what the session said through Options.stderr

    def user_settings(self, **extra: Any) -> dict[str, Any]:
        """Write ~/.claude/settings.json: Apps on, the browser never opened by the session, and `extra` keys."""
        settings = {"mcpApps": {"enabled": True, "openBrowser": "never"}, **extra}
        folder = self.home / ".claude"
        folder.mkdir(exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(settings))
        return settings

    def options(self, url: str, servers: dict[str, Any], **fields: Any) -> Options:
        env = {"HOME": str(self.home), "MINI_CLAUDE_STATE_DIR": str(self.state), "ANTHROPIC_BASE_URL": url,
               "ANTHROPIC_API_KEY": "sk-test", "MINI_CLAUDE_RETRY_BASE_S": "0.001", "MCP_TIMEOUT": "20000",
               **fields.pop("env", {})}
        fields.setdefault("stderr", self.lines.append)
        return Options(cwd=self.project, env=env, mcp_servers=servers, setting_sources=["user"], **fields)


@dataclass
class PageLog:
    """Everything a page did on the network, in every frame."""

    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    documents: list[Any] = field(default_factory=list)  # Playwright Responses of frame documents
    console: list[str] = field(default_factory=list)

    def outside(self) -> list[str]:
        """Requests (made or failed) to anything but loopback."""
        return [url for url in self.requests + self.failed
                if urlsplit(url).scheme not in ("data", "blob", "about") and urlsplit(url).hostname not in
                LOOPBACK_HOSTS]


async def open_page(browser: Any, url: str) -> tuple[Any, PageLog]:
    """A new page watched from its first request (`PageLog`), at `url`."""
    page = await browser.new_page()
    log = PageLog()
    page.on("request", lambda request: log.requests.append(request.url))
    page.on("requestfailed", lambda request: log.failed.append(request.url))
    page.on("console", lambda message: log.console.append(f"{message.type}: {message.text}"))

    def response(resp: Any) -> None:
        if resp.request.resource_type == "document":
            log.documents.append(resp)

    page.on("response", response)
    await page.goto(url, timeout=RENDER_TIMEOUT_MS)
    return page, log


def view_frame(page: Any) -> Any:
    """The newest view on the page: the host page frames a sandbox proxy, which frames the view."""
    return page.locator("iframe").first.content_frame.locator("iframe").first.content_frame


def frame_depth(frame: Any) -> int:
    depth = 0
    while frame.parent_frame is not None:
        frame, depth = frame.parent_frame, depth + 1
    return depth


def view_documents(log: PageLog) -> list[Any]:
    """The responses that carried a view's own document (two frames below the host page)."""
    return [resp for resp in log.documents if resp.frame is not None and frame_depth(resp.frame) == 2]


def views_announced(messages: list[object]) -> list[dict[str, Any]]:
    """The data of every `mcp_app_view` SystemMessage: {"url", "server", "tool", "view_id", ...}."""
    return [m.data for m in messages if isinstance(m, SystemMessage) and m.subtype == VIEW_SUBTYPE]


async def announced_view(client: Client, messages: list[object], notes: list[str]) -> dict[str, Any]:
    """The one view the turn's tool call showed: from the turn's messages, or (the view is fetched and put on the
    page beside the turn, so its announcement may come after the turn's result) the next one the session says.
    `notes` (the session's stderr lines) go into the failure when none comes."""
    shown = views_announced(messages)
    if not shown:
        async def next_view() -> None:
            async for message in client.receive_messages():
                shown.extend(views_announced([message]))
                if shown:
                    return

        try:
            await asyncio.wait_for(next_view(), RENDER_TIMEOUT_MS / 1000)
        except TimeoutError:
            raise AssertionError(f"no {VIEW_SUBTYPE} message within {RENDER_TIMEOUT_MS} ms; the session said: "
                                 f"{notes}") from None
    [view] = shown
    return view


async def run_turn(client: Client, prompt: str) -> list[object]:
    """Send `prompt`; the turn's messages up to and including its ResultMessage."""
    await client.query(prompt)
    messages = [message async for message in client.receive_response()]
    assert isinstance(messages[-1], ResultMessage)
    return messages


def csp_directives(header: str) -> dict[str, list[str]]:
    """A Content-Security-Policy header as {directive: [sources]}."""
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    return directives


# The spec's default policy for a view whose resource declares nothing (SEP-1865, "Host Behavior").
SPEC_DEFAULT_CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                    "img-src 'self' data:; media-src 'self' data:; connect-src 'none';")


async def view_policies(log: PageLog) -> list[str]:
    """Every Content-Security-Policy header of the (one) view document the page loaded: each is a policy of its own,
    and a document obeys all of them, so a further header can only narrow what the first allows."""
    [document] = view_documents(log)
    policies: list[str] = await document.header_values("content-security-policy")
    return policies


def is_restrictive_default(policy: str) -> bool:
    """The policy is the spec's default: every default directive exactly as the spec gives it, and anything more
    only tightens (sources 'none' or 'self'), so no outside origin is allowed anywhere."""
    got, default = csp_directives(policy), csp_directives(SPEC_DEFAULT_CSP)
    if any(sorted(got.get(directive, [])) != sorted(sources) for directive, sources in default.items()):
        return False
    return all(set(sources) <= {"'none'", "'self'"} for directive, sources in got.items() if directive not in default)


async def assert_view_served_with_the_default_csp(log: PageLog) -> None:
    """The view's document came with the spec's default policy (extra policies only narrow it)."""
    policies = await view_policies(log)
    assert any(is_restrictive_default(policy) for policy in policies), policies


def servers_log(path: Path) -> list[str]:
    """The fixture server's record of the tools it ran (one name a line; none yet: [])."""
    return path.read_text().split() if path.exists() else []


def mock_tool_names(requests: list[dict[str, Any]]) -> Iterator[str]:
    for request in requests:
        for tool in (request.get("body") or {}).get("tools", []):
            yield tool["name"]
