"""The MCP host's services on their own: sampling policy, conversion and rate limit; elicitation checks and retries;
server logs on disk and on screen; roots; the REPL's form field reader. Servers are played by direct calls here;
tests/integration/test_host_everything.py and test_host_cli.py run the same paths against real servers."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from mini_claude.cli.questions.host_ui import read_field, sampling_summary
from mini_claude.errors import JsonRpcError
from mini_claude.mcp.config_entry import ServerConfig, parse_entry
from mini_claude.mcp.host import (
    ElicitationService,
    FormAnswer,
    FormRequest,
    NoQuestionsUI,
    Roots,
    SamplingChoice,
    SamplingRequest,
    SamplingService,
    ServerLogs,
    UrlRequest,
    sampling_policy,
)
from mini_claude.models.base import AssistantTurn, GenerationOptions, ToolSpec


class ScriptedUI(NoQuestionsUI):
    """Answers from lists, recording what it was asked."""

    interactive = True

    def __init__(self, *, sampling: list[SamplingChoice] | None = None, forms: list[FormAnswer] | None = None,
                 urls: list[str] | None = None) -> None:
        super().__init__()
        self.sampling, self.forms, self.urls = list(sampling or []), list(forms or []), list(urls or [])
        self.asked: list[Any] = []

    async def approve_sampling(self, request: SamplingRequest) -> SamplingChoice:
        self.asked.append(request)
        return self.sampling.pop(0)

    async def fill_form(self, request: FormRequest) -> FormAnswer:
        self.asked.append(request)
        return self.forms.pop(0)

    async def open_url(self, request: UrlRequest) -> str:
        self.asked.append(request)
        return self.urls.pop(0)


class RecordingModel:
    name = "recorder"

    def __init__(self, content: list[dict[str, Any]] | None = None, stop: str = "end_turn") -> None:
        self.content = content or [{"type": "text", "text": "an answer"}]
        self.stop = stop
        self.calls: list[dict[str, Any]] = []

    async def complete(self, *, system: str, messages: list[dict[str, Any]], tools: list[ToolSpec],
                       on_text: Any = None, options: GenerationOptions | None = None) -> AssistantTurn:
        self.calls.append({"system": system, "messages": messages, "tools": tools, "options": options})
        return AssistantTurn(self.content, self.stop)


REQUEST = {"messages": [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}],
           "systemPrompt": "Be brief.", "maxTokens": 77, "temperature": 0.2, "stopSequences": ["END"],
           "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}]}}


# ---- sampling ------------------------------------------------------------------------------------------------


async def test_allowed_sampling_passes_the_request_settings_to_the_model() -> None:
    model = RecordingModel()
    service = SamplingService(lambda: model, ScriptedUI(), policies={"s": "allow"})
    result = await service.create_message("s", REQUEST)
    assert result == {"role": "assistant", "content": {"type": "text", "text": "an answer"}, "model": "recorder",
                      "stopReason": "endTurn"}
    call = model.calls[0]
    assert call["system"] == "Be brief." and call["tools"] == []
    assert call["messages"] == [{"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]}]
    assert call["options"] == GenerationOptions(max_tokens=77, temperature=0.2, stop_sequences=("END",))


async def test_ask_once_always_and_deny() -> None:
    model = RecordingModel()
    ui = ScriptedUI(sampling=[SamplingChoice.DENY, SamplingChoice.ONCE, SamplingChoice.ALWAYS])
    service = SamplingService(lambda: model, ui)  # "ask" is the default
    with pytest.raises(JsonRpcError) as denied:
        await service.create_message("s", REQUEST)
    assert denied.value.code == -1 and "rejected" in denied.value.rpc_message and not model.calls
    await service.create_message("s", REQUEST)
    await service.create_message("s", REQUEST)  # "always" from here on
    await service.create_message("s", REQUEST)
    assert len(ui.asked) == 3 and len(model.calls) == 3
    assert ui.asked[0].server == "s" and ui.asked[0].system_prompt == "Be brief." and ui.asked[0].max_tokens == 77


async def test_nobody_to_ask_means_deny_and_deny_policy_never_asks() -> None:
    model = RecordingModel()
    with pytest.raises(JsonRpcError) as asked:
        await SamplingService(lambda: model, NoQuestionsUI()).create_message("s", REQUEST)
    ui = ScriptedUI()
    with pytest.raises(JsonRpcError) as denied:
        await SamplingService(lambda: model, ui, policies={"s": "deny"}).create_message("s", REQUEST)
    assert asked.value.code == denied.value.code == -1 and not ui.asked and not model.calls


async def test_rate_limit_per_server_and_window() -> None:
    now = [0.0]
    service = SamplingService(lambda: RecordingModel(), ScriptedUI(), policies={"a": "allow", "b": "allow"},
                              rate_limit=2, rate_window_s=60, clock=lambda: now[0])
    await service.create_message("a", REQUEST)
    await service.create_message("a", REQUEST)
    with pytest.raises(JsonRpcError, match="at most 2 per 60 s"):
        await service.create_message("a", REQUEST)
    await service.create_message("b", REQUEST)  # another server has its own budget
    now[0] = 60.0
    await service.create_message("a", REQUEST)


async def test_tool_use_inside_sampling_round_trips() -> None:
    model = RecordingModel([{"type": "text", "text": "checking"},
                            {"type": "tool_use", "id": "t2", "name": "weather", "input": {"city": "Oslo"}}],
                           stop="tool_use")
    params = {"maxTokens": 100, "tools": [{"name": "weather", "description": "w", "inputSchema": {
        "type": "object", "properties": {"city": {"type": "string"}}}}], "toolChoice": {"mode": "auto"},
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "weather?"}},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "toolUseId": "t1", "isError": True,
                                          "content": [{"type": "text", "text": "city missing"}]}]}]}
    result = await SamplingService(lambda: model, ScriptedUI(), policies={"s": "allow"}).create_message("s", params)
    assert result["stopReason"] == "toolUse"
    assert result["content"][1] == {"type": "tool_use", "id": "t2", "name": "weather", "input": {"city": "Oslo"}}
    call = model.calls[0]
    assert [t.name for t in call["tools"]] == ["weather"]
    assert call["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                                               "content": [{"type": "text", "text": "city missing"}]}]
    params["toolChoice"] = {"mode": "none"}
    await SamplingService(lambda: model, ScriptedUI(), policies={"s": "allow"}).create_message("s", params)
    assert model.calls[1]["tools"] == []


@pytest.mark.parametrize(("params", "says"), [
    ({"messages": [], "maxTokens": 5}, "messages must be a non-empty list"),
    ({"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]}, "maxTokens"),
    ({"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}], "maxTokens": 5}, "role"),
    ({"messages": [{"role": "user", "content": {"type": "audio", "data": "x"}}], "maxTokens": 5}, "'audio'"),
])
async def test_malformed_requests_are_refused_with_a_reason(params: dict[str, Any], says: str) -> None:
    model = RecordingModel()
    with pytest.raises(JsonRpcError, match=says) as refused:
        await SamplingService(lambda: model, ScriptedUI(), policies={"s": "allow"}).create_message("s", params)
    assert refused.value.code == -32602 and not model.calls


def test_a_repository_cannot_allow_sampling_for_itself() -> None:
    project = ServerConfig(name="p", type="stdio", command="x", sampling="allow", scope="project")
    assert sampling_policy(project) == "ask"
    for scope in ("user", "local", "cli"):
        assert sampling_policy(ServerConfig(name="u", type="stdio", command="x", sampling="allow", scope=scope)) \
            == "allow"


def test_sampling_and_log_level_settings_are_checked() -> None:
    good = parse_entry("s", {"command": "x", "sampling": "deny", "logLevel": "warning"}, file="f", key="k",
                       env={}, scope="user")
    assert good.config is not None and good.config.sampling == "deny" and good.config.log_level == "warning"
    bad = parse_entry("s", {"command": "x", "sampling": "yes", "logLevel": "loud"}, file="f", key="k", env={},
                      scope="user")
    assert [str(e) for e in bad.errors] == [
        'f: k.sampling: must be one of ask, allow, deny, got "yes"',
        'f: k.logLevel: must be one of debug, info, notice, warning, error, critical, alert, emergency, got "loud"']


def test_the_user_sees_the_request_cleaned() -> None:
    request = SamplingRequest("srv\x1b[31m", "sys\x07tem", [{"role": "user", "content": {"type": "text",
                                                                                            "text": "hi\x9b2J"}}], 9)
    text = "\n".join(sampling_summary(request))
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "up to 9 tokens" in text and "user: hi" in text


# ---- elicitation ---------------------------------------------------------------------------------------------

SCHEMA = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "minLength": 2}, "age": {"type": "integer", "minimum": 0, "default": 30}}}


async def test_form_answers_are_checked_and_defaults_filled() -> None:
    ui = ScriptedUI(forms=[FormAnswer("accept", {"name": "A"}), FormAnswer("accept", {"name": "Ada"})])
    result = await ElicitationService(ui).elicit("s", {"message": "Who?", "requestedSchema": SCHEMA})
    assert result == {"action": "accept", "content": {"name": "Ada", "age": 30}}
    assert len(ui.asked) == 2 and ui.asked[0].message == "Who?"


async def test_a_form_never_answered_correctly_is_cancelled_and_decline_passes_through() -> None:
    wrong = FormAnswer("accept", {"name": 5})
    assert await ElicitationService(ScriptedUI(forms=[wrong] * 3)).elicit(
        "s", {"message": "", "requestedSchema": SCHEMA}) == {"action": "cancel"}
    assert await ElicitationService(ScriptedUI(forms=[FormAnswer("decline")])).elicit(
        "s", {"message": "", "requestedSchema": SCHEMA}) == {"action": "decline"}
    assert await ElicitationService(NoQuestionsUI()).elicit(
        "s", {"message": "", "requestedSchema": SCHEMA}) == {"action": "decline"}


async def test_nested_schemas_and_bad_url_requests_are_refused() -> None:
    nested = {"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}
    with pytest.raises(JsonRpcError, match="not a primitive"):
        await ElicitationService(ScriptedUI()).elicit("s", {"message": "", "requestedSchema": nested})
    with pytest.raises(JsonRpcError, match="url and elicitationId"):
        await ElicitationService(ScriptedUI()).elicit("s", {"mode": "url", "message": "", "url": "https://x"})


async def test_url_mode_and_the_url_required_error() -> None:
    ui = ScriptedUI(urls=["accept", "decline"])
    service = ElicitationService(ui)
    assert await service.elicit("s", {"mode": "url", "message": "Log in", "url": "https://a.example/x",
                                      "elicitationId": "e1"}) == {"action": "accept"}
    error = JsonRpcError(-32042, "needs a browser", {"elicitations": [
        {"mode": "url", "url": "https://b.example/y", "message": "Open it", "elicitationId": "e2"}]})
    assert await service.url_elicitations("s", error) == [
        "The server asked the user to open a web page (https://b.example/y): the user declined to open it."]
    assert [(r.url, r.elicitation_id) for r in ui.asked] == [("https://a.example/x", "e1"), ("https://b.example/y", "e2")]


# ---- logs ----------------------------------------------------------------------------------------------------


def test_logs_go_to_a_private_file_and_warnings_to_the_screen_rate_limited(tmp_path: Path) -> None:
    now = [0.0]
    ui = NoQuestionsUI()
    logs = ServerLogs(tmp_path / "logs", ui, clock=lambda: now[0])
    logs.record("../evil", {"level": "info", "logger": "db", "data": "connected"})
    logs.record("../evil", {"level": "error", "data": {"code": 7}})
    for i in range(5):
        logs.record("../evil", {"level": "warning", "data": f"w{i}"})
    now[0] = 11.0
    logs.record("../evil", {"level": "critical", "data": "down"})
    path = logs.path("../evil")
    assert path.parent == tmp_path / "logs" and path.name == "_evil.log"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    lines = path.read_text().splitlines()
    assert len(lines) == 8 and lines[0].endswith("INFO db: connected") and lines[1].endswith('ERROR : {"code": 7}')
    shown = [text for _, text in ui.notices]
    assert shown == ['[error] {"code": 7}', "[warning] w0", "[warning] w1", f"[critical] down (3 more in {path})"]


def test_a_log_file_symlink_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("keep")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "s.log").symlink_to(target)
    ServerLogs(tmp_path / "logs", NoQuestionsUI()).record("s", {"level": "info", "data": "x"})
    assert target.read_text() == "keep"


# ---- roots ---------------------------------------------------------------------------------------------------


def test_roots_are_resolved_uris_listed_once(tmp_path: Path) -> None:
    (tmp_path / "a b").mkdir()
    roots = Roots([tmp_path, tmp_path / "a b" / ".."])
    assert roots.add(tmp_path / "a b") and not roots.add(tmp_path)
    assert roots.listing() == {"roots": [{"uri": tmp_path.resolve().as_uri(), "name": tmp_path.name},
                                         {"uri": (tmp_path / "a b").resolve().as_uri(), "name": "a b"}]}
    assert "%20" in roots.listing()["roots"][1]["uri"]


# ---- the REPL's form reader ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("prop", "typed", "value", "problem"), [
    ({"type": "string"}, "  Ada ", "Ada", None),
    ({"type": "string"}, "", None, None),
    ({"type": "integer"}, "42", 42, None),
    ({"type": "integer"}, "4.5", None, "'4.5' is not an integer"),
    ({"type": "number"}, "3.5", 3.5, None),
    ({"type": "boolean"}, "y", True, None),
    ({"type": "boolean"}, "maybe", None, "answer y or n"),
    ({"type": "string", "enum": ["red", "green"]}, "2", "green", None),
    ({"type": "string", "enum": ["red", "green"]}, "blue", None, "'blue' is not one of the choices"),
    ({"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}]}, "Superman", "h1", None),
    ({"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]}, "Dogs", "p2", None),
    ({"type": "array", "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Cod"}]}},
     "1, Cod", ["f1", "f2"], None),
])
def test_read_field(prop: dict[str, Any], typed: str, value: Any, problem: str | None) -> None:
    assert read_field(prop, typed) == (value, problem)


async def test_slash_mcp_log_shows_the_tail_of_the_servers_log_cleaned(tmp_path: Path) -> None:
    import io

    from mini_claude.cli.mcp.panel import mcp_command
    from mini_claude.cli.terminal.render import TerminalUI
    from mini_claude.mcp.host import McpHost
    from mini_claude.mcp.manager import McpManager

    ui = NoQuestionsUI()
    host = McpHost(ui, roots=[tmp_path], model=lambda: None, log_dir=tmp_path / "logs")
    manager = McpManager([ServerConfig(name="s", type="stdio", command="true")], env={})
    out = io.StringIO()
    terminal = TerminalUI(out=out, err=out, rich_output=False)
    await mcp_command(manager, "log s", terminal, out=out, host=host)
    assert out.getvalue() == "  s has logged nothing so far\n"
    for i in range(25):
        host.logs.record("s", {"level": "info", "data": f"line {i}\x1b[2J"})
    out.seek(0)
    out.truncate()
    await mcp_command(manager, "log s", terminal, out=out, host=host)
    lines = out.getvalue().splitlines()
    assert len(lines) == 21 and lines[0].endswith("INFO : line 5") and lines[-2].endswith("INFO : line 24")
    assert lines[-1] == f"  (the whole log: {host.logs.path('s')})" and "\x1b" not in out.getvalue()


def test_only_https_urls_are_opened() -> None:
    from mini_claude.cli.questions.host_ui import is_openable_url

    assert is_openable_url("https://example.com/login?x=1") and is_openable_url("http://127.0.0.1:8080/cb")
    for url in ("file:///etc/passwd", "vscode://x", "http://example.com", "javascript:alert(1)",
                "https://exa\x1bmple.com", "ms-msdt:/id", "https://"):
        assert not is_openable_url(url), url


def test_custom_commands_never_read_devices_or_leave_the_project(tmp_path: Path) -> None:
    from mini_claude.agent.commands import load_commands

    commands = tmp_path / "work" / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "zero.md").symlink_to("/dev/zero")
    (tmp_path / "outside.md").write_text("secret prompt")
    (commands / "out.md").symlink_to(tmp_path / "outside.md")
    (commands / "ok.md").write_text("fine")
    found, warnings = load_commands(tmp_path / "work", tmp_path / "home")
    # both links are refused unopened and each says so (the device link used to be skipped silently)
    assert list(found) == ["/ok"] and len(warnings) == 2
    assert all("leads outside the project" in warning for warning in warnings), warnings
    assert any("zero.md" in w and "/dev/zero" in w for w in warnings) and any("out.md" in w for w in warnings)


def test_a_tool_that_needs_tasks_is_offered_only_by_a_server_that_takes_them() -> None:
    from types import SimpleNamespace

    from mini_claude.mcp.protocol import McpTool
    from mini_claude.mcp.server_state import McpToolEntry
    from mini_claude.tools.mcp_tool import McpToolAdapters

    task_tool = McpTool.from_wire({"name": "slow", "inputSchema": {"type": "object"},
                                   "execution": {"taskSupport": "required"}})
    plain = McpTool.from_wire({"name": "fast", "inputSchema": {"type": "object"}})
    assert task_tool is not None and plain is not None
    entries = [McpToolEntry("a", task_tool, "mcp__a__slow"), McpToolEntry("a", plain, "mcp__a__fast"),
               McpToolEntry("b", task_tool, "mcp__b__slow")]
    caps = {"a": {}, "b": {"tasks": {"requests": {"tools": {"call": {}}}}}}
    states = {name: SimpleNamespace(client=SimpleNamespace(server_capabilities=c)) for name, c in caps.items()}
    manager = SimpleNamespace(tools=lambda: entries, states=states, env={})
    assert [a.name for a in McpToolAdapters(manager)()] == ["mcp__a__fast", "mcp__b__slow"]  # type: ignore[arg-type]


async def test_a_servers_stderr_is_kept_in_its_log_from_the_first_byte(tmp_path: Path) -> None:
    """A session's server that writes to stderr and crashes: its log holds every line, the partial last one too
    (before, only a doctor run kept stderr; a session's `/mcp log` said it had logged nothing)."""
    from mini_claude.mcp.host import McpHost
    from mini_claude.mcp.manager import McpManager
    from mini_claude.tools.base import ToolContext
    from mini_claude.tools.mcp_tool import McpToolAdapters
    from tests.helpers import eventually, server_env
    from tests.integration.conftest import probe_entry

    entry = probe_entry()
    host = McpHost(NoQuestionsUI(), roots=[tmp_path], model=lambda: None, log_dir=tmp_path / "logs")
    manager = McpManager([ServerConfig(name="p", type="stdio", command=entry["command"], args=tuple(entry["args"]))],
                         env=server_env(tmp_path), client_setup=host.setup, client_ready=host.ready)
    host.bind(manager)
    manager.start()
    try:
        await manager.wait_started()
        adapters = {a.name: a for a in McpToolAdapters(manager, host)()}
        await adapters["mcp__p__crash"].run({}, ToolContext(cwd=tmp_path, spill_dir=tmp_path / "spill"))
        await eventually(lambda: host.logs.path("p").exists()
                         and "probe: crashing on purpose" in host.logs.path("p").read_text(), "the stderr line")
        assert "STDERR" in host.logs.path("p").read_text()
    finally:
        await manager.aclose()
