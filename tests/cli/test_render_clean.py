"""One neutralising path to the terminal (issue 10, hole 8): `render.clean`, and every piece of server text the CLI
prints going through it — `mcp list/get/tools/call` and the agent under `-p` against a real hostile stdio server
(tests/mcp/servers/hostile_server.py) whose tool description, result, error message and stderr carry a clear
screen, an OSC 8 hyperlink, a C1 CSI and a right-to-left override. Also hole 7 through the agent: a tool schema
300 levels deep and a 10,000-deep reply cost that tool / that call only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import read_log

from mini_claude.cli.terminal.render import clean
from tests.helpers import ROOT, anthropic_env, clean_env, run_cli

pytestmark = pytest.mark.timeout(60)

HOSTILE_SERVER = ROOT / "tests" / "mcp" / "servers" / "hostile_server.py"
SERVERS = {"hostile": {"command": sys.executable, "args": [str(HOSTILE_SERVER)]},
           "dead": {"command": sys.executable, "args": [str(HOSTILE_SERVER), "--crash"]}}
CONFIG = json.dumps({"mcpServers": SERVERS})
# what must never reach a terminal: ESC, BEL, the C1 CSI, the RTL override, and the hyperlink's target
FORBIDDEN = ("\x1b", "\x07", "\x9b", "\u202e", "8;;", "evil.example")
SHOWN = "click red exe.txt"  # what is left of hostile_server.HOSTILE


def assert_neutral(*outputs: str) -> None:
    for output in outputs:
        for bad in FORBIDDEN:
            assert bad not in output, f"{bad!r} in {output!r}"


# ---- clean() ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "shown"), [
    ("a\x1b[2Jb", "ab"),                                                    # CSI
    ("a\x1b[38;5;196mred\x1b[0m", "ared"),                                  # SGR with parameters
    ("x\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\y", "xlinky"),          # OSC 8 hyperlink, ST-terminated
    ("t\x1b]0;title\x07u", "tu"),                                           # OSC, BEL-terminated
    ("\x1bPq#0;2;0;0;0\x1b\\after", "after"),                               # DCS (sixel)
    ("\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\z", "z"),                   # APC, PM, SOS
    ("c1\x9b2Jz", "c1z"),                                                   # 8-bit CSI
    ("o\x9d8;;http://evil/\x9clink", "olink"),                              # 8-bit OSC and ST
    ("\x90dcs\x9cz", "z"),                                                  # 8-bit DCS
    ("a\x85b\x80c\x9fd", "abcd"),                                           # other C1
    ("\x1b(Bx\x1b7y\x1b8\x1bcz", "xyz"),                                    # charset, save/restore, RIS
    ("a\x00b\x08c\x7fd\re", "abcde"),                                       # C0, DEL, CR
    ("lines\nand\ttabs", "lines\nand\ttabs"),                               # kept
    ("abc\u202egnp.exe\u202c", "abcgnp.exe"),                               # RLO / PDF
    ("\u2066iso\u2069\u2067l\u2068f\u200e\u200f\u061c", "isolf"),           # isolates, marks
    ("r\u200bm \u2060x\ufeffy\U000e0041\U000e007f", "rm xy"),              # zero width, BOM, tags
    ("👨\u200d👩\u200d👧 \u0646\u200cم ❤\ufe0f", "👨\u200d👩\u200d👧 \u0646\u200cم ❤\ufe0f"),  # ZWJ, ZWNJ, VS16 stay
    ("\x1b", ""), ("\x1b[", ""), ("\x1b]8;;unterminated", "8;;unterminated"),  # broken sequences: no ESC left
])
def test_clean(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_clean_never_leaves_an_escape_or_c1_whatever_the_input() -> None:
    pieces = ["\x1b", "[", "]", "P", "\\", "\x07", "\x9b", "\x9c", "\x9d", "2J", "8;;", "a", "\x00", "\u202e"]
    import itertools

    for combo in itertools.product(pieces, repeat=3):
        out = clean("".join(combo))
        assert not any(ch in out for ch in "\x1b\x07\x9b\x9c\x9d\x00\u202e"), combo


def test_clean_returns_plain_text_itself() -> None:
    text = "plain text, é, 漢字\n" * 1000
    assert clean(text) is text


# ---- the CLI, against a real hostile server ---------------------------------------------------------------------

def mcp(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["mcp", *args, "--mcp-config", CONFIG], cwd=tmp_path, env=clean_env(tmp_path))


def test_mcp_tools_and_list_show_no_control_text_and_the_withheld_tool(tmp_path: Path) -> None:
    tools = mcp(tmp_path, "tools", "hostile")
    assert tools.returncode == 0, tools.stderr
    assert tools.stdout.splitlines() == [
        "mcp__hostile__echo  Echo text back.",
        f"mcp__hostile__shout  Shout {SHOWN}",
        "mcp__hostile__fail  Always fails.",
        "mcp__hostile__deep_reply  Answers too deep.",
        "1 tool withheld: deep_tool: input schema nested deeper than 64 levels",
    ]
    listed = mcp(tmp_path, "list")
    assert listed.returncode == 0, listed.stderr
    hostile, dead = listed.stdout.splitlines()
    assert hostile.startswith("hostile  ready           4 tools · started in ")
    assert hostile.endswith(" · 1 tool withheld: deep_tool: input schema nested deeper than 64 levels")
    assert dead == (f"dead     failed          server exited (exit code 3); stderr: fatal: {SHOWN} "
                    f"(check mcpServers.dead in --mcp-config)")
    as_json = mcp(tmp_path, "list", "--json")
    rows = {row["name"]: row for row in json.loads(as_json.stdout)}
    assert rows["hostile"]["withheld_tools"] == [
        {"name": "deep_tool", "reason": "input schema nested deeper than 64 levels"}]
    assert "withheld_tools" not in rows["dead"]
    got = mcp(tmp_path, "get", "dead")
    assert f"stderr: fatal: {SHOWN}" in got.stdout
    assert_neutral(tools.stdout, tools.stderr, listed.stdout, listed.stderr, as_json.stderr, got.stdout, got.stderr)
    # JSON output keeps the server's text, escaped: no raw control character reaches the terminal
    assert "\\u001b]8;;http://evil.example/" in as_json.stdout
    assert not any(ch in as_json.stdout for ch in "\x1b\x07\x9b\u202e")


def test_mcp_call_results_errors_and_refused_replies_show_no_control_text(tmp_path: Path) -> None:
    shout = mcp(tmp_path, "call", "hostile", "shout")
    assert (shout.returncode, shout.stdout) == (0, f"loud {SHOWN}\n"), shout.stderr
    fail = mcp(tmp_path, "call", "hostile", "fail")
    assert fail.returncode == 1
    assert f"mini-claude mcp: MCP server 'hostile': boom {SHOWN} (JSON-RPC error -32000)" in fail.stderr.splitlines()
    deep = mcp(tmp_path, "call", "hostile", "deep_reply")
    assert deep.returncode == 1
    assert ("mini-claude mcp: MCP server 'hostile': tools/call: the reply was refused: message nested deeper than "
            "512 levels") in deep.stderr.splitlines()
    dead = mcp(tmp_path, "call", "dead", "echo")
    assert dead.returncode == 2
    assert f"stderr: fatal: {SHOWN}" in dead.stderr
    assert_neutral(shout.stdout, shout.stderr, fail.stdout, fail.stderr, deep.stdout, deep.stderr, dead.stdout,
                   dead.stderr)


def _tool(name: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


def test_agent_survives_deep_content_and_prints_no_control_text(mock_model: Any, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    mock = mock_model([_tool("mcp__hostile__shout"), _tool("mcp__hostile__deep_reply"),
                       _tool("mcp__hostile__fail"), _tool("mcp__hostile__echo", text="after"),
                       {"content": [{"type": "text", "text": "done"}]}])
    proc = run_cli(["-p", "go", "--yolo", "--strict-mcp-config", "--mcp-config",
                    json.dumps({"mcpServers": {"hostile": SERVERS["hostile"]}})],
                   cwd=work, env=anthropic_env(tmp_path, mock.url))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    assert ("WARNING mini_claude.mcp.protocol: hostile: withholding tool 'deep_tool': input schema nested deeper "
            "than 64 levels") in proc.stderr.splitlines(), proc.stderr
    requests = [entry["body"] for entry in read_log(mock.log_path)]
    offered = [t["name"] for t in requests[0]["tools"] if t["name"].startswith("mcp__")]
    assert offered == ["mcp__hostile__echo", "mcp__hostile__shout", "mcp__hostile__fail",
                       "mcp__hostile__deep_reply"]
    results = [block for body in requests[1:] for block in body["messages"][-1]["content"]
               if block.get("type") == "tool_result"]
    texts = [json.dumps(r["content"]) for r in results]
    assert "nested deeper than 512 levels" in texts[1] and results[1].get("is_error") is True
    assert "after" in texts[3]
    assert_neutral(proc.stdout, proc.stderr)
