"""The MCP Apps host's promises, checked in a real browser with our fixture server's view
(tests/mcp/servers/apps_server.py), where each button tries one thing a view may or may not do (issue 30,
acceptance 1): an app-only tool never reaches the model but works for its view; the resource's declared outside
origin is not granted (the view's CSP header is the spec's default and its fetch fails); a view's call to a tool the
user's deny rule covers is refused and the server never runs it; a model-only tool is refused to the view; the
view's `ui/message` is the user text of the next model request; the view's theme is the browser's colour scheme,
changed when it changes; and the session's end tears the view down."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from playwright.async_api import expect

from mini_claude.models.mock_server import MockModelServer
from tests.helpers import eventually
from tests.integration.apps.support import (
    ANSWER_TIMEOUT_MS,
    RENDER_TIMEOUT_MS,
    AppsWorld,
    announced_view,
    assert_view_served_with_the_default_csp,
    mock_tool_names,
    open_page,
    run_turn,
    servers_log,
    view_frame,
    view_policies,
)
from tests.integration.conftest import ROOT, answer, tool_use
from tests.mcp.servers.apps_server import MESSAGE_TEXT

SERVER_SCRIPT = ROOT / "tests" / "mcp" / "servers" / "apps_server.py"


def _user_text(request: dict[str, Any]) -> str:
    """The text of the last user message of a recorded model request."""
    last = request["body"]["messages"][-1]
    assert last["role"] == "user"
    content = last["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


async def test_the_hosts_rules_hold_for_a_view_in_a_real_browser(
        apps_world: AppsWorld, mock_model: Any, browser: Any, open_client: Any) -> None:
    calls = apps_world.project.parent / "tool-calls.log"
    server = {"command": sys.executable, "args": [str(SERVER_SCRIPT)], "env": {"APPS_SERVER_LOG": str(calls)}}
    mock: MockModelServer = mock_model([tool_use("mcp__apps__show_board", {"title": "Q3"}), answer("The board is up."),
                                        answer("Here is the summary you asked for.")])
    # every tool of the server allowed, but the user's deny rule covers bump: the rule is what must refuse it
    apps_world.user_settings(permissions={"allow": ["mcp__apps"], "deny": ["mcp__apps__bump"]})
    client = await open_client(apps_world.options(mock.url, {"apps": server}))
    messages = await run_turn(client, "show me the board")
    view = await announced_view(client, messages, apps_world.lines)
    assert view["server"] == "apps" and view["tool"] == "show_board"
    assert servers_log(calls) == ["show_board"]

    page, log = await open_page(browser, view["url"])
    frame = view_frame(page)
    await expect(frame.locator("#status")).to_have_text("initialized", timeout=RENDER_TIMEOUT_MS)
    await expect(frame.locator("#tool-input")).to_have_text(json.dumps({"title": "Q3"}, separators=(",", ":")))
    await expect(frame.locator("#tool-result")).to_have_text("board shown")

    # the resource declares connectDomains https://evil.example; nobody approved it: the spec's default policy
    await assert_view_served_with_the_default_csp(log)
    assert not any("evil.example" in policy for policy in await view_policies(log))
    assert "evil.example" not in await frame.locator("#granted-csp").inner_text()  # and the view is told so
    assert any("may not reach https://evil.example" in line for line in apps_world.lines), apps_world.lines

    # the theme: the browser's colour scheme (Playwright's default: light), and a change reaches the live view
    await expect(frame.locator("#theme")).to_have_text("light")
    await page.emulate_media(color_scheme="dark")
    await expect(frame.locator("#theme")).to_have_text("dark", timeout=ANSWER_TIMEOUT_MS)
    await frame.locator("#fetch-btn").click()
    await expect(frame.locator("#fetch-out")).to_have_text(re.compile(r"^error: "), timeout=ANSWER_TIMEOUT_MS)
    await expect(frame.locator("#csp-out")).to_have_text("connect-src blocked https://evil.example/",
                                                         timeout=ANSWER_TIMEOUT_MS)

    # denied by the user's rule: refused, and the server never ran it
    await frame.locator("#bump-btn").click()
    await expect(frame.locator("#bump-out")).to_have_text(re.compile(r"^error: .*den(y|ied)", re.IGNORECASE),
                                                          timeout=ANSWER_TIMEOUT_MS)
    # model-only (visibility ["model"]): refused to the view, and the server never ran it
    await frame.locator("#secret-btn").click()
    await expect(frame.locator("#secret-out")).to_have_text(re.compile(r"^error: "), timeout=ANSWER_TIMEOUT_MS)
    # app-only: the view's own tool works
    await frame.locator("#refresh-btn").click()
    await expect(frame.locator("#refresh-out")).to_have_text("ok: refreshed", timeout=ANSWER_TIMEOUT_MS)
    assert servers_log(calls) == ["show_board", "refresh"]  # each view call answered in turn: bump never ran

    # ui/message: the user's next message, which the model is asked about
    await frame.locator("#message-btn").click()
    await expect(frame.locator("#message-out")).to_have_text("ok: sent", timeout=ANSWER_TIMEOUT_MS)
    await eventually(lambda: len(mock.requests) >= 3, "the model request for the view's message",
                     within_s=ANSWER_TIMEOUT_MS / 1000)
    assert MESSAGE_TEXT in _user_text(mock.requests[2])

    # the app-only tools were in no model request; the model's own tools were
    names = set(mock_tool_names(mock.requests))
    assert {"mcp__apps__show_board", "mcp__apps__secret", "mcp__apps__plain"} <= names
    assert not names & {"mcp__apps__refresh", "mcp__apps__bump"}
    assert log.outside() == [], log.outside()

    # the session's end tears the view down first (a request the view answers)
    await client.disconnect()
    await expect(frame.locator("#status")).to_have_text("torn down", timeout=ANSWER_TIMEOUT_MS)
