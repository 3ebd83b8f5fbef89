"""Issue 21, the doctor's checks one by one on real files (no subprocess of the CLI): a managed settings file is
reported as not applied; a state folder that is a file is a problem; an apiKeyHelper whose program is missing is
named without its command line; an endpoint that is not a URL is not shown; an empty key counts as unset; a broken
`.mcp.json` entry is named with its key; a memory import the project may not make is a problem; the state
folder's size is counted."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from mini_claude.cli.doctor.files import mcp_config_section, memory_section, settings_section
from mini_claude.cli.doctor.rows import Row, Scene, Section
from mini_claude.cli.doctor.setup import folder_size, install_section, keys_section
from mini_claude.mcp.config import load_mcp_config
from mini_claude.settings import load_settings
from mini_claude.settings_trust import without_project_widening
from mini_claude.trust import TrustState


def _scene(tmp_path: Path, *, env: dict[str, str] | None = None, user: dict[str, Any] | None = None,
           state: Path | None = None) -> Scene:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    work.mkdir(exist_ok=True)
    if user is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(user))
    settings = load_settings(cwd=work, home=home)
    effective, ignored = without_project_widening(settings)
    real = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), **(env or {})}
    return Scene(cwd=work, env=real, home=home, state=state or tmp_path / "state", settings=settings,
                 effective=effective, ignored=ignored, trust=TrustState(work, False), dotenv={})


def _row(section: Section, label: str) -> Row:
    return next(row for row in section.rows if row.label == label)


def test_a_managed_settings_file_is_reported_as_not_applied(tmp_path: Path) -> None:
    managed = tmp_path / "managed-settings.json"
    managed.write_text('{"permissions": {"deny": ["Bash"]}}')
    section = settings_section(_scene(tmp_path), managed=managed)
    row = _row(section, "managed")
    assert row.ok and row.text == f"{managed}: found, not applied"
    assert row.notes == ["mini-claude does not read managed settings: the administrator's rules there do not "
                         "bind it"]
    assert all(r.label != "managed" for r in settings_section(_scene(tmp_path), managed=tmp_path / "none").rows)


def test_a_state_folder_that_is_a_file_is_a_problem_and_a_real_one_is_measured(tmp_path: Path) -> None:
    blocked = tmp_path / "state-file"
    blocked.write_text("not a folder")
    row = _row(asyncio.run(install_section(_scene(tmp_path, state=blocked))), "state")
    assert [p.code for p in row.problems] == ["state-not-a-folder"]
    assert "MINI_CLAUDE_STATE_DIR" in row.problems[0].fix

    state = tmp_path / "state"
    (state / "sub").mkdir(parents=True)
    (state / "a").write_bytes(b"x" * 1000)
    (state / "sub" / "b").write_bytes(b"y" * 24)
    (state / "link").symlink_to(tmp_path)  # never followed
    assert folder_size(state) == (1024, 2, True)
    row = _row(asyncio.run(install_section(_scene(tmp_path, state=state))), "state")
    assert row.ok and row.text == f"{state} · 1.0 KB in 2 files"
    assert sorted(p.name for p in state.iterdir()) == ["a", "link", "sub"]  # the write test left nothing


def test_a_missing_helper_program_is_named_without_its_command_line(tmp_path: Path) -> None:
    scene = _scene(tmp_path, user={"apiKeyHelper": "no-such-vault-tool --token sk-in-the-command"})
    row = _row(keys_section(scene), "credential")
    assert row.text == "apiKeyHelper (~/.claude/settings.json) → anthropic"
    [problem] = row.problems
    assert problem.code == "helper-not-found"
    assert problem.cause == "apiKeyHelper (~/.claude/settings.json): its program 'no-such-vault-tool' is not found"
    assert "sk-in-the-command" not in problem.cause + problem.fix


def test_an_endpoint_that_is_not_a_url_is_not_shown_and_an_empty_key_is_unset(tmp_path: Path) -> None:
    scene = _scene(tmp_path, env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_AUTH_TOKEN": " ",
                                  "ANTHROPIC_BASE_URL": "sk-ant-pasted-here"})
    section = keys_section(scene)
    assert _row(section, "credential").text == "ANTHROPIC_API_KEY (environment) → anthropic"
    assert _row(section, "variable").text == ("ANTHROPIC_AUTH_TOKEN is set but empty (environment): it counts as "
                                              "not set")
    endpoint = _row(section, "endpoint")
    assert endpoint.text == "ANTHROPIC_BASE_URL (environment): not a URL (not shown)"
    assert [p.code for p in endpoint.problems] == ["bad-endpoint"]
    assert "sk-ant-pasted-here" not in json.dumps([row.to_json() for row in section.rows])


def test_a_broken_mcp_json_entry_is_named_with_its_key(tmp_path: Path) -> None:
    scene = _scene(tmp_path)
    (scene.cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {"ok": {"command": "echo"},
                                                                    "bad": {"args": ["x"]}}}))
    config = load_mcp_config(cwd=scene.cwd, home=scene.home, env=scene.env)
    row = _row(mcp_config_section(scene, config, {}), ".mcp.json")
    assert row.text == "1 server: ok"
    [problem] = row.problems
    assert problem.code == "invalid-mcp-config" and problem.cause == ".mcp.json: mcpServers.bad.command: missing"
    assert problem.fix == "fix mcpServers.bad.command in .mcp.json (that server is skipped until then)"


def test_a_memory_import_outside_the_project_is_a_problem(tmp_path: Path) -> None:
    scene = _scene(tmp_path)
    (tmp_path / "outside.md").write_text("secret notes")
    text = f"# notes\n@{tmp_path / 'outside.md'}\n"
    (scene.cwd / "CLAUDE.md").write_text(text)
    section = memory_section(scene)
    assert _row(section, "project").text == f"{(scene.cwd / 'CLAUDE.md').resolve()} ({len(text)} characters)"
    assert len(section.rows) == 2  # the outside file is not listed as loaded
    [problem] = _row(section, "problems").problems
    assert problem.code == "memory-not-loaded" and "may import only files inside the project" in problem.cause
