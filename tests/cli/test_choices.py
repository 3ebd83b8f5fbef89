"""Choices that stick (issue 29), part by part: `/model`'s rows and what it saves (cli/slash/choices.py), `/config`
(cli/slash/config.py), the `editorMode` setting, and the `statusLine` command (cli/terminal/status_line.py): its
trust, its input, its output cleaning, its timeout and process group. The REPL in a terminal:
test_repl_choices.py."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mini_claude.agent.compaction import ContextWindow
from mini_claude.cli.slash.choices import model_choices, model_command, remember_setting
from mini_claude.cli.slash.config import ITEMS, config_command, config_rows, in_force
from mini_claude.cli.terminal.picker import Option
from mini_claude.cli.terminal.status_line import (
    StatusLine,
    StatusLineSpec,
    keep_colours,
    status_input,
    status_line_spec,
)
from mini_claude.errors import ConfigError
from mini_claude.models.anthropic_http import AnthropicHttpModel
from mini_claude.models.base import Usage
from mini_claude.permissions import PermissionMode
from mini_claude.settings import Settings, load_settings, setting_source
from mini_claude.settings_trust import without_project_widening
from tests.helpers import assert_group_gone, eventually, read_pidfile


class Picks:
    """A stand-in for the REPL's picker: answers with the given row numbers, records what it was shown."""

    def __init__(self, *answers: int | None) -> None:
        self.answers = list(answers)
        self.shown: list[tuple[str, list[Option], int]] = []
        self.vim: list[bool] = []

    async def choose(self, title: str, options: Sequence[Option], default: int = 0) -> int | None:
        self.shown.append((title, list(options), default))
        return self.answers.pop(0)

    def set_editor_mode(self, vim: bool) -> None:
        self.vim.append(vim)


def _parts(tmp_path: Path, **env: str) -> Any:
    model = AnthropicHttpModel("claude-opus-5-5", api_key="k", base_url="http://127.0.0.1:9")
    return SimpleNamespace(agent=SimpleNamespace(model=model, context=ContextWindow(200_000)),
                           env={"HOME": str(tmp_path), **env}, trusted=True)


def _user_file(tmp_path: Path, data: dict[str, Any] | None = None) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    if data is not None:
        path.write_text(json.dumps(data))
    return path


# --- /model


def test_the_model_rows_name_each_alias_with_its_id_and_facts() -> None:
    rows = model_choices({"ANTHROPIC_DEFAULT_HAIKU_MODEL": "claude-haiku-custom"})
    assert [r.name for r in rows] == ["default", "opus", "sonnet", "haiku", "fable", "opusplan"]
    assert rows[2].model_id == "claude-sonnet-5-5"
    assert rows[2].option.detail == "claude-sonnet-5-5 · Sonnet 5.5, 1000k context, 128k output · $2/$10 per Mtok"
    assert rows[3].model_id == "claude-haiku-custom" and "not in this version's table" in rows[3].option.detail
    assert rows[5].option.detail == "claude-opus-5-5 in plan mode, claude-sonnet-5-5 otherwise"
    assert model_choices({})[3].option.detail.endswith("Haiku 5.5, 1000k context, 128k output · $0.10/$0.50 per Mtok")


async def test_the_picker_switches_and_saves_the_alias_keeping_the_rest(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    parts = _parts(tmp_path)
    path = _user_file(tmp_path, {"theme": "dark", "permissions": {"allow": ["Read"]}})
    picks = Picks(2)  # sonnet
    assert await model_command(parts, "", choose=picks.choose, warn=pytest.fail)
    title, options, default = picks.shown[0]
    assert "in use: claude-opus-5-5" in title and default == 0  # nothing saved: Default is the current row
    assert options[2].label.strip() == "sonnet"
    assert parts.agent.model.name == "claude-sonnet-5-5" and parts.agent.context.tokens == 1_000_000
    assert json.loads(path.read_text()) == {"theme": "dark", "permissions": {"allow": ["Read"]}, "model": "sonnet"}
    assert 'remembered as "model" in ~/.claude/settings.json' in capsys.readouterr().out
    picks = Picks(None)  # Esc: nothing changes; the saved alias is the current row
    assert not await model_command(parts, "", choose=picks.choose, warn=pytest.fail)
    assert picks.shown[0][2] == 2 and json.loads(path.read_text())["model"] == "sonnet"


async def test_default_removes_the_saved_model_as_claude_code_does(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    path = _user_file(tmp_path, {"model": "haiku", "verbose": True})
    parts.agent.model.switch("haiku", parts.env)
    picks = Picks(0)
    assert await model_command(parts, "", choose=picks.choose, warn=pytest.fail)
    assert picks.shown[0][2] == 3  # haiku was the current row
    assert json.loads(path.read_text()) == {"verbose": True}
    assert parts.agent.model.name == "claude-opus-5-5"


async def test_a_named_model_and_an_environment_that_wins_at_start(tmp_path: Path) -> None:
    parts = _parts(tmp_path, ANTHROPIC_MODEL="claude-opus-5")
    warnings: list[str] = []
    await model_command(parts, "fable", choose=Picks().choose, warn=warnings.append)
    assert parts.agent.model.name == "claude-fable-5-2"
    assert json.loads(_user_file(tmp_path).read_text()) == {"model": "fable"}
    assert warnings == ["ANTHROPIC_MODEL is set in the environment: it wins over the saved choice at the next start"]


async def test_a_broken_settings_file_is_left_alone(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    path = _user_file(tmp_path)
    path.write_text("{not json")
    warnings: list[str] = []
    await model_command(parts, "sonnet", choose=Picks().choose, warn=warnings.append)
    assert parts.agent.model.name == "claude-sonnet-5-5"  # the session switched all the same
    assert path.read_text() == "{not json" and "not remembered" in warnings[0]


def test_remember_setting_sets_and_removes_nested_keys(tmp_path: Path) -> None:
    path = _user_file(tmp_path, {"permissions": {"allow": ["Read"]}})
    remember_setting(path, ("permissions", "defaultMode"), "plan")
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Read"], "defaultMode": "plan"}}
    remember_setting(path, ("permissions", "allow"), None)
    remember_setting(path, ("permissions", "defaultMode"), None)
    assert json.loads(path.read_text()) == {}  # an emptied object goes too
    path.write_text('{"permissions": "odd"}')
    with pytest.raises(ConfigError, match="not an object"):
        remember_setting(path, ("permissions", "defaultMode"), "plan")
    assert path.read_text() == '{"permissions": "odd"}'


async def test_the_next_start_reads_the_saved_model(tmp_path: Path) -> None:
    """What /model saves is what `load_settings` (and so the next session) reads."""
    parts = _parts(tmp_path)
    await model_command(parts, "", choose=Picks(4).choose, warn=pytest.fail)
    work = tmp_path / "work"
    work.mkdir()
    assert load_settings(cwd=work, home=tmp_path).model == "fable"


# --- settings: editorMode, where a key comes from


def test_editor_mode_is_read_and_a_bad_value_reported(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    _user_file(tmp_path, {"editorMode": "vim"})
    settings = load_settings(cwd=work, home=tmp_path)
    assert settings.editor_mode == "vim" and setting_source(settings, ("editorMode",)) == ("vim",
                                                                                           "~/.claude/settings.json")
    (work / ".claude" / "settings.local.json").write_text('{"editorMode": "emacs-ish"}')
    settings = load_settings(cwd=work, home=tmp_path)
    assert settings.editor_mode == "vim"
    assert [str(e) for e in settings.errors] == [
        '.claude/settings.local.json: editorMode: expected "normal" or "vim", got another name']


# --- /config


async def test_config_key_value_saves_to_the_user_file_and_applies_vim_at_once(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    path = _user_file(tmp_path, {"theme": "dark"})
    target = Picks()
    settings = load_settings(cwd=tmp_path / "nowhere", home=tmp_path)
    assert await config_command(parts, "editorMode=vim", on_disk=settings, target=target, warn=pytest.fail,
                                model=pytest.fail, output_style=pytest.fail)
    assert target.vim == [True] and json.loads(path.read_text()) == {"theme": "dark", "editorMode": "vim"}
    assert await config_command(parts, "defaultMode=plan", on_disk=settings, target=target, warn=pytest.fail,
                                model=pytest.fail, output_style=pytest.fail)
    assert await config_command(parts, "alwaysThinkingEnabled=off", on_disk=settings, target=target,
                                warn=pytest.fail, model=pytest.fail, output_style=pytest.fail)
    assert json.loads(path.read_text()) == {"theme": "dark", "editorMode": "vim",
                                            "permissions": {"defaultMode": "plan"}, "alwaysThinkingEnabled": False}
    warnings: list[str] = []
    assert not await config_command(parts, "effortLevel=enormous", on_disk=settings, target=target,
                                    warn=warnings.append, model=pytest.fail, output_style=pytest.fail)
    assert not await config_command(parts, "verbose=true", on_disk=settings, target=target,
                                    warn=warnings.append, model=pytest.fail, output_style=pytest.fail)  # not a setting mini-claude reads
    assert "low, medium, high, xhigh, max, unset" in warnings[0] and warnings[1].startswith("usage: /config")
    assert "effortLevel" not in json.loads(path.read_text())
    styles: list[str] = []  # outputStyle goes to /output-style, which saves it where Claude Code does

    async def output_style(name: str) -> None:
        styles.append(name)

    assert await config_command(parts, "outputStyle=Explanatory", on_disk=settings, target=target,
                                warn=pytest.fail, model=pytest.fail, output_style=output_style)
    assert styles == ["Explanatory"] and "outputStyle" not in json.loads(path.read_text())


async def test_config_picker_lists_values_and_files_then_changes_one(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    (work / ".claude" / "settings.json").write_text('{"permissions": {"defaultMode": "acceptEdits"}}')
    path = _user_file(tmp_path, {"model": "sonnet", "statusLine": {"type": "command", "command": "echo hi"}})
    settings = load_settings(cwd=work, home=tmp_path)
    rows = config_rows(parts, settings)
    assert [r.label.split("  ")[0] for r in rows] == [item.label for item in ITEMS]
    assert rows[0].label.endswith('claude-opus-5-5 ("sonnet")') and rows[0].detail == "model in ~/.claude/settings.json"
    assert rows[1].label.endswith("acceptEdits") and rows[1].detail == "permissions.defaultMode in .claude/settings.json"
    assert rows[2].label.endswith("normal (not set)") and rows[6].label.endswith("runs echo hi")
    target = Picks(1, 2)  # Default permission mode, then its third value (plan)
    warnings: list[str] = []
    assert await config_command(parts, "", on_disk=settings, target=target, warn=warnings.append, model=pytest.fail, output_style=pytest.fail)
    assert [o.label for o in target.shown[1][1]] == ["default", "acceptEdits", "plan", "bypassPermissions", "(unset)"]
    assert target.shown[1][2] == 1  # the value in force is preselected
    assert json.loads(path.read_text())["permissions"] == {"defaultMode": "plan"}
    assert warnings == [".claude/settings.json sets permissions.defaultMode too, and wins over ~/.claude/settings.json"]
    # untrusted, the project's acceptEdits does not count: the row says so
    parts.trusted = False
    assert config_rows(parts, in_force(parts, load_settings(cwd=work, home=tmp_path)))[1].detail == \
        "permissions.defaultMode in ~/.claude/settings.json"


async def test_config_model_row_opens_the_model_picker(tmp_path: Path) -> None:
    asked: list[str] = []

    async def model(name: str) -> None:
        asked.append(name)

    settings = load_settings(cwd=tmp_path / "nowhere", home=tmp_path)
    assert await config_command(_parts(tmp_path), "", on_disk=settings, target=Picks(0), warn=pytest.fail,
                                model=model, output_style=pytest.fail)
    assert await config_command(_parts(tmp_path), "model=haiku", on_disk=settings, target=Picks(), warn=pytest.fail,
                                model=model, output_style=pytest.fail)
    assert asked == ["", "haiku"]


# --- statusLine


def test_a_repositorys_status_line_counts_only_in_a_trusted_folder(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    (work / ".claude" / "settings.local.json").write_text(
        '{"statusLine": {"type": "command", "command": "touch PWNED", "padding": 2}}')
    settings = load_settings(cwd=work, home=tmp_path)
    assert status_line_spec(settings) == (StatusLineSpec("touch PWNED", 2, ".claude/settings.local.json"), None)
    untrusted, dropped = without_project_widening(settings)
    assert status_line_spec(untrusted) == (None, None)
    assert dropped == [".claude/settings.local.json statusLine"]
    _user_file(tmp_path, {"statusLine": {"type": "command", "command": "echo mine"}})
    untrusted, _ = without_project_widening(load_settings(cwd=work, home=tmp_path))
    assert status_line_spec(untrusted)[0] == StatusLineSpec("echo mine", 0, "~/.claude/settings.json")
    bad = Settings(user={"statusLine": {"type": "static", "text": "x"}})
    assert status_line_spec(bad)[1] == ('~/.claude/settings.json statusLine: expected {"type": "command", '
                                        '"command": "..."}; not shown')


def test_output_keeps_colours_and_nothing_else() -> None:
    text = "\x1b[31mRED\x1b[0m \x1b]0;title\x07\x1b[2J\x1b[1;1Hplain\u202e\x9b31m\r\nsecond\n\n\n"
    # the title, the clear-screen, the cursor move, the bidi override and the C1 CSI are gone; the colours stay
    assert keep_colours(text) == "\x1b[31mRED\x1b[0m plain\nsecond"
    assert keep_colours("\x1b[1;32mgreen") == "\x1b[1;32mgreen\x1b[0m"  # a colour left on ends with its line
    assert keep_colours("a\nb\nc\nd\ne") == "a\nb\nc"  # at most MAX_LINES
    assert keep_colours("x" * 1000) == "x" * 400


def _session(tmp_path: Path) -> Any:
    model = AnthropicHttpModel("claude-sonnet-5-5", api_key="k", base_url="http://127.0.0.1:9")
    context = ContextWindow(1_000_000)
    context.observed(100, 250_000)
    agent = SimpleNamespace(model=model, usage=Usage(1000, 50, 4000, 0), context=context,
                            ctx=SimpleNamespace(cwd=tmp_path / "sub"))
    gate = SimpleNamespace(mode=PermissionMode.DEFAULT, cwd=tmp_path, additional_dirs=(tmp_path / "more",))
    return SimpleNamespace(agent=agent, gate=gate, session_id="sid-1", env={"PATH": os.environ["PATH"]},
                           session_log=SimpleNamespace(path=tmp_path / "sid-1.jsonl"),
                           settings=Settings(user={"outputStyle": "Explanatory"}, effort_level="high"))


def test_the_input_has_claude_codes_shape(tmp_path: Path) -> None:
    data = status_input(_session(tmp_path), started=0.0)
    # the keys Claude Code 2.1.328 sends (captured from its statusLine command's stdin)
    assert list(data) == ["session_id", "transcript_path", "cwd", "effort", "model", "workspace", "version",
                          "output_style", "cost", "context_window", "exceeds_200k_tokens", "fast_mode", "thinking"]
    assert data["model"] == {"id": "claude-sonnet-5-5", "display_name": "Sonnet 5.5"}
    assert data["workspace"] == {"current_dir": str(tmp_path / "sub"), "project_dir": str(tmp_path),
                                 "added_dirs": [str(tmp_path / "more")]}
    assert data["transcript_path"] == str(tmp_path / "sid-1.jsonl") and data["session_id"] == "sid-1"
    assert data["output_style"] == {"name": "Explanatory"} and data["effort"] == {"level": "high"}
    assert set(data["cost"]) == {"total_cost_usd", "total_duration_ms", "total_api_duration_ms",
                                 "total_lines_added", "total_lines_removed"}
    assert data["cost"]["total_cost_usd"] == pytest.approx(0.0029)  # 1000 in, 4000 read at 5%, 50 out at $2/$10
    window = data["context_window"]
    assert window["context_window_size"] == 1_000_000 and window["total_input_tokens"] == 5000
    assert window["used_percentage"] == 25 and window["remaining_percentage"] == 75
    assert data["exceeds_200k_tokens"] is True and data["thinking"] == {"enabled": True}


async def test_the_command_gets_the_json_and_its_line_is_shown(tmp_path: Path) -> None:
    seen = tmp_path / "input.json"
    changes: list[str] = []
    line = StatusLine(StatusLineSpec(f"cat > {seen}; printf '\\033[32m%s\\033[0m\\n' \"k=${{ANTHROPIC_API_KEY:-none}}\"",
                                     1, "~/.claude/settings.json"),
                      inputs=lambda: {"model": {"id": "m"}}, cwd=tmp_path,
                      env={"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": "sk-secret"},
                      on_change=lambda: changes.append(line.text))
    line.refresh()
    await line.settled()
    assert json.loads(seen.read_text()) == {"model": {"id": "m"}}
    assert line.text == " \x1b[32mk=none\x1b[0m" and changes == [line.text]  # the agent's key is not handed over
    line.refresh()
    await line.settled()
    assert changes == [line.text]  # the same text: no redraw


async def test_refreshes_are_coalesced(tmp_path: Path) -> None:
    count = tmp_path / "count"
    line = StatusLine(StatusLineSpec(f"echo x >> {count}; sleep 0.2; echo ok", 0, "f"), inputs=dict, cwd=tmp_path,
                      env={"PATH": os.environ["PATH"]})
    for _ in range(5):  # asked for before the run reads its input: that one run answers them all
        line.refresh()
    await eventually(count.exists, "the first run")
    for _ in range(5):  # asked for while it runs: one more run after it
        line.refresh()
    await line.settled()
    assert count.read_text().count("x") == 2 and line.text == "ok"


async def test_a_hung_command_is_killed_with_its_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    problems: list[str] = []
    line = StatusLine(StatusLineSpec(f"echo $$ > {pidfile}.new; mv {pidfile}.new {pidfile}; sleep 60 & sleep 60",
                                     0, "f"), inputs=dict, cwd=tmp_path, env={"PATH": os.environ["PATH"]},
                      timeout_s=0.5, on_problem=problems.append)
    line.refresh()
    await eventually(pidfile.exists, "the command's pid")
    pgid = read_pidfile(pidfile)
    await line.settled()
    assert line.text == "" and problems == ["statusLine command timed out after 0.5s (killed)"]
    assert_group_gone(pgid)
    pidfile.unlink()
    line.refresh()  # closing the session while it runs ends it too
    await eventually(pidfile.exists, "the second run's pid")
    await line.aclose()
    assert_group_gone(read_pidfile(pidfile))


async def test_a_failing_command_is_told_once(tmp_path: Path) -> None:
    problems: list[str] = []
    line = StatusLine(StatusLineSpec("echo 'no such thing\x1b[2J' >&2; exit 3", 0, "f"), inputs=dict, cwd=tmp_path,
                      env={"PATH": os.environ["PATH"]}, on_problem=problems.append)
    for _ in range(2):
        line.refresh()
        await line.settled()
    # (the clear-screen the command printed is shown as text, not obeyed)
    assert problems == ["statusLine command exited 3: no such thing\\x1b[2J"] and line.text == ""
