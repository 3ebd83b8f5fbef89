"""Red-team round 8: commit 2c85646 — a view's permission question (it says an MCP Apps view asks, asks nothing of
"instead", offers `b` = refuse that server's views for the session; the gate carries `view=` into
`AskContext.view`, the API's `can_use_tool` sees it) and the page's colour scheme (`{"page", "theme"}` POSTed to
the loopback `rpc`, given to views as `hostContext.theme` and `ui/notifications/host-context-changed`).

Attacked as a hostile MCP server (its name comes from a repository's `.mcp.json`; its view's HTML/JS runs in the
user's browser), a hostile model and another local web page. Each test first shows the path does act for the user
(a question is asked, a POST is taken), then that the attack does not. Real parts: a real REPL session
(`start_session` with the REPL's own question code, answers scripted at the one place keys are read), the real
permission gate, the view gate the session builds, the real loopback server over real HTTP.
/work/review/round8/REPORT.md has the whole list.

Why this module is long: a round's attacks stay together, one test per attack, as its report lists them."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from mini_claude.agent.subagents import SubagentGate
from mini_claude.api.permissions import PermissionResultDeny, ToolPermissionContext, asker
from mini_claude.cli.questions.permission import BLOCK_VIEW
from mini_claude.cli.repl import Repl
from mini_claude.cli.terminal.render import TerminalUI
from mini_claude.mcp.apps.channel import THEMES
from mini_claude.mcp.apps.loopback import MAX_BODY_BYTES, ViewServer
from mini_claude.mcp.apps.service import ViewCallAdmission
from mini_claude.mcp.naming import qualify_tool_name
from mini_claude.mcp.protocol import McpTool
from mini_claude.mcp.server_state import McpToolEntry
from mini_claude.permissions.answers import AskContext
from tests.cli.repl_in_process import InProcessRepls
from tests.helpers import eventually
from tests.integration.conftest import answer
from tests.mcp.apps.bridge_world import World, methods, world
from tests.mcp.apps.fakes import PageWords
from tests.mcp.apps.test_loopback import (
    PAGE_A,
    PAGE_B,
    Inbox,
    client,
    events,
    inbox,
    post,
    said,
    server,
    view,
)

__all__ = ["client", "inbox", "said", "server", "world"]  # fixtures shared with tests/mcp/apps

pytestmark = pytest.mark.timeout(120)


# ---- a REPL session whose keys are scripted -------------------------------------------------------------------

class Keys:
    """The REPL's one place keys are read for a question (`ReplQuestions._ask`): each question is recorded with
    the choices it offered; the answer is the next scripted key (a question with none left waits until one is
    given: `give`)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, str]]] = []
        self.typed: list[str] = []  # follow-up lines asked for ("What should the model do instead?")
        self._keys: asyncio.Queue[str] = asyncio.Queue()

    def give(self, *keys: str) -> None:
        for key in keys:
            self._keys.put_nowait(key)

    async def ask(self, question: str, choices: dict[str, str]) -> str:
        self.asked.append((question, dict(choices)))
        key = await asyncio.wait_for(self._keys.get(), 10)
        return choices[key]

    async def prompt_text(self, label: str) -> str | None:
        self.typed.append(label)
        return ""


class Session:
    def __init__(self, repl: Repl, keys: Keys, err: io.StringIO) -> None:
        self.repl, self.keys, self.err = repl, keys, err

    @property
    def gate(self) -> Any:
        assert self.repl.parts is not None
        return self.repl.parts.gate

    async def view_call(self, server: str, tool: str = "caps") -> ViewCallAdmission:
        """A call `server`'s view makes: the session's own view gate (session/apps_gate.py)."""
        assert self.repl.parts is not None and self.repl.parts.apps is not None
        entry = McpToolEntry(server, _tool(tool), qualify_tool_name(server, tool))
        return await asyncio.wait_for(self.repl.parts.apps.gate.admit(entry, {}), 15)

    async def model_call(self, server: str, tool: str = "caps") -> Any:
        """The model's call of the same tool: the same gate, no `view`."""
        assert self.repl.parts is not None and self.repl.parts.apps is not None
        entry = McpToolEntry(server, _tool(tool), qualify_tool_name(server, tool))
        adapter = self.repl.parts.apps.gate.adapters.adapter(entry)
        return await asyncio.wait_for(self.gate.check(adapter, {}), 15)


Start = Callable[[], Awaitable[Session]]


def _tool(name: str) -> McpTool:
    built = McpTool.from_wire({"name": name, "inputSchema": {"type": "object"}})
    assert built is not None
    return built


@pytest.fixture
async def start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Start]:
    repls = InProcessRepls(tmp_path, monkeypatch)
    work = tmp_path / "work"
    work.mkdir()

    async def begin() -> Session:
        keys = Keys()

        def prepare(repl: Repl) -> dict[str, Any]:
            repl._apps.ui = repl.ui
            repl._ask = keys.ask  # type: ignore[method-assign]
            repl._prompt_text = keys.prompt_text  # type: ignore[method-assign]
            return {"apps": True, "ask_permission": repl._ask_permission}

        repl, _mock, err = await repls.start(
            work, ["--settings", json.dumps({"mcpApps": {"openBrowser": "never"}})], [answer("a")], prepare=prepare)
        return Session(repl, keys, err)

    yield begin
    await repls.close()


def _question_lines(printed: str) -> list[str]:
    return [line for line in printed.splitlines() if line.strip()]


# ---- 1. the question says who asks; `b` is that server's views only ----------------------------------------

async def test_b_refuses_that_servers_views_only_never_another_server_or_the_model(
        start: Start, capsys: pytest.CaptureFixture[str]) -> None:
    """HELD. A view of `docs` asks: the question says a view of docs asks, offers `b`, and "n" asks nothing of
    "instead". `b` refuses that call and every later one of docs' views without a question — but a view of another
    server (`docs2`, and `Docs`: a name that differs in case only) is still asked, and so is the model's own call of
    docs' tool, which is never offered `b` and still asks what to do instead."""
    session = await start()
    keys = session.keys

    keys.give("n")
    refused = await session.view_call("docs")
    assert not refused.allowed
    question, choices = keys.asked[-1]
    assert choices.get("b") == BLOCK_VIEW and "refuse this server's views" in question
    # the question line itself names who asks (a long call can scroll the header away), and what "always" means
    assert question.startswith("Allow this call of a view of MCP server docs? y = yes, a = yes and don't ask again "
                                "for mcp__docs__caps (the model's calls too), n = no, b = no")
    assert "A view of MCP server docs (a page in your browser, not the model) asks to run:" in capsys.readouterr().err
    assert keys.typed == []  # no "What should the model do instead?"

    keys.give("b")
    blocked = await session.view_call("docs")
    assert not blocked.allowed and "refuses this server's views" in blocked.reason
    assert "views of MCP server docs that need your approval are refused" in session.err.getvalue()
    asked = len(keys.asked)
    for _ in range(3):  # later calls: refused, no question (nothing waits for a key that never comes)
        again = await session.view_call("docs")
        assert not again.allowed and "refuses this server's views" in again.reason
    assert len(keys.asked) == asked
    assert session.err.getvalue().count("need your approval are refused") == 1  # said once

    capsys.readouterr()
    for other in ("docs2", "Docs"):  # another server's views are still asked
        keys.give("y")
        assert (await session.view_call(other)).allowed
        assert len(keys.asked) == asked + 1
        asked += 1

    capsys.readouterr()
    keys.give("n")  # the model's own call of docs' tool: asked as the model's (no `b`; "instead" asked)
    decision = await session.model_call("docs")
    assert not decision.allowed
    question, choices = keys.asked[-1]
    assert "b" not in choices and "views" not in question
    assert keys.typed and "instead" in keys.typed[-1]
    assert "A view of MCP server" not in capsys.readouterr().err


class _CountingLock(asyncio.Lock):
    """The gate's question lock, counting every call that came to wait for it."""

    def __init__(self) -> None:
        super().__init__()
        self.tried = 0

    async def acquire(self) -> bool:
        self.tried += 1
        return await super().acquire()


async def test_questions_waiting_behind_a_b_are_refused_without_hanging(start: Start) -> None:
    """HELD. A view floods calls that each need a question; the user answers the first with `b`: the rest,
    already queued behind it, are refused without a question (none waits for a key that never comes), while a
    call of another server's view that was queued among them is still asked."""
    session = await start()
    keys = session.keys
    lock = session.gate._ask_lock = _CountingLock()  # one question at a time: who waits for it is counted
    first = asyncio.ensure_future(session.view_call("flood"))
    await eventually(lambda: len(keys.asked) == 1, "the first question", within_s=10)
    flood = [asyncio.ensure_future(session.view_call("flood")) for _ in range(5)]
    other = asyncio.ensure_future(session.view_call("calm"))
    await eventually(lambda: lock.tried == 7, "the six calls queued behind the first question", within_s=10)
    keys.give("b", "y")  # b for the first; y for whatever is asked next (only calm's should be)
    results = await asyncio.wait_for(asyncio.gather(first, *flood, other), 15)
    assert [r.allowed for r in results] == [False] * 6 + [True]
    asked_servers = [q for q, _ in keys.asked]
    assert len(asked_servers) == 2  # the first flood call and calm's; the 5 queued flood calls never asked


# ---- 2. a server's name cannot print lines of its own in the question or the note ----------------------------

SPOOF = ("docs (a page in your browser, not the model) asks to run:" + "\n" * 60
         + "  Bash(ls)\n\x1b[2J\u202e")


async def test_a_server_name_cannot_push_the_views_line_away_or_forge_lines(
        start: Start, capsys: pytest.CaptureFixture[str]) -> None:
    """FIXED (round 8, F1). A server's name is a repository's `.mcp.json` key: any text. The question printed it
    through `clean(visible, exact)`, which keeps line breaks — 60 newlines in the name pushed "A view of MCP server"
    off a terminal's screen, so the call below read as the model's, and could print lines of its own ("Bash(ls)").
    Same for the "refused for the rest of this session" note and the refusal's report line. Now the name is on
    one line (a line break shows as `\\n`), escapes and bidi shown as escapes."""
    session = await start()
    session.keys.give("b")
    refused = await session.view_call(SPOOF)
    assert not refused.allowed
    printed = capsys.readouterr().err
    header = next(line for line in printed.splitlines() if "A view of MCP server" in line)
    assert header.endswith("asks to run:") and "\\n" in header  # the whole name on the header's own line
    assert "\x1b" not in printed and "\u202e" not in printed
    question = session.keys.asked[-1][0]
    assert "\n" not in question and question.startswith("Allow this call of a view of MCP server docs (a page")
    assert not any(line.strip() == "Bash(ls)" for line in printed.splitlines())
    notes = session.err.getvalue()
    assert "\x1b" not in notes and "\u202e" not in notes
    note = next(line for line in notes.splitlines() if "that need your approval are refused" in line)
    assert "views of MCP server docs (a page" in note and "\\n" in note  # one line, the name's breaks shown
    assert not any(line.strip() == "Bash(ls)" for line in notes.splitlines())
    report = next(line for line in notes.splitlines() if "was refused caps" in line)
    session.keys.give("b")  # a look-alike of a name the user knows: the note shows the joiner it hides
    await session.view_call("docs\u200d")
    look_alike = next(line for line in session.err.getvalue().splitlines() if "server docs\\u200d that" in line)
    assert "\u200d" not in look_alike
    assert report.startswith("a view of MCP server docs (a page") and "\\n" in report


async def test_after_b_that_servers_views_cannot_keep_asking_through_links(start: Start) -> None:
    """FIXED (round 8, F2). `b` says "refuse this server's views without asking for the rest of the session", but
    only their tool calls were refused: the same view could go on asking `ui/open-link` questions — each one makes
    the prompt step aside — for the rest of the session. Now a link question of a refused server's view is a no
    without a question (one queued behind the `b` too); another server's view is still asked. The link question
    also keeps a server's name on its one line (it printed the name's line breaks)."""
    from mini_claude.errors import ViewRefusedError
    from mini_claude.mcp.apps.views import View

    session = await start()
    keys, repl = session.keys, session.repl
    assert repl.parts is not None and repl.parts.apps is not None
    repl.parts.apps.front = repl._apps
    repl._apps._busy = lambda: True  # during a turn: asked in turn, no prompt to step aside
    views = {name: View(view_id=f"v{n}", server=name, tool=_tool("show"), qualified=f"mcp__{name}__show",
                        arguments={}) for n, name in enumerate(("docs", "other", "docs\n\nThe view of x"))}

    async def link(server: str) -> bool:
        try:
            await asyncio.wait_for(repl.parts.apps.open_link(views[server], "https://example.com/"), 15)  # type: ignore[union-attr]
        except ViewRefusedError:
            return False
        return True

    keys.give("n")
    assert not await link("docs")  # asked: the path does reach the user
    assert len(keys.asked) == 1 and "asks to open https://example.com/" in keys.asked[0][0]

    call = asyncio.ensure_future(session.view_call("docs"))  # a tool call's question, not answered yet
    await eventually(lambda: len(keys.asked) == 2, "the tool call's question")
    waiting = asyncio.ensure_future(link("docs"))  # a link question waiting behind it
    await eventually(lambda: repl._apps._side.locked(), "the link question waiting for the terminal")
    keys.give("b")
    assert not (await asyncio.wait_for(call, 15)).allowed
    assert not await asyncio.wait_for(waiting, 15)
    asked = len(keys.asked)
    assert asked == 2  # the waiting link question was never asked
    assert not await link("docs") and not await link("docs")
    assert len(keys.asked) == asked  # no link question of docs' views once refused

    keys.give("n")
    assert not await link("other")  # another server's view: still asked
    assert len(keys.asked) == asked + 1

    keys.give("n")
    assert not await link("docs\n\nThe view of x")
    question = keys.asked[-1][0]
    assert "\n" not in question and "docs\\n\\nThe view of x" in question


async def test_after_b_that_servers_views_cannot_keep_asking_through_sampling(
        start: Start, monkeypatch: pytest.MonkeyPatch) -> None:
    """FIXED (round 8, F3). The same for a view's `sampling/createMessage` (default policy "ask": "Let the model
    answer?" during a turn): after `b` a refused server's views' requests are denied unasked (one waiting behind the
    `b` too); the server's own sampling requests (no view) and another server's views are still asked. The REPL
    hands its refusals to its host UI (repl.py)."""
    from mini_claude.cli.questions.host_ui import ReplHostUI
    from mini_claude.mcp.host.ui import SamplingChoice, SamplingRequest

    session = await start()
    keys, repl = session.keys, session.repl
    built: list[ReplHostUI] = []

    async def no_session(*args: Any, host_ui: ReplHostUI, **kwargs: Any) -> Any:
        built.append(host_ui)
        raise RuntimeError("stop here")

    import mini_claude.cli.repl as repl_module

    parts = repl.parts
    monkeypatch.setattr(repl_module, "start_session", no_session)
    monkeypatch.setattr(repl_module, "end_session_on_terminate", lambda: None)  # no signal handlers in pytest
    with pytest.raises(RuntimeError, match="stop here"):
        await repl.run()
    repl.parts = parts
    host_ui = built[0]
    assert host_ui.refusing_views == repl._apps.refusing  # the REPL's own refusals

    def request(server: str, view: str = "show") -> SamplingRequest:
        return SamplingRequest(server, "", [{"role": "user", "content": {"type": "text", "text": "hi"}}], 10,
                               view=view)

    async def sample(req: SamplingRequest) -> SamplingChoice:
        return await asyncio.wait_for(host_ui.approve_sampling(req), 15)

    keys.give("n")
    assert await sample(request("docs")) is SamplingChoice.DENY
    assert keys.asked[-1][0] == "Let the model answer?"  # asked: the path reaches the user
    call = asyncio.ensure_future(session.view_call("docs"))
    await eventually(lambda: len(keys.asked) == 2, "the tool call's question")
    waiting = asyncio.ensure_future(sample(request("docs")))
    await eventually(lambda: len(host_ui.lock._waiters or ()) == 1,  # type: ignore[attr-defined]
                     "the sampling question waiting its turn")
    keys.give("b")
    assert not (await asyncio.wait_for(call, 15)).allowed
    assert await asyncio.wait_for(waiting, 15) is SamplingChoice.DENY
    assert await sample(request("docs")) is SamplingChoice.DENY
    assert len(keys.asked) == 2  # neither asked
    keys.give("y", "y")
    assert await sample(request("docs", view="")) is SamplingChoice.ONCE  # the server's own: still asked
    assert await sample(request("other")) is SamplingChoice.ONCE  # another server's view: still asked
    assert len(keys.asked) == 4


def test_a_views_note_is_one_line() -> None:
    """FIXED (round 8, F4). `AppsFront.note` is "one warning line", but the REPL printed a server's name (or error)
    with its line breaks: "the view of NAME/tool asked to open URL (no browser here)" could print a line of its
    own."""
    from mini_claude.cli.repl_apps import ReplApps

    err = io.StringIO()
    apps = ReplApps(TerminalUI(out=io.StringIO(), err=err), session=lambda: None, at_prompt=lambda: False,
                    busy=lambda: True, ask=lambda _q: asyncio.sleep(0, False), retype=lambda _t: None,
                    lock=asyncio.Lock())
    apps.note("the view of docs\n\nmini-claude: all clear/show asked to open https://a.example/ (no browser here)")
    lines = [line for line in err.getvalue().splitlines() if line.strip()]
    assert len(lines) == 1 and "docs\\n\\nmini-claude: all clear" in lines[0]


# ---- 3. the `view` the gate carries: every ask path, sub-agents, the API, a leaked "block" -------------------

async def test_every_ask_path_carries_the_view_and_a_subagent_gate_passes_it(start: Start) -> None:
    """HELD. An ask rule, a PreToolUse hook that asks and plain "no rule allows it" all hand the question the
    view's server (so a view's call never reads as the model's); `SubagentGate` passes it through."""
    from mini_claude.hooks.outcomes import HookPermission

    session = await start()
    seen: list[str | None] = []
    gate = session.gate

    async def ask(tool: Any, args: dict[str, Any], context: AskContext) -> str:
        seen.append(context.view)
        return "no"

    gate.ask = ask
    entry = McpToolEntry("s", _tool("t"), "mcp__s__t")
    adapter = session.repl.parts.apps.gate.adapters.adapter(entry)
    await gate.check(adapter, {}, view="s")  # no rule allows it
    await gate.check(adapter, {}, view="s", hook=HookPermission("ask", "the hook asks"))
    from mini_claude.permissions.rules import RuleSet, parse_rule

    rules = gate.rules
    gate.rules = RuleSet(rules.allow, rules.deny, (*rules.ask, parse_rule("mcp__s__t", source="session")), rules.errors)
    await gate.check(adapter, {}, view="s")  # an ask rule
    await SubagentGate(gate, "Explore").check(adapter, {}, view="s")
    await gate.check(adapter, {})  # the model's
    assert seen == ["s", "s", "s", "s", None]


async def test_a_stray_block_answer_refuses_and_widens_nothing(start: Start) -> None:
    """HELD. `BLOCK_VIEW` reaching the gate as a plain answer (a front end that passes it on for a model's call)
    is a refusal: not a yes, no rule remembered."""
    session = await start()
    gate = session.gate

    async def ask(tool: Any, args: dict[str, Any]) -> str:
        return BLOCK_VIEW

    gate.ask = ask
    before = gate.rules.allow
    decision = await session.model_call("s")
    assert not decision.allowed and "declined" in decision.reason
    assert gate.rules.allow == before


async def test_the_api_callback_hears_the_view_on_a_hook_ask_and_none_for_the_model(start: Start) -> None:
    """HELD. The API's `can_use_tool` (api/permissions.py) is told `context.view` on every ask path, None for
    the model's; a refusal of a view's call is a refusal."""
    from mini_claude.hooks.outcomes import HookPermission

    session = await start()
    heard: list[tuple[str, str | None]] = []

    async def can_use_tool(name: str, args: dict[str, Any], context: ToolPermissionContext) -> Any:
        heard.append((name, context.view))
        return PermissionResultDeny(message="no pages") if context.view else PermissionResultDeny(message="no")

    gate = session.gate
    gate.ask = asker(can_use_tool)
    entry = McpToolEntry("s", _tool("t"), "mcp__s__t")
    adapter = session.repl.parts.apps.gate.adapters.adapter(entry)
    assert not (await gate.check(adapter, {}, view="s", hook=HookPermission("ask", "hook"))).allowed
    assert not (await gate.check(adapter, {})).allowed
    assert heard == [("mcp__s__t", "s"), ("mcp__s__t", None)]


# ---- 4. the theme POST: who may send it, what it may carry -----------------------------------------------------

async def _raw(port: int, head: str, body: bytes = b"") -> int:
    """The status of one request written by hand (no client adds an Origin)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.encode() + body)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), 5)
    finally:
        writer.close()
    return int(line.split(b" ", 2)[1])


async def test_only_the_current_page_says_the_theme_and_only_a_theme(server: ViewServer, said: PageWords, inbox: Inbox,
                                                                   client: httpx.AsyncClient) -> None:
    """HELD. The theme POST takes the same checks as a view's message: another origin (a view's own
    `http://localhost:Pv`, another web site), no Origin, a cross-site fetch, the wrong token, an older or unknown
    page — all refused, the scheme unchanged. A theme outside `THEMES` (a long string, a control character, an
    object carrying more hostContext), a theme beside a `message` but no `view`, a body past the limit: refused.
    A theme with extra keys is refused (nothing rides along with it); a theme beside a view's message is that
    view's message. A flood of flips is just that many calls of the callback (nothing queues, nothing grows)."""
    themes = said.themes
    server.add_view(view("v1"))
    theme = {"page": PAGE_A, "theme": "light"}
    async with events(client, server, PAGE_A):
        assert (await post(client, server, theme)).status_code == 204  # the page itself: taken
        assert themes == ["light"]
        view_origin = server.view_origin("v1")
        for headers in ({"Origin": view_origin}, {"Origin": "http://evil.example"},
                        {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}):
            assert (await post(client, server, {**theme, "theme": "dark"}, **headers)).status_code == 403
        port = int(server.host_origin.rsplit(":", 1)[1])
        body = json.dumps({**theme, "theme": "dark"}).encode()
        assert await _raw(port, f"POST /{server.token}/rpc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                          f"Content-Length: {len(body)}\r\n\r\n", body) == 403  # no Origin
        wrong = await client.post(server.page_url.replace(server.token, "x" + server.token[1:]) + "rpc",
                                  content=body, headers={"Origin": server.host_origin})
        assert wrong.status_code == 404
        assert (await post(client, server, {**theme, "page": PAGE_B, "theme": "dark"})).status_code == 409
        for bad in ("DARK", "dark ", "dark\x1b", "x" * 100_000, {"theme": "dark", "fontFamily": "x"},
                    ["dark"], None, 1):
            assert (await post(client, server, {**theme, "theme": bad})).status_code == 400
        assert (await post(client, server, {**theme, "theme": "dark", "message": {}})).status_code == 400
        huge = json.dumps({**theme, "pad": "x" * MAX_BODY_BYTES}).encode()
        assert (await post(client, server, huge)).status_code == 413
        assert themes == ["light"]  # none of those changed it

        extra = {**theme, "theme": "dark", "styles": {"variables": {"--x": "url(http://evil)"}}}
        assert (await post(client, server, extra)).status_code == 400  # nothing rides along with a theme
        assert (await post(client, server, {**theme, "theme": "dark"})).status_code == 204
        both = {**theme, "view": "v1", "message": {"jsonrpc": "2.0", "method": "m"}}
        assert (await post(client, server, both)).status_code == 204
        await eventually(lambda: inbox.got, "the view's message")
        assert themes == ["light", "dark"] and inbox.got == [("v1", {"jsonrpc": "2.0", "method": "m"})]

        flips = [post(client, server, {**theme, "theme": THEMES[n % 2]}) for n in range(200)]
        assert {r.status_code for r in await asyncio.gather(*flips)} == {204}
        assert len(themes) == 202 and set(themes) <= set(THEMES)
    async with events(client, server, PAGE_B):  # a newer page: the older one may not say the scheme any more
        assert (await post(client, server, theme)).status_code == 409
    assert len(themes) == 202 and said.modes == []


async def test_a_theme_flood_tells_each_live_view_once_per_change_and_never_a_torn_down_one(world: World) -> None:
    """HELD. The page flips the scheme 200 times: each live view hears one host-context-changed per actual
    change (only `{"theme"}`, one of THEMES), a repeat sends nothing, a view torn down hears nothing more, and a
    view that has not initialized hears nothing (it gets the scheme in its initialize result)."""
    _a, live = await world.shown()
    await world.initialized(live)
    _b, gone = await world.shown()
    await world.initialized(gone)
    _c, loading = await world.shown()
    await world.channel.post(gone, "ui/notifications/request-teardown", request=False)
    await eventually(lambda: gone not in [v.view_id for v in world.apps.views], "the teardown")
    before_gone = len(methods(world.channel, gone))
    for n in range(200):
        world.channel.events.theme_changed(THEMES[n % 2])
        world.channel.events.theme_changed(THEMES[n % 2])  # a repeat
    changed = [m["params"] for m in world.channel.notifications(live)
               if m["method"] == "ui/notifications/host-context-changed"]
    assert len(changed) == 200 and all(p == {"theme": THEMES[n % 2]} for n, p in enumerate(changed))
    assert "ui/notifications/host-context-changed" not in methods(world.channel, loading)
    assert len(methods(world.channel, gone)) == before_gone
    answer_ = await world.request(loading, "ui/initialize", {})
    assert answer_["result"]["hostContext"]["theme"] == THEMES[199 % 2]


if sys.platform == "win32":  # pragma: no cover
    pytest.skip("loopback sockets as on POSIX", allow_module_level=True)
