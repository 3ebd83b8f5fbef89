"""PreToolUse and PostToolUse hooks end to end: the real CLI (`-p`) against the scripted mock model, real hook
scripts reading their JSON on stdin, real files and a real MCP server. What the model received and what happened on
disk are both checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hooks.conftest import Hooked, payloads, records, user_texts
from tests.integration.conftest import Cli, answer, probe_entry, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(120)

COMMON = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}


def _json_hook(hooked: Hooked, output: dict[str, object]) -> tuple[str, Path]:
    return hooked.recorder(stdout=json.dumps(output))


def _permission(decision: str, reason: str) -> dict[str, object]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
                                   "permissionDecisionReason": reason}}


def test_pre_tool_use_exit_2_blocks_with_stderr_in_the_tool_result(cli: Cli, hooked: Hooked) -> None:
    marker = cli.work / "marker"
    command, log = hooked.recorder(stderr="rm and touch are not allowed here", code=2)
    hooked.settings({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]})
    mock = cli.mock([tool_use("Bash", {"command": f"touch {marker}", "description": "make it"}), answer("ok")])
    r = cli.run("-p", "go", "--yolo")  # a hook's block holds even in bypassPermissions mode
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr  # answered, a call refused on the way
    assert not marker.exists()
    [result] = tool_results(mock)
    assert result.get("is_error") is True
    assert result_text(result) == f"PreToolUse:Bash hook error: [{command}]: rm and touch are not allowed here"
    [payload] = payloads(log)
    assert set(payload) >= COMMON and payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_name"] == "Bash"  # Claude Code's names and keys: what a user's hook script reads
    assert payload["tool_input"] == {"command": f"touch {marker}", "description": "make it"}
    assert payload["tool_use_id"] == result["tool_use_id"]
    assert payload["cwd"] == str(cli.work) and payload["permission_mode"] == "bypassPermissions"
    assert r.stdout.strip() == "ok"


def test_json_deny_blocks_what_an_allow_rule_allows(cli: Cli, hooked: Hooked) -> None:
    command, log = _json_hook(hooked, _permission("deny", "no writes to config files"))
    hooked.settings({"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": command}]}]},
                    permissions={"allow": ["Write", "Edit"]})
    mock = cli.mock([tool_use("Write", {"file_path": "app.cfg", "content": "x=1\n"}), answer("ok")])
    r = cli.run("-p", "go")
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr
    assert not (cli.work / "app.cfg").exists()
    [result] = tool_results(mock)
    assert result.get("is_error") is True and result_text(result) == "no writes to config files"
    [payload] = payloads(log)
    assert payload["tool_name"] == "Write"
    assert payload["tool_input"] == {"file_path": str(cli.work / "app.cfg"), "content": "x=1\n"}  # absolute


def test_json_allow_runs_a_call_the_mode_would_refuse(cli: Cli, hooked: Hooked) -> None:
    command, _ = _json_hook(hooked, _permission("allow", "formatter output is fine"))
    hooked.settings({"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": command}]}]})
    cli.mock([tool_use("Write", {"file_path": "a.txt", "content": "hello\n"}), answer("ok")])
    r = cli.run("-p", "go")  # -p, default mode, no rule: a write would be refused without the hook
    assert r.rc == 0, r.stderr
    assert (cli.work / "a.txt").read_text() == "hello\n"


def test_json_allow_cannot_open_what_a_deny_rule_or_a_boundary_forbids(cli: Cli, hooked: Hooked) -> None:
    command, log = _json_hook(hooked, _permission("allow", "hook says yes"))
    hooked.settings({"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": command}]}]},
                    permissions={"deny": ["Edit(secret.txt)"]})
    outside = cli.tmp / "outside"
    outside.mkdir()
    mock = cli.mock([tool_use("Write", {"file_path": "secret.txt", "content": "x"}),
                     tool_use("Write", {"file_path": str(outside / "o.txt"), "content": "x"}),
                     tool_use("Write", {"file_path": ".git/hooks/pre-commit", "content": "x"}),
                     answer("ok")])
    r = cli.run("-p", "go")
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr
    texts = [result_text(b) for b in tool_results(mock)]
    assert 'denied by rule "Edit(secret.txt)"' in texts[0]
    assert "outside the working director" in texts[1] and "needs the user's approval" in texts[1]
    assert "needs the user's approval" in texts[2]
    assert not (cli.work / "secret.txt").exists() and not (outside / "o.txt").exists()
    assert not (cli.work / ".git").exists()
    assert len(payloads(log)) == 3  # the hook was asked each time; its allow did not widen past the gate


def test_json_allow_does_not_lift_plan_mode_and_ask_refuses_in_print_mode(cli: Cli, hooked: Hooked) -> None:
    allow, _ = _json_hook(hooked, _permission("allow", "fine"))
    ask, _ = _json_hook(hooked, _permission("ask", "double-check deletions"))
    hooked.settings({"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": allow}]},
                                    {"matcher": "Bash", "hooks": [{"type": "command", "command": ask}]}]},
                    permissions={"allow": ["Bash"]})
    mock = cli.mock([tool_use("Write", {"file_path": "a.txt", "content": "x"}), answer("planned")])
    r = cli.run("-p", "go", "--permission-mode", "plan")
    assert r.rc == 0 and "denied on the way" in r.stderr and not (cli.work / "a.txt").exists(), r.stderr
    assert "plan mode is read-only" in result_text(tool_results(mock)[0])

    marker = cli.work / "gone"
    mock = cli.mock([tool_use("Bash", {"command": f"touch {marker}"}), answer("ok")])
    r = cli.run("-p", "go")
    assert r.rc == 0 and "denied on the way" in r.stderr and not marker.exists(), r.stderr
    text = result_text(tool_results(mock)[0])
    assert "double-check deletions" in text and "non-interactive" in text


def test_post_tool_use_payload_and_exit_2_feedback(cli: Cli, hooked: Hooked) -> None:
    command, log = hooked.recorder(stderr="lint: trailing whitespace", code=2)
    hooked.settings({"PostToolUse": [{"matcher": "Write|Bash", "hooks": [{"type": "command", "command": command}]}]},
                    permissions={"allow": ["Write", "Bash(echo:*)"]})
    mock = cli.mock([tool_use("Write", {"file_path": "a.txt", "content": "hi \n"}),
                     tool_use("Bash", {"command": "echo out"}),
                     answer("ok")])
    r = cli.run("-p", "go")
    assert r.rc == 0, r.stderr
    assert (cli.work / "a.txt").read_text() == "hi \n"  # PostToolUse runs after the tool: nothing is undone
    write, bash = payloads(log)
    assert set(write) >= COMMON and write["hook_event_name"] == "PostToolUse"
    assert write["tool_name"] == "Write"
    assert write["tool_input"] == {"file_path": str(cli.work / "a.txt"), "content": "hi \n"}
    assert write["tool_response"]["filePath"] == str(cli.work / "a.txt")
    results = tool_results(mock)
    assert write["tool_use_id"] == results[0]["tool_use_id"]
    assert bash["tool_name"] == "Bash" and bash["tool_input"] == {"command": "echo out"}
    assert bash["tool_response"]["stdout"] == "out" and bash["tool_response"]["interrupted"] is False
    # the hook's stderr reaches the model beside the result it is about
    after_write = user_texts(mock.requests[1])
    assert any("PostToolUse:Write hook blocking error" in t and "lint: trailing whitespace" in t
               for t in after_write), after_write
    assert result_text(results[0]).startswith("Wrote") or "a.txt" in result_text(results[0])


def test_mcp_matcher_and_payload(cli: Cli, hooked: Hooked) -> None:
    command, log = hooked.recorder(stderr="no echo today", code=2)
    other, other_log = hooked.recorder()
    hooked.settings({"PreToolUse": [{"matcher": "mcp__probe__.*", "hooks": [{"type": "command", "command": command}]},
                                    {"matcher": "mcp__github__.*", "hooks": [{"type": "command", "command": other}]},
                                    {"matcher": "Bash", "hooks": [{"type": "command", "command": other}]}]},
                    permissions={"allow": ["mcp__probe"]})
    calls = cli.tmp / "calls.log"
    config = cli.config_file({"probe": probe_entry("--calls", str(calls))})
    mock = cli.mock([tool_use("mcp__probe__echo", {"text": "hi"}), tool_use("mcp__probe__peek"), answer("ok")])
    r = cli.run("-p", "go", "--mcp-config", config)
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr
    echo, peek = tool_results(mock)
    assert result_text(echo) == f"PreToolUse:mcp__probe__echo hook error: [{command}]: no echo today"
    assert "PreToolUse:mcp__probe__peek hook error" in result_text(peek)
    assert not calls.exists() or "echo" not in calls.read_text()  # nothing reached the server
    first = payloads(log)[0]
    assert first["tool_name"] == "mcp__probe__echo" and first["tool_input"] == {"text": "hi"}
    assert first["mcp_server"] == "probe"
    assert records(other_log) == []  # neither another server's matcher nor Bash's fired


def test_a_failing_hook_is_shown_and_does_not_block(cli: Cli, hooked: Hooked) -> None:
    command, log = hooked.recorder(stderr="\x1b[31mformatter crashed\x1b[0m", code=1)
    hooked.settings({"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": command}]}]},
                    permissions={"allow": ["Write"]})
    cli.mock([tool_use("Write", {"file_path": "a.txt", "content": "x"}), answer("ok")])
    r = cli.run("-p", "go")
    assert r.rc == 0, r.stderr
    assert (cli.work / "a.txt").exists() and len(payloads(log)) == 1
    lines = [line for line in r.stderr.splitlines() if "failed with exit code 1" in line]
    assert len(lines) == 1, r.stderr
    assert "PreToolUse hook" in lines[0] and "formatter crashed" in lines[0] and "settings.json" in lines[0]
    assert "\x1b" not in r.stderr  # the hook's output went through the terminal's one door


def test_hooks_of_one_event_run_in_parallel(cli: Cli, hooked: Hooked) -> None:
    slow = [hooked.shell(f"echo start {i} >> {cli.tmp}/parallel.log; sleep 2; echo end {i} >> {cli.tmp}/parallel.log\n")
            for i in range(3)]
    hooked.settings({"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": c} for c in slow]}]},
                    permissions={"allow": ["Write"]})
    cli.mock([tool_use("Write", {"file_path": "a.txt", "content": "x"}), answer("ok")])
    r = cli.run("-p", "go")
    assert r.rc == 0, r.stderr
    log = (cli.tmp / "parallel.log").read_text().splitlines()
    # all three had started before any of them ended (one after another: start 0, end 0, start 1, ...); read from
    # the hooks' own log, not the run's wall time, which a loaded machine stretches
    assert sorted(log[:3]) == ["start 0", "start 1", "start 2"], log
    assert sorted(log[3:]) == ["end 0", "end 1", "end 2"], log


def test_debug_shows_each_hook_run(cli: Cli, hooked: Hooked) -> None:
    command, _ = hooked.recorder(stdout="formatted")
    hooked.settings({"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": command}]}]},
                    permissions={"allow": ["Write"]})
    cli.mock([tool_use("Write", {"file_path": "a.txt", "content": "x"}), answer("ok")])
    r = cli.run("-p", "go", "--debug")
    assert r.rc == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "mini_claude.hooks" in line and "hook PostToolUse" in line]
    assert len(lines) == 1, r.stderr
    assert "exit 0" in lines[0] and "formatted" in lines[0] and "hooks.PostToolUse[0].hooks[0]" in lines[0]
