"""UserPromptSubmit, SessionStart, Stop and SessionEnd hooks, the hooks' environment, workspace trust, and hooks that
hang or fail: the real CLI (`-p`) against the scripted mock model, real hook scripts, real files."""

from __future__ import annotations

import json
import time

import pytest

from tests.helpers import assert_pid_gone
from tests.hooks.conftest import Hooked, payloads, records, user_texts
from tests.integration.conftest import Cli, answer, tool_use

pytestmark = pytest.mark.timeout(120)


def _first_user_texts(mock: object) -> list[str]:
    return user_texts(mock.requests[0])  # type: ignore[attr-defined]


def test_user_prompt_submit_and_session_start_context_reach_the_first_message(cli: Cli, hooked: Hooked) -> None:
    start, start_log = hooked.recorder(stdout="branch: feature/x, 3 failing tests")
    plain, prompt_log = hooked.recorder(stdout="today is release day")
    as_json, _ = hooked.recorder(stdout=json.dumps({"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": "ticket ABC-1 is open"}}))
    hooked.settings({"SessionStart": [{"hooks": [{"type": "command", "command": start}]}],
                     "UserPromptSubmit": [{"hooks": [{"type": "command", "command": plain},
                                                     {"type": "command", "command": as_json}]}]})
    mock = cli.mock([answer("ok")])
    r = cli.run("-p", "what now?")
    assert r.rc == 0, r.stderr
    texts = _first_user_texts(mock)
    assert texts[0] == "what now?"
    joined = "\n".join(texts[1:])
    assert "SessionStart:startup hook success: branch: feature/x, 3 failing tests" in joined
    assert "UserPromptSubmit hook success: today is release day" in joined
    assert "UserPromptSubmit hook additional context: ticket ABC-1 is open" in joined
    [start_payload] = payloads(start_log)
    assert start_payload["hook_event_name"] == "SessionStart" and start_payload["source"] == "startup"
    [prompt_payload] = payloads(prompt_log)
    assert prompt_payload["prompt"] == "what now?" and prompt_payload["hook_event_name"] == "UserPromptSubmit"
    assert prompt_payload["session_id"] == start_payload["session_id"]


def test_user_prompt_submit_block_sends_nothing_to_the_model(cli: Cli, hooked: Hooked) -> None:
    command, log = hooked.recorder(stderr="prompts mentioning prod are blocked", code=2)
    hooked.settings({"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]})
    mock = cli.mock([answer("should never be asked")])
    r = cli.run("-p", "deploy to prod", "--output-format", "json")
    assert r.rc == 0, r.stderr
    assert mock.requests == []
    result = r.json()
    assert result["result"] == (f"UserPromptSubmit operation blocked by hook:\n[{command}]: prompts mentioning prod "
                                "are blocked\n\nOriginal prompt: deploy to prod")
    assert result["num_turns"] == 0
    assert payloads(log)[0]["prompt"] == "deploy to prod"

    blocker, _ = hooked.recorder(stdout=json.dumps({"decision": "block", "reason": "use the staging prompt"}))
    hooked.settings({"UserPromptSubmit": [{"hooks": [{"type": "command", "command": blocker}]}]})
    r = cli.run("-p", "deploy to prod")
    assert r.rc == 0 and mock.requests == [], r.stderr
    assert "use the staging prompt" in r.stdout


def test_stop_hook_block_makes_one_more_turn(cli: Cli, hooked: Hooked) -> None:
    flag = cli.tmp / "asked-once"
    command, log = hooked.recorder()
    gate = hooked.shell(f'cat > /dev/null; if [ -e {flag} ]; then exit 0; fi; touch {flag}; '
                        'echo \'{"decision": "block", "reason": "run the tests first"}\'\n')
    hooked.settings({"Stop": [{"hooks": [{"type": "command", "command": command},
                                         {"type": "command", "command": gate}]}]})
    mock = cli.mock([answer("first answer"), answer("tests pass now")])
    r = cli.run("-p", "fix it")
    assert r.rc == 0, r.stderr
    assert r.stdout.strip() == "tests pass now"
    assert len(mock.requests) == 2
    assert user_texts(mock.requests[1]) == ["Stop hook feedback:\nrun the tests first"]
    first, second = payloads(log)
    assert first["hook_event_name"] == "Stop" and first["stop_hook_active"] is False
    assert first["last_assistant_message"] == "first answer"
    assert second["stop_hook_active"] is True


def test_stop_hook_exit_2_feeds_stderr_back(cli: Cli, hooked: Hooked) -> None:
    flag = cli.tmp / "once"
    gate = hooked.shell(f"cat > /dev/null; [ -e {flag} ] && exit 0; touch {flag}; echo 'keep going' >&2; exit 2\n")
    hooked.settings({"Stop": [{"hooks": [{"type": "command", "command": gate}]}]})
    mock = cli.mock([answer("first"), answer("second")])
    r = cli.run("-p", "go")
    assert r.rc == 0 and r.stdout.strip() == "second", r.stderr
    assert user_texts(mock.requests[1]) == [f"Stop hook feedback:\n[{gate}]: keep going"]


def test_session_end_runs_at_exit(cli: Cli, hooked: Hooked) -> None:
    command, log = hooked.recorder()
    hooked.settings({"SessionEnd": [{"hooks": [{"type": "command", "command": command}]}]})
    cli.mock([answer("ok")])
    r = cli.run("-p", "hi")
    assert r.rc == 0, r.stderr
    [payload] = payloads(log)
    assert payload["hook_event_name"] == "SessionEnd" and payload["reason"] == "other"
    assert payload["transcript_path"].endswith(f"{payload['session_id']}.jsonl")


def test_claude_project_dir_and_the_users_environment(cli: Cli, hooked: Hooked) -> None:
    (cli.work / ".env").write_text("PROJECT_SECRET=from-dotenv\n")
    scripts = cli.work / ".claude" / "hooks"
    scripts.mkdir(parents=True)
    guard = scripts / "guard.sh"
    guard.write_text(f"#!/bin/sh\ncat > /dev/null\nenv > {cli.tmp}/hook-env.txt\npwd > {cli.tmp}/hook-cwd.txt\n")
    guard.chmod(0o755)
    hooked.settings({"PreToolUse": [{"matcher": "Bash",
                                     "hooks": [{"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/'
                                                                              'guard.sh'}]}]},
                    permissions={"allow": ["Bash(echo:*)"]})
    cli.mock([tool_use("Bash", {"command": "echo hi"}), answer("ok")])
    r = cli.run("-p", "go", env={"USERS_OWN": "mine"})
    assert r.rc == 0, r.stderr
    env = dict(line.split("=", 1) for line in (cli.tmp / "hook-env.txt").read_text().splitlines() if "=" in line)
    assert env["CLAUDE_PROJECT_DIR"] == str(cli.work)
    assert env["USERS_OWN"] == "mine"  # hooks are the user's own code: the user's environment
    assert "PROJECT_SECRET" not in env  # a repository's .env never reaches them
    assert (cli.tmp / "hook-cwd.txt").read_text().strip() == str(cli.work)


def test_repository_hooks_run_only_once_the_folder_is_trusted(cli: Cli, hooked: Hooked) -> None:
    marker = cli.tmp / "REPO-HOOK-RAN"
    hooked.settings({"PreToolUse": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}],
                     "SessionStart": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]},
                    where=cli.work)
    cli.mock([tool_use("Read", {"file_path": "x.txt"}), answer("ok")])
    (cli.work / "x.txt").write_text("x")
    r = cli.run("-p", "go")
    assert r.rc == 0, r.stderr
    assert not marker.exists()
    warnings = [line for line in r.stderr.splitlines() if "not trusted" in line]
    assert len(warnings) == 1 and ".claude/settings.json hooks" in warnings[0], r.stderr

    cli.mock([tool_use("Read", {"file_path": "x.txt"}), answer("ok")])
    r = cli.run("-p", "go", "--trust")
    assert r.rc == 0, r.stderr
    assert marker.exists() and "not trusted" not in r.stderr


def test_a_hook_that_hangs_is_stopped_reported_and_the_agent_goes_on(cli: Cli, hooked: Hooked) -> None:
    pidfile = cli.tmp / "child.pid"
    hang = hooked.shell(f"sleep 300 &\necho $! > {pidfile}\nsleep 300\n")
    hooked.settings({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hang,
                                                                   "timeout": 1}]}]},
                    permissions={"allow": ["Bash(echo:*)"]})
    mock = cli.mock([tool_use("Bash", {"command": "echo still-running"}), answer("ok")])
    began = time.monotonic()
    r = cli.run("-p", "go")
    assert r.rc == 0, r.stderr
    assert time.monotonic() - began < 15
    lines = [line for line in r.stderr.splitlines() if "timed out" in line]
    assert len(lines) == 1 and "PreToolUse hook" in lines[0], r.stderr
    assert "still-running" in json.dumps(mock.requests[-1]["body"]["messages"][-1])  # the tool ran
    assert_pid_gone(int(pidfile.read_text()), within_s=5)  # the whole group was killed, the child too


def test_malformed_hooks_are_reported_with_file_and_key(cli: Cli, hooked: Hooked) -> None:
    command, log = hooked.recorder()
    hooked.settings({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "x"},
                                                                  {"type": "command", "command": command}]}],
                     "BeforeEverything": []})
    cli.mock([tool_use("Bash", {"command": "echo hi"}), answer("ok")])
    r = cli.run("-p", "go", "--allowedTools", "Bash(echo:*)")
    assert r.rc == 0, r.stderr
    assert "hooks.PreToolUse[0].hooks[0].type" in r.stderr and "not supported" in r.stderr
    assert "hooks.BeforeEverything" in r.stderr and "unknown hook event" in r.stderr
    assert len(records(log)) == 1  # the well-formed hook beside them still runs
