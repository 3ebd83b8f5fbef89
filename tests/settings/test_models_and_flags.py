"""Model aliases, `--settings`, Claude Code's space-separated list flags, and the price of a model with no known
price (issue 20). The real CLI against the mock model; what the mock received is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mini_claude.models.base import Usage
from mini_claude.models.factory import MODEL_ALIASES, create_model
from mini_claude.models.pricing import cost_usd, known_price
from tests.integration.conftest import answer, probe_entry, result_text, tool_results, tool_use
from tests.settings.conftest import SettingsCli, models_sent

pytestmark = pytest.mark.timeout(120)

# what Claude Code 2.1.328 sends for each alias (measured against the mock model)
CLAUDE_CODE_IDS = {"opus": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5",
                   "fable": "claude-fable-5-2"}


def test_aliases_are_claude_codes_ids() -> None:
    assert MODEL_ALIASES == CLAUDE_CODE_IDS


@pytest.mark.parametrize("alias", sorted(CLAUDE_CODE_IDS))
def test_model_flag_alias_is_sent_as_the_full_id(cli: SettingsCli, alias: str) -> None:
    mock = cli.mock([answer("hi")])
    r = cli.run("-p", "--model", alias.upper() if alias == "opus" else alias, "hi")
    assert r.rc == 0, r.stderr
    assert models_sent(mock) == [CLAUDE_CODE_IDS[alias]]


def test_model_from_settings_env_and_overrides(cli: SettingsCli) -> None:
    cli.user_settings({"model": "opus"})
    mock = cli.mock([answer("1"), answer("2"), answer("3"), answer("4")])
    assert cli.run("-p", "hi").rc == 0
    # Claude Code's order: --model, then ANTHROPIC_MODEL, then the settings' model
    assert cli.run("-p", "hi", env={"ANTHROPIC_MODEL": "haiku"}).rc == 0
    assert cli.run("-p", "--model", "sonnet", "hi", env={"ANTHROPIC_MODEL": "haiku"}).rc == 0
    assert cli.run("-p", "hi", env={"ANTHROPIC_DEFAULT_OPUS_MODEL": "my-gateway-opus"}).rc == 0
    assert models_sent(mock) == ["claude-opus-5-5", "claude-haiku-5-5", "claude-sonnet-5-5", "my-gateway-opus"]


def test_help_lists_the_aliases() -> None:
    out = subprocess.run([sys.executable, "-m", "mini_claude", "--help"], capture_output=True, text=True,
                         timeout=60).stdout
    flat = " ".join(out.split()).replace("- ", "-")  # argparse wraps lines at a hyphen
    assert all(f"`{alias}` ({CLAUDE_CODE_IDS[alias]})" in flat for alias in CLAUDE_CODE_IDS)
    assert "`opusplan`" in flat and "--settings FILE_OR_JSON" in flat


def test_settings_flag_file_and_json_are_layered_last(cli: SettingsCli) -> None:
    cli.user_settings({"model": "haiku", "permissions": {"deny": ["Bash(rm:*)"]}})
    cli.project_settings({"model": "sonnet"}, name="settings.local.json")
    flag_file = cli.tmp / "flag-settings.json"
    flag_file.write_text(json.dumps({"model": "opus", "permissions": {"allow": ["Bash(touch:*)"]}}))
    mock = cli.mock([tool_use("Bash", {"command": "touch made-by-flag-rule"}), answer("ok"), answer("2")])
    r = cli.run("-p", "--trust", "--settings", str(flag_file), "go")
    assert r.rc == 0, r.stderr
    assert models_sent(mock)[0] == "claude-opus-5-5"  # over the local file's sonnet and the user's haiku
    assert (cli.work / "made-by-flag-rule").exists()  # the flag's allow rule let it run without asking
    assert cli.run("-p", "--settings", '{"model": "haiku"}', "hi").rc == 0
    assert models_sent(mock)[-1] == "claude-haiku-5-5"


@pytest.mark.parametrize(("value", "message"), [
    ("missing.json", "--settings missing.json: no such file"),
    ('{"model": ', "--settings (JSON): invalid JSON"),
    ("[1]", "--settings [1]: no such file"),
])
def test_an_unusable_settings_flag_is_bad_usage(cli: SettingsCli, value: str, message: str) -> None:
    mock = cli.mock([answer("never")])
    r = cli.run("-p", "--settings", value, "hi")
    assert r.rc == 2
    assert message in r.stderr
    assert mock.requests == []


def test_space_separated_list_flags(cli: SettingsCli) -> None:
    a = cli.config_file({"a": probe_entry()}, name="a.json")
    b = cli.config_file({"b": probe_entry()}, name="b.json")
    other = cli.tmp / "other"
    other.mkdir()
    (other / "note.txt").write_text("from the added folder")
    mock = cli.mock([tool_use("mcp__a__echo", {"text": "A"}), tool_use("mcp__b__echo", {"text": "B"}),
                     tool_use("Read", {"file_path": str(other / "note.txt")}),
                     tool_use("Bash", {"command": "echo no"}), answer("done")])
    # Claude Code's own command line: the prompt after `--` (its parser takes every word up to the next option)
    r = cli.run("-p", "--mcp-config", a, b, "--allowedTools", "mcp__a__echo", "mcp__b__echo", "Read",
                "--disallowedTools", "Bash", "Edit", "--add-dir", str(other), "--", "use both")
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr  # answered, with the Bash call denied on the way
    texts = [result_text(block) for block in tool_results(mock)]
    assert texts[0] == "probe-echo:echo:A" and texts[1] == "probe-echo:echo:B"
    assert texts[2].endswith("from the added folder")
    assert "denied" in texts[3].lower()
    first = mock.requests[0]["body"]["messages"][0]["content"]
    assert "use both" in json.dumps(first)


@pytest.mark.parametrize("args", [
    ["--mcp-config", "{a}", "{b}", "fix the bug"],
    ["--allowedTools", "Edit", "Read", "fix the bug"],
    ["--add-dir", "{other}", "fix the bug"],
    ["fix the bug", "--mcp-config", "{a}", "{b}"],
])
def test_a_prompt_after_a_list_flag_is_the_prompt(cli: SettingsCli, args: list[str]) -> None:
    """Where Claude Code would read `fix the bug` as a config file / rule / folder and fail, a last word that cannot
    be the option's value is the prompt."""
    paths = {"a": cli.config_file({}, name="a.json"), "b": cli.config_file({}, name="b.json"),
             "other": str(cli.tmp)}
    mock = cli.mock([answer("ok")])
    r = cli.run("-p", *[arg.format(**paths) for arg in args])
    assert r.rc == 0, r.stderr
    assert "fix the bug" in json.dumps(mock.requests[0]["body"]["messages"][0])


def test_a_missing_mcp_config_file_is_bad_usage(cli: SettingsCli) -> None:
    a = cli.config_file({}, name="a.json")
    mock = cli.mock([answer("never")])
    r = cli.run("-p", "--mcp-config", a, "missing.json", "hi")
    assert r.rc == 2
    assert "mini-claude: --mcp-config missing.json: no such file" in r.stderr
    r = cli.run("-p", "--mcp-config", "gone.json", "--", "hi")
    assert r.rc == 2 and "--mcp-config gone.json: no such file" in r.stderr
    assert mock.requests == []


def test_a_local_model_costs_zero_and_unknown(cli: SettingsCli) -> None:
    """A local OpenAI-compatible server is not priced at a paid model's rates, whatever its model is called."""
    mock = cli.mock([answer("ok")])
    url = cli.env.pop("ANTHROPIC_BASE_URL")
    env = {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}
    r = cli.run("-p", "--output-format", "json", "--model", "gpt-4o", "hi", env=env)
    assert r.rc == 0, r.stderr
    assert mock.requests[0]["path"] == "/v1/chat/completions"
    assert r.json()["total_cost_usd"] == 0
    local = create_model("gpt-4o", {"OPENAI_BASE_URL": f"{url}/v1"})
    assert not known_price(local) and cost_usd(local, Usage(1_000_000, 1_000_000)) == 0
    openai = create_model("gpt-4o", {"OPENAI_API_KEY": "sk"})
    assert known_price(openai) and cost_usd(openai, Usage(1_000_000, 0)) == 2.5
    # an Anthropic gateway bills Claude models at list price, as Claude Code counts them
    claude = create_model("opus", {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": url})
    assert cost_usd(claude, Usage(1_000_000, 1_000_000)) == 24.0  # claude-opus-5-5: $4 + $20
    assert not known_price("llama3") and not known_price("my-opus-finetune")
    # Claude Code's own costUSD for its alias ids (2.1.197 on the mock: 20556 in, 8 out for fable → $0.20596)
    assert round(cost_usd("claude-fable-5", Usage(20556, 8)), 6) == 0.20596
    assert round(cost_usd("claude-opus-4-8", Usage(19437, 8)), 6) == 0.097385
    # (2.1.328 prices claude-sonnet-5 lower: 22058 in, 8 out → $0.044196)
    assert round(cost_usd("claude-sonnet-5", Usage(22058, 8)), 6) == 0.044196
    assert round(cost_usd("claude-haiku-4-5-20251001", Usage(29267, 8)), 6) == 0.029307


async def test_the_repl_model_command_resolves_an_alias(tmp_path: Path) -> None:
    import argparse
    import io
    from types import SimpleNamespace

    from mini_claude.agent.compaction import ContextWindow
    from mini_claude.cli.repl import Repl
    from mini_claude.cli.terminal.render import TerminalUI
    from mini_claude.models.anthropic_http import AnthropicHttpModel
    from mini_claude.models.factory import MODEL_ALIASES

    model = AnthropicHttpModel("claude-sonnet-5", api_key="k", base_url="http://127.0.0.1:9")
    repl = Repl(argparse.Namespace())
    repl.ui = TerminalUI(out=io.StringIO(), err=io.StringIO())
    home = {"HOME": str(tmp_path)}
    window = ContextWindow(200_000)
    repl.parts = SimpleNamespace(agent=SimpleNamespace(model=model, context=window), env=home)
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"theme": "dark"}')
    await repl._slash("/model opus")
    assert model.name == MODEL_ALIASES["opus"] and window.tokens == 1_000_000  # the window follows the model
    # remembered, as in Claude Code, in the user's settings for the next sessions (the rest of the file kept)
    assert json.loads(settings.read_text()) == {"theme": "dark", "model": "opus"}
    repl.parts.env = {**home, "ANTHROPIC_DEFAULT_HAIKU_MODEL": "claude-haiku-custom"}
    await repl._slash("/model haiku")
    assert model.name == "claude-haiku-custom"
    await repl._slash("/model my-own-model")
    assert model.name == "my-own-model" and "my-own-model" in repl.ui.err.getvalue()  # a warning, not a failure
    assert window.tokens == 200_000  # a model the table does not know: the default window
    assert json.loads(settings.read_text())["model"] == "my-own-model"
