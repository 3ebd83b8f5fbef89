"""Settings keys mini-claude does not act on are named, never dropped silently (issue 29): `key_report` sorts a
file's keys (Claude Code's settings mini-claude lacks; keys that are no setting at all, with the closest one);
`load_settings` keeps one report per file; `mini-claude doctor` names them (a note, or a problem for a misspelling)
and `--debug` logs one line per file at start."""

from __future__ import annotations

import json
from pathlib import Path

from mini_claude.settings import load_settings
from mini_claude.settings_keys import CLAUDE_CODE_KEYS, SUPPORTED_KEYS, key_report
from mini_claude.settings_trust import without_project_widening
from tests.helpers import clean_env, run_cli
from tests.integration.conftest import answer
from tests.settings.conftest import SettingsCli


def test_key_report_sorts_ignored_unknown_and_supported_keys() -> None:
    report = key_report({"model": "sonnet", "spinnerTipsEnabled": False, "cleanupPeriodDays": 7, "modle": "x",
                         "OutputStyle": "Learning", "zzz-not-a-key": 1, "statusLine": {}, "editorMode": "vim",
                         "permissions": {"allow": [], "alow": [], "disableBypassPermissionsMode": "disable"}})
    assert report.ignored == ("spinnerTipsEnabled", "cleanupPeriodDays", "permissions.disableBypassPermissionsMode")
    assert report.unknown == (("modle", "model"), ("OutputStyle", "outputStyle"), ("zzz-not-a-key", None),
                              ("permissions.alow", "permissions.allow"))
    assert report.text() == ("ignored keys: spinnerTipsEnabled, cleanupPeriodDays, "
                             "permissions.disableBypassPermissionsMode; unknown keys: modle (did you mean model?), "
                             "OutputStyle (did you mean outputStyle?), zzz-not-a-key, permissions.alow (did you mean "
                             "permissions.allow?)")
    assert not key_report({"model": "x", "permissions": {"deny": []}, "$schema": "s"})
    # a key from a stranger's file is shown printable and bounded
    [(shown, near)] = key_report({"bad\x1b[2Jkey" + "x" * 100: 1}).unknown
    assert shown.startswith("bad?[2Jkey") and shown.endswith("…") and len(shown) == 65 and near is None
    assert {"statusLine", "outputStyle", "editorMode", "theme", "verbose"} <= CLAUDE_CODE_KEYS | SUPPORTED_KEYS


def test_load_settings_keeps_one_report_per_file(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    (work / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"theme": "dark", "model": "sonnet"}))
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash"]}}))
    (work / ".claude" / "settings.local.json").write_text(json.dumps({"verbos": True}))
    settings = load_settings(cwd=work, home=home, flag=("--settings (JSON)", {"includeCoAuthoredBy": False}))
    assert {name: r.text() for name, r in settings.key_reports.items()} == {
        "~/.claude/settings.json": "ignored keys: theme",
        ".claude/settings.local.json": "unknown key: verbos (did you mean verbose?)",
        "--settings (JSON)": "ignored keys: includeCoAuthoredBy"}
    assert settings.model == "sonnet"
    assert without_project_widening(settings)[0].key_reports == settings.key_reports  # trust keeps them


def test_doctor_names_ignored_keys_and_a_misspelling(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    user = home / ".claude" / "settings.json"
    user.write_text(json.dumps({"spinnerTipsEnabled": False, "theme": "dark"}))
    env = clean_env(tmp_path, ANTHROPIC_API_KEY="k")
    text = run_cli(["doctor"], cwd=work, env=env)
    assert text.returncode == 0, text.stdout + text.stderr
    assert f"✔ user         {user}: nothing mini-claude acts on" in text.stdout, text.stdout
    assert ("note     ignored keys: spinnerTipsEnabled, theme (Claude Code settings mini-claude does not act on; "
            "harmless, they stay for Claude Code)") in text.stdout

    user.write_text(json.dumps({"modle": "opus", "outputStyle": "Explanatory"}))
    report = run_cli(["doctor", "--json", "--timeout", "15"], cwd=work, env=env)
    assert report.returncode == 1
    [row] = [r for r in json.loads(report.stdout)["sections"]["settings"] if r["label"] == "user"]
    assert row["text"] == f"{user}: outputStyle Explanatory"
    assert row["data"]["unknown_keys"] == ["modle"] and row["data"]["ignored_keys"] == []
    assert row["problems"] == [{"code": "unknown-setting", "cause": "modle: not a Claude Code or mini-claude setting",
                                "fix": f"did you mean model? rename it in {user}"}]


def test_debug_logs_each_files_ignored_keys_once_at_start(cli: SettingsCli) -> None:
    cli.user_settings({"spinnerTipsEnabled": False, "model": "claude-sonnet-5"})
    cli.project_settings({"cleanupPeriodDays": 3, "permisions": {}}, name="settings.local.json")
    cli.mock([answer("ok")])
    result = cli.run("-p", "hi", "--debug")
    assert result.rc == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "does not act on them" in line]
    assert lines == [
        "DEBUG mini_claude.session.start: ~/.claude/settings.json: ignored keys: spinnerTipsEnabled (mini-claude "
        "does not act on them; `mini-claude doctor` says more)",
        "DEBUG mini_claude.session.start: .claude/settings.local.json: ignored keys: cleanupPeriodDays; unknown "
        "key: permisions (did you mean permissions?) (mini-claude does not act on them; `mini-claude doctor` says "
        "more)"], result.stderr
    cli.mock([answer("ok")])
    assert "does not act on them" not in cli.run("-p", "hi").stderr  # a debug line, not a warning
