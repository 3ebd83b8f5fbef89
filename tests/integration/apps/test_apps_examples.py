"""The npm MCP Apps example servers end to end, offline (issue 30, acceptance 1): the scripted model calls the tool,
the session announces the view's URL, a real browser (Debian's chromium under Playwright) opens it while the session
stays open, and the view renders from the tool's result; a button in the view that calls a server tool gets its
answer through the session's bridge, past the same hooks as the model's call. The example servers are the pinned npm packages (scripts/install-apps-peers.sh);
no request leaves loopback."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.async_api import expect

from mini_claude.api import HookMatcher
from mini_claude.models.mock_server import MockModelServer
from tests.apps_peers import apps_peer_entry
from tests.integration.apps.support import (
    ANSWER_TIMEOUT_MS,
    RENDER_TIMEOUT_MS,
    AppsWorld,
    announced_view,
    assert_view_served_with_the_default_csp,
    open_page,
    run_turn,
    view_frame,
)
from tests.integration.conftest import answer, result_text, sent_tool_results, tool_use

ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


async def test_basic_vanillajs_renders_the_result_and_its_button_reaches_the_server(
        apps_world: AppsWorld, mock_model: Any, browser: Any, open_client: Any) -> None:
    mock: MockModelServer = mock_model([tool_use("mcp__basic__get-time"), answer("It is {{last_tool_result}}.")])
    apps_world.user_settings(permissions={"allow": ["mcp__basic"]})
    hooked: list[tuple[str, str]] = []  # (event, tool) for every PreToolUse and PostToolUse, the model's and the view's

    async def note(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        hooked.append((input_data["hook_event_name"], input_data["tool_name"]))
        return {}

    hooks = {event: [HookMatcher(matcher="mcp__basic__get-time", hooks=[note])]
             for event in ("PreToolUse", "PostToolUse")}
    client = await open_client(apps_world.options(mock.url, {"basic": apps_peer_entry("basic-vanillajs")},
                                                  hooks=hooks))
    messages = await run_turn(client, "what time is it on the server?")
    view = await announced_view(client, messages, apps_world.lines)
    assert view["server"] == "basic" and view["tool"] == "get-time" and view["view_id"]
    [called] = sent_tool_results(mock.requests)
    first_time = result_text(called)
    assert ISO_TIME.match(first_time), first_time  # the model got the tool's text as always

    page, log = await open_page(browser, view["url"])
    frame = view_frame(page)
    server_time = frame.locator("#server-time")
    await expect(server_time).to_have_text(first_time, timeout=RENDER_TIMEOUT_MS)  # from ui/notifications/tool-result
    await frame.get_by_role("button", name="Get Server Time").click()
    await expect(server_time).not_to_have_text(first_time, timeout=ANSWER_TIMEOUT_MS)
    second_time = await server_time.inner_text()
    assert ISO_TIME.match(second_time) and second_time > first_time, second_time  # a new answer from the server
    # the view's call took the model's path: the same hooks, under the same qualified name
    assert hooked == [("PreToolUse", "mcp__basic__get-time"), ("PostToolUse", "mcp__basic__get-time")] * 2
    await assert_view_served_with_the_default_csp(log)
    assert log.outside() == [], log.outside()
    assert len(mock.requests) == 2  # the view's own call went to the server, not to the model


async def test_budget_allocator_renders_its_charts_without_leaving_loopback(
        apps_world: AppsWorld, mock_model: Any, browser: Any, open_client: Any) -> None:
    mock: MockModelServer = mock_model([tool_use("mcp__budget__get-budget-data"), answer("Here is the budget.")])
    apps_world.user_settings(permissions={"allow": ["mcp__budget"]})
    client = await open_client(apps_world.options(mock.url, {"budget": apps_peer_entry("budget-allocator")}))
    messages = await run_turn(client, "show me the budget")
    view = await announced_view(client, messages, apps_world.lines)
    assert view["server"] == "budget" and view["tool"] == "get-budget-data"
    [called] = sent_tool_results(mock.requests)
    assert called.get("is_error") is not True and "budget" in json.dumps(called).lower()

    page, log = await open_page(browser, view["url"])
    frame = view_frame(page)
    await expect(frame.locator("body")).to_contain_text(re.compile(r"Allocated: \$100,000 / \$100,000"),
                                                        timeout=RENDER_TIMEOUT_MS)
    canvases = frame.locator("canvas")
    await expect(canvases.first).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    assert await canvases.count() >= 5
    await assert_view_served_with_the_default_csp(log)
    assert log.outside() == [], log.outside()
    assert log.failed == [], log.failed
