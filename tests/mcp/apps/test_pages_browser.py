"""The session page and the sandbox proxy in a real browser (Debian's Chromium driven by Playwright): a view's
messages reach the inbox, `send` reaches the view, a view added later appears on an open page, the view's CSP
blocks a fetch to another origin, reserved `ui/notifications/sandbox-*` messages never cross the proxy, and a view's
`size-changed` resizes its frame.

The ViewServer runs on its own event loop in a thread (Playwright's sync API owns the test thread); one browser per
module, a fresh page per test. The views are small HTML documents of ours that speak JSON-RPC over postMessage to
`window.parent`, as the spec's SDK-free example does.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.apps.channel import ViewPage
from mini_claude.mcp.apps.csp import DEFAULT_CSP
from mini_claude.mcp.apps.loopback import ViewServer
from tests import helpers
from tests.helpers import chromium_path, require, wait_until

try:
    from playwright.sync_api import Browser, FrameLocator, Page, Response, sync_playwright
except ImportError:  # pragma: no cover - the dev extras install it
    sync_playwright = None  # type: ignore[assignment]

VIEW_HTML = """<!doctype html><html><body><h2 id="name">NAME</h2><div id="log"></div><div id="violations"></div>
<button id="fetch">fetch</button>
<script>
const log = document.getElementById("log");
window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const line = document.createElement("p");
  line.className = "got";
  line.textContent = JSON.stringify(event.data);
  log.append(line);
});
document.addEventListener("securitypolicyviolation", (event) => {
  const line = document.createElement("p");
  line.className = "violation";
  line.textContent = event.violatedDirective + " " + event.blockedURI;
  document.getElementById("violations").append(line);
});
function rpc(message) { window.parent.postMessage(Object.assign({jsonrpc: "2.0"}, message), "*"); }
document.getElementById("fetch").addEventListener("click", async () => {
  const line = document.createElement("p");
  line.id = "fetched";
  try { await fetch(document.body.dataset.target, {mode: "no-cors"}); line.textContent = "loaded"; }
  catch (err) { line.textContent = "refused"; }
  document.body.append(line);
});
rpc({method: "ui/notifications/sandbox-forged", params: {}});
rpc({id: 1, method: "ui/initialize", params: {appInfo: {name: "NAME", version: "1"}}});
</script></body></html>"""


class LoopThread:
    """An asyncio loop in a daemon thread, for the server under test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="view-server", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        async def call() -> Any:
            return fn(*args)
        return self.run(call())

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    path = chromium_path()
    if sync_playwright is None:
        require("playwright", "the Python package is not installed (`pip install -e .[dev]`)")
    with sync_playwright() as playwright:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []  # Chromium's own sandbox cannot run as root
        launched = playwright.chromium.launch(executable_path=path, args=args)
        yield launched
        launched.close()


class Harness:
    def __init__(self, loop: LoopThread) -> None:
        self.loop = loop
        self.inbox: list[tuple[str, dict[str, Any]]] = []

        async def inbox(view_id: str, message: dict[str, Any]) -> None:
            self.inbox.append((view_id, message))

        self.server = ViewServer(inbox, events=self)
        loop.run(self.server.start())

    def theme_changed(self, theme: str) -> None:  # PageEvents: in the inbox under the view id ""
        self.inbox.append(("", {"theme": theme}))

    def mode_changed(self, view_id: str, mode: str) -> None:
        self.inbox.append(("", {"view": view_id, "mode": mode}))

    def add(self, view_id: str, html: str = VIEW_HTML, csp: str = DEFAULT_CSP) -> str:
        page = ViewPage(view_id, f"server · {view_id}", html.replace("NAME", view_id), csp, "")
        return str(self.loop.call(self.server.add_view, page))

    def send(self, view_id: str, message: dict[str, Any]) -> None:
        self.loop.call(self.server.send, view_id, message)

    def methods(self, view_id: str) -> list[str]:
        return [m.get("method", "") for v, m in list(self.inbox) if v == view_id]


@pytest.fixture
def harness() -> Iterator[Harness]:
    loop = LoopThread()
    made = Harness(loop)
    yield made
    loop.run(made.server.close())
    loop.stop()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    yield opened
    context.close()


def view_frame(page: Page, view_id: str) -> FrameLocator:
    """The view's own frame (host page → proxy → view); its locators wait for it."""
    return page.frame_locator(f"#view-{view_id} iframe").frame_locator("iframe")


def received(frame: FrameLocator, count: int) -> list[dict[str, Any]]:
    """The messages the view got, once it has `count` of them."""
    frame.locator(".got").nth(count - 1).wait_for(timeout=10_000)
    return [json.loads(text) for text in frame.locator(".got").all_inner_texts()]


def test_a_views_message_reaches_the_inbox_after_the_proxy_announces_itself(harness: Harness, page: Page) -> None:
    harness.add("a")
    page.goto(harness.server.page_url)
    wait_until(lambda: "ui/initialize" in harness.methods("a"), "the view's ui/initialize in the inbox")
    methods = harness.methods("a")
    assert methods[0] == "ui/notifications/sandbox-proxy-ready"
    assert "ui/notifications/sandbox-forged" not in methods  # the view may not speak for the proxy
    assert page.locator("#view-a .title").inner_text() == "server · a"


def test_the_page_says_its_colour_scheme_first_and_when_it_changes(harness: Harness, browser: Browser) -> None:
    context = browser.new_context(color_scheme="light")
    try:
        page = context.new_page()
        harness.add("a")
        page.goto(harness.server.page_url)
        wait_until(lambda: "ui/initialize" in harness.methods("a"), "the view's ui/initialize in the inbox")
        themes = [m["theme"] for v, m in harness.inbox if v == ""]
        assert themes == ["light"]
        assert harness.inbox.index(("", {"theme": "light"})) < next(  # before the view's first message
            n for n, (v, _) in enumerate(harness.inbox) if v == "a")
        page.emulate_media(color_scheme="dark")
        wait_until(lambda: ("", {"theme": "dark"}) in harness.inbox, "the new scheme")
    finally:
        context.close()


def test_full_screen_from_the_button_from_the_session_and_one_at_a_time(harness: Harness, page: Page) -> None:
    harness.add("a")
    page.goto(harness.server.page_url)
    wait_until(lambda: "ui/initialize" in harness.methods("a"), "the view a to start")
    section, button = page.locator("#view-a"), page.locator("#view-a .mode")
    assert button.inner_text() == "Full screen" and "full" not in (section.get_attribute("class") or "")
    button.click()  # the user's button: the view covers the page, and the session hears it
    wait_until(lambda: ("", {"view": "a", "mode": "fullscreen"}) in harness.inbox, "the page to say so")
    assert "full" in (section.get_attribute("class") or "").split() and button.inner_text() == "Exit full screen"
    box, viewport = page.locator("#view-a iframe").bounding_box(), page.viewport_size
    assert box is not None and viewport is not None and box["height"] > viewport["height"] * 0.8
    page.keyboard.press("Escape")  # Esc on the page leaves full screen
    wait_until(lambda: ("", {"view": "a", "mode": "inline"}) in harness.inbox, "the page to say it left")
    assert "full" not in (section.get_attribute("class") or "").split()

    harness.add("b")
    wait_until(lambda: page.locator("#view-b .mode").count() == 1, "view b on the page")
    harness.loop.call(harness.server.set_mode, "a", "fullscreen")  # the session's word (a view asked)
    wait_until(lambda: "full" in (section.get_attribute("class") or "").split(), "view a full screen")
    said = len(harness.inbox)
    harness.loop.call(harness.server.set_mode, "b", "fullscreen")  # one at a time: a goes back inline
    wait_until(lambda: ("", {"view": "a", "mode": "inline"}) in harness.inbox[said:], "a back inline, said")
    assert "full" in (page.locator("#view-b").get_attribute("class") or "").split()
    assert "full" not in (section.get_attribute("class") or "").split()


def test_send_reaches_the_view_and_reserved_methods_never_do(harness: Harness, page: Page) -> None:
    harness.add("a")
    harness.send("a", {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-resource-ready",
                       "params": {"html": "<p>x</p>"}})
    harness.send("a", {"jsonrpc": "2.0", "id": 1, "result": {"queued": True}})  # sent before any page: queued
    page.goto(harness.server.page_url)
    frame = view_frame(page, "a")
    assert received(frame, 1) == [{"jsonrpc": "2.0", "id": 1, "result": {"queued": True}}]
    harness.send("a", {"jsonrpc": "2.0", "method": "test/live", "params": {"n": 2}})
    received(frame, 2)
    # the page is bypassed: a reserved method posted straight at the proxy is dropped there too
    page.evaluate("""([origin]) => {
        const proxy = document.querySelector("#view-a iframe").contentWindow;
        proxy.postMessage({jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: {}}, origin);
        proxy.postMessage({jsonrpc: "2.0", method: "test/after", params: {}}, origin);
    }""", [harness.server.view_origin("a")])
    assert received(frame, 3) == [{"jsonrpc": "2.0", "id": 1, "result": {"queued": True}},
                               {"jsonrpc": "2.0", "method": "test/live", "params": {"n": 2}},
                               {"jsonrpc": "2.0", "method": "test/after", "params": {}}]


def test_a_view_added_later_appears_first_and_a_removed_one_goes(harness: Harness, page: Page) -> None:
    harness.add("a")
    page.goto(harness.server.page_url)
    wait_until(lambda: "ui/initialize" in harness.methods("a"), "view a's ui/initialize")
    url = harness.add("b")
    assert url == harness.server.page_url + "#view-b"
    wait_until(lambda: "ui/initialize" in harness.methods("b"), "view b's ui/initialize")
    assert page.locator("section.view").evaluate_all("nodes => nodes.map(n => n.id)") == ["view-b", "view-a"]
    assert view_frame(page, "b").locator("#name").inner_text() == "b"
    harness.loop.call(harness.server.remove_view, "a")
    page.locator("#view-a").wait_for(state="detached", timeout=5000)
    assert page.locator("section.view").count() == 1


def test_the_views_csp_blocks_a_fetch_to_another_origin(harness: Harness, page: Page) -> None:
    target = harness.server.page_url  # reachable, so only the CSP can refuse it (no-cors: no CORS failure)
    harness.add("a", VIEW_HTML.replace("<body>", f'<body data-target="{target}">'))
    responses: dict[str, dict[str, str]] = {}

    def record(response: Response) -> None:
        responses.setdefault(response.url, response.headers)

    page.on("response", record)
    page.goto(harness.server.page_url)
    frame = view_frame(page, "a")
    frame.locator("#fetch").click()
    assert frame.locator("#fetched").inner_text(timeout=5000) == "refused"
    assert frame.locator(".violation").first.inner_text(timeout=5000) == f"connect-src {target}"
    view_url = f"{harness.server.view_origin('a')}/{harness.server.token}/v/a/view"
    assert DEFAULT_CSP in responses[view_url]["content-security-policy"]


def test_size_changed_sets_the_frame_height_within_bounds(harness: Harness, page: Page) -> None:
    harness.add("a")
    page.goto(harness.server.page_url)
    frame = view_frame(page, "a")
    outer = page.locator("#view-a iframe")
    frame.locator("#log").evaluate("() => rpc({method: 'ui/notifications/size-changed', params: {width: 10, height: 321}})")
    wait_until(lambda: outer.evaluate("f => f.getBoundingClientRect().height") == 321, "the frame at 321 px")
    frame.locator("#log").evaluate("() => rpc({method: 'ui/notifications/size-changed', params: {height: 99999}})")
    wait_until(lambda: outer.evaluate("f => f.getBoundingClientRect().height") == 4000, "the frame at 4000 px")
    # the session side sees them too: the page resizes at once and relays each by a POST of its own, so wait for it
    wait_until(lambda: harness.methods("a").count("ui/notifications/size-changed") == 2, "both relayed")


def test_a_second_tab_takes_the_session_and_the_first_clears(harness: Harness, page: Page, browser: Browser) -> None:
    harness.add("a")
    page.goto(harness.server.page_url)
    wait_until(lambda: "ui/initialize" in harness.methods("a"), "view a in the first tab")
    second = page.context.new_page()
    second.goto(harness.server.page_url)
    wait_until(lambda: harness.methods("a").count("ui/initialize") == 2, "view a in the second tab")
    page.locator("#view-a").wait_for(state="detached", timeout=5000)
    assert "another tab" in page.locator("#status").inner_text()
    harness.send("a", {"jsonrpc": "2.0", "method": "test/second"})
    assert received(view_frame(second, "a"), 1) == [{"jsonrpc": "2.0", "method": "test/second"}]


def test_a_view_cannot_reach_another_views_document(harness: Harness, page: Page) -> None:
    """Each view has its own origin: a view can walk `top.frames` to a sibling but not into its document."""
    harness.add("a")
    harness.add("b")
    page.goto(harness.server.page_url)
    wait_until(lambda: "ui/initialize" in harness.methods("a") and "ui/initialize" in harness.methods("b"),
               "both views' ui/initialize")
    reach = view_frame(page, "b").locator("#log").evaluate("""() => Array.from({length: top.frames.length}, (_, i) => {
        try { return top.frames[i].frames[0].document.getElementById("name").textContent; }
        catch (err) { return err.name; }
    })""")
    assert sorted(reach) == ["SecurityError", "b"]  # its own document, and view a's: refused


def test_a_missing_chromium_skips_here_and_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(helpers, "CHROMIUM", Path("/nonexistent/chromium"))
    monkeypatch.delenv(helpers.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium is missing: /nonexistent/chromium is not installed"):
        helpers.chromium_path()
    monkeypatch.setenv(helpers.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="MINI_CLAUDE_REQUIRE_PEERS=1: CI must provide it"):
        helpers.chromium_path()
