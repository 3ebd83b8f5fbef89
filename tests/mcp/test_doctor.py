"""Issue 19, acceptance 3: `mini-claude mcp doctor` names each hostile-server mode of the fault matrix
(tests/mcp/servers/faulty_server.py, hostile_server.py) with a one-line cause and a one-line fix. Real CLI
subprocesses, real misbehaving servers; `--call echo` makes the doctor exercise the tool the modes break."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.host import NoQuestionsUI
from mini_claude.mcp.host.server_log import MAX_ENTRY_CHARS, ServerLogs
from tests.helpers import assert_pid_gone, read_pidfile, refused_port, start_tiny_http
from tests.integration.conftest import Cli, probe_entry

pytestmark = pytest.mark.timeout(90)

SERVERS = Path(__file__).parent / "servers"
FAULTY = SERVERS / "faulty_server.py"
HOSTILE = SERVERS / "hostile_server.py"
ESC = "\x1b"
SECRET = "SECRET123"

# mode -> (the problem's code, words its cause must hold); None: a healthy server, no problem
MODES: dict[str, tuple[str, list[str]] | None] = {
    "normal": None,
    "crash_at_start": ("exits-at-start", ["exited with code 3 before answering initialize",
                                          "fatal: cannot load config"]),
    "crash_mid_call": ("exits-during-tools-call", ["exited with code 5 during tools/call echo",
                                                   "fatal: tool exploded"]),
    "hang": ("call-hangs", ["tools/call echo got no answer", "still answers ping"]),
    "deaf": ("stuck", ["no answer", "neither did ping", "stopped reading its input"]),
    "garbage": ("stdout-noise", ["non-JSON line(s) on stdout", "INFO server: handling tools/call"]),
    "stderr_flood": ("stderr-flood", ["KB to stderr"]),
    "half_line_exit": ("exits-during-tools-call", ["exited with code 4 during tools/call echo"]),
    "no_newline_exit": ("exits-after-answering", ["exited with code 0 on its own after answering tools/call echo"]),
    "ignore_sigterm": ("ignores-shutdown", ["ignored stdin closing and SIGTERM", "SIGKILL"]),
    "grandchild": ("exits-after-answering", ["exited with code 0 on its own after answering initialize"]),
    "escaped_grandchild": ("exits-after-answering", ["after answering initialize"]),
    "grandchild_daemon": None,  # serves normally; its detached child is no fault of the protocol
    "invalid_utf8": ("invalid-utf8", ["not valid UTF-8"]),
    "odd_json": ("protocol-oddities", ["malformed or unexpected message(s)"]),
    "stdin_closer": ("exits-during-tools-call", ["exited with code 2 during tools/call echo", "closing my pipes"]),
}



# how long each probe may take: long enough for a healthy server on a loaded machine; the modes that never answer
# wait it out, so they get a shorter one (a ping still answers well within it)
PROBE_S = "15"
NEVER_ANSWERS_PROBE_S = "4"


def _doctor(cli: Cli, servers: dict[str, Any], *args: str,
            timeout: str = PROBE_S) -> tuple[int, list[dict[str, Any]], str]:
    config = cli.config_file(servers)
    r = cli.run("mcp", "doctor", *args, "--json", "--strict-mcp-config", "--mcp-config", config, "--timeout", timeout)
    return r.rc, json.loads(r.stdout), r.stderr


def _one_line(problem: dict[str, Any]) -> None:
    assert problem["cause"] and problem["fix"]
    assert "\n" not in problem["cause"] and "\n" not in problem["fix"], problem


@pytest.mark.parametrize("mode", sorted(MODES))
def test_doctor_diagnoses_each_mode_of_the_fault_matrix(cli: Cli, mode: str) -> None:
    pidfile = cli.tmp / "pid"
    entry = {"command": sys.executable, "args": [str(FAULTY), "--mode", mode, "--pidfile", str(pidfile)]}
    rc, [diag], stderr = _doctor(cli, {mode: entry}, "--call", "echo", '{"text": "hi"}',
                                 timeout=NEVER_ANSWERS_PROBE_S if mode in ("hang", "deaf") else PROBE_S)
    expected = MODES[mode]
    if expected is None:
        assert rc == 0 and diag["ok"] and diag["problems"] == [], diag
        assert diag["call"]["ok"] and diag["ping_ms"] is not None
        assert diag["tools"] == ["echo"] and diag["protocol_version"] and diag["capabilities"] == ["tools"]
    else:
        code, words = expected
        assert rc == 1, stderr
        codes = [p["code"] for p in diag["problems"]]
        assert code in codes, diag["problems"]
        problem = diag["problems"][codes.index(code)]
        _one_line(problem)
        for word in words:
            assert word in problem["cause"], problem
    assert "Traceback" not in stderr, stderr
    if mode in ("grandchild", "grandchild_daemon"):
        assert_pid_gone(read_pidfile(pidfile), within_s=5.0)  # the doctor leaves nothing behind in its group
    if mode == "escaped_grandchild":  # it left our process group on purpose (setsid): nobody can reap it but us
        os.kill(read_pidfile(pidfile), signal.SIGKILL)


def test_doctor_text_names_the_cause_and_the_fix(cli: Cli) -> None:
    config = cli.config_file({"crashy": {"command": sys.executable,
                                         "args": [str(FAULTY), "--mode", "crash_at_start"]}})
    r = cli.run("mcp", "doctor", "crashy", "--mcp-config", config)
    assert r.rc == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith("crashy  (stdio, from ") and lines[0].endswith("✘ 1 problem")
    problem = next(line for line in lines if line.strip().startswith("problem"))
    assert "exited with code 3 before answering initialize: fatal: cannot load config" in problem
    fix = lines[lines.index(problem) + 1]
    assert fix.strip().startswith("fix") and "run it by hand" in fix and str(FAULTY) in fix
    log = (cli.state / "mcp-logs" / "crashy.log").read_text()  # what /mcp log shows
    assert log.endswith(" STDERR: fatal: cannot load config\n")


def test_stderr_sink_keeps_every_line_from_the_first_byte(tmp_path: Path) -> None:
    ui = NoQuestionsUI()
    logs = ServerLogs(tmp_path / "logs", ui)
    sink = logs.stderr_sink("srv")
    for chunk in (b"first li", b"ne\nsecond\r\nthi", b"rd \xff\n", b"x" * (MAX_ENTRY_CHARS + 5), b"tail"):
        sink(chunk)
    logs.end_stderr("srv")
    entries = [line.split(" STDERR: ", 1)[1] for line in logs.path("srv").read_text().splitlines()]
    assert entries[:3] == ["first line", "second", "third \ufffd"]
    assert entries[3:] == ["x" * MAX_ENTRY_CHARS, "xxxxxtail"]  # a line that never ends: in pieces, none lost
    assert ui.notices == []  # stderr is kept, never shown


def test_hostile_server_deep_schema_deep_message_and_terminal_attacks(cli: Cli) -> None:
    rc, [diag], _ = _doctor(cli, {"hostile": {"command": sys.executable, "args": [str(HOSTILE)]}})
    assert rc == 1
    codes = {p["code"]: p for p in diag["problems"]}
    assert "deep_tool" in diag["withheld"] and "tools-withheld" in codes
    assert "protocol-oddities" in codes and "nested deeper" in codes["protocol-oddities"]["cause"]
    for problem in diag["problems"]:
        _one_line(problem)
    config = cli.config_file({"hostile": {"command": sys.executable, "args": [str(HOSTILE), "--crash"]}})
    r = cli.run("mcp", "doctor", "--mcp-config", config)
    assert r.rc == 1
    assert "exited with code 3 before answering initialize" in r.stdout
    assert ESC not in r.stdout and "\x9b" not in r.stdout and "\u202e" not in r.stdout  # the text is cleaned


def test_command_not_found_and_held_servers_are_never_started(cli: Cli) -> None:
    marker = cli.tmp / "marker"
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": probe_entry("--marker", str(marker))}}))
    (cli.home / ".claude.json").write_text(json.dumps({"mcpServers": {"gone": {"command": "no-such-program-x1"}}}))
    r = cli.run("mcp", "doctor", "--json")
    assert r.rc == 1, r.stderr
    diags = {d["server"]: d for d in json.loads(r.stdout)}
    [missing] = diags["gone"]["problems"]
    assert missing["code"] == "command-not-found" and "no-such-program-x1" in missing["cause"]
    assert "mcpServers.gone.command" in missing["fix"]
    [held] = diags["proj"]["problems"]
    assert held["code"] == "held" and "needs approval" in held["cause"]
    assert not marker.exists()  # a project server waiting for approval does not run for the doctor either


def test_renamed_tools_tokens_and_a_healthy_server(cli: Cli) -> None:
    servers = {"probe": probe_entry("--tool", "do.thing", "--tool", "x" * 70)}
    rc, [diag], stderr = _doctor(cli, servers)
    assert rc == 0, (diag, stderr)
    assert diag["renamed"]["do.thing"].startswith("mcp__probe__do_thing_")  # a "." made "_": hashed, unambiguous
    hashed = diag["renamed"]["x" * 70]
    assert len(hashed) <= 64 and hashed.startswith("mcp__probe__")
    assert diag["definition_tokens"] > 0 and diag["ping_ms"] is not None and diag["first_reply_s"] is not None
    assert diag["command_path"] == sys.executable


@pytest.fixture
def tiny_http(tmp_path: Path) -> Iterator[str]:
    port, proc = start_tiny_http()
    try:
        yield f"http://127.0.0.1:{port}/mcp?token={SECRET}"
    finally:
        proc.kill()
        proc.wait(timeout=5)


def test_http_servers_working_and_refused_never_show_the_urls_secret(cli: Cli, tiny_http: str) -> None:
    refused = f"http://127.0.0.1:{refused_port()}/mcp?token={SECRET}"
    config = cli.config_file({"up": {"type": "http", "url": tiny_http}, "down": {"type": "http", "url": refused}})
    r = cli.run("mcp", "doctor", "--json", "--mcp-config", config, "--timeout", "5")
    assert SECRET not in r.stdout + r.stderr
    diags = {d["server"]: d for d in json.loads(r.stdout)}
    up = diags["up"]
    assert up["command"].endswith("/mcp?token=***") and up["auth"] == "none configured, connected"
    assert "deep_reply" in up["tools"] and up["ping_ms"] is not None
    [problem] = diags["down"]["problems"]
    assert problem["code"] == "unreachable" and "connection refused" in problem["cause"]
    assert r.rc == 1
    text = cli.run("mcp", "doctor", "down", "--mcp-config", config, "--timeout", "5")
    assert SECRET not in text.stdout + text.stderr and "token=***" in text.stdout


ODD_TOOLS_SERVER = r'''
import json, sys
TOOLS = [{"name": "fine", "inputSchema": {"type": "object"}},
         {"name": "listy", "description": "takes a list", "inputSchema": {"type": "array"}},
         {"name": "has space", "inputSchema": {"type": "object"}}]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    result = {"initialize": {"protocolVersion": msg.get("params", {}).get("protocolVersion"),
                             "capabilities": {"tools": {}}, "serverInfo": {"name": "odd", "version": "0"}},
              "tools/list": {"tools": TOOLS}, "ping": {}}.get(msg["method"])
    reply = {"jsonrpc": "2.0", "id": msg["id"]}
    reply.update({"result": result} if result is not None else {"error": {"code": -32601, "message": "no"}})
    print(json.dumps(reply), flush=True)
'''


def test_schemas_the_model_api_would_refuse_and_renamed_names(cli: Cli) -> None:
    script = cli.tmp / "odd_tools.py"
    script.write_text(ODD_TOOLS_SERVER)
    rc, [diag], _ = _doctor(cli, {"odd": {"command": sys.executable, "args": [str(script)]}})
    assert rc == 1
    assert diag["rejected"] == {"listy": "input schema type is 'array', the model API takes only \"object\""}
    [problem] = diag["problems"]
    assert problem["code"] == "schema-rejected" and "'listy'" in problem["cause"]
    assert "mini-claude mcp disable odd" in problem["fix"]
    assert set(diag["renamed"]) == {"has space"} and diag["renamed"]["has space"].startswith("mcp__odd__has_space")
