"""`mini-claude mcp doctor` checks the MCP switches of every settings scope through the real CLI: each problem
(a key of the wrong type, an entry that is not SERVER/TOOL, a server no config defines, a tool the reached server
does not offer, a `*Mcpjson*` key on a server that is not a .mcp.json one, a repository's switch-on in a folder not
trusted, a key nothing reads) is reported with a fix, in text and in --json, and the exit code says so; clean
switches report nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.integration.conftest import Cli, probe_entry


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_doctor_reports_each_bad_switch_with_its_fix(cli: Cli) -> None:
    config = cli.config_file({"probe": probe_entry()})
    _write(cli.home / ".claude" / "settings.json", {"disabledMcpTools": "probe/poke"})
    _write(cli.work / ".claude" / "settings.json", {"disabledMcpTools": ["probe/nope", "ghost/x", 3, "bad"],
                                                     "enabledMcpjsonServers": ["probe"]})
    _write(cli.work / ".claude" / "settings.local.json", {"disabledMcpjsonServers": ["probe"],
                                                           "enabledMcpTools": ["probe/poke"]})
    r = cli.run("mcp", "doctor", "--json", "--mcp-config", config, "--timeout", "15")
    assert r.rc == 1, r.stderr
    entries = json.loads(r.stdout)
    probe = next(e for e in entries if e["server"] == "probe")
    about_probe = {p["code"]: p for p in probe["problems"]}
    assert set(about_probe) == {"switch-unknown-tool", "switch-wrong-key"}, probe["problems"]
    assert "offers no tool 'nope'" in about_probe["switch-unknown-tool"]["cause"]
    assert "echo, env_keys" in about_probe["switch-unknown-tool"]["fix"]  # the tools it does offer are named
    assert about_probe["switch-wrong-key"]["fix"] == 'move it to "disabledMcpServers"'
    files = {e["source"]: {p["code"]: p for p in e["problems"]} for e in entries if e["type"] == "settings"}
    assert all(e["server"] is None and e["ok"] is False for e in entries if e["type"] == "settings")
    user = files["~/.claude/settings.json"]
    assert set(user) == {"switch-not-a-list"} and "a string, not a list" in user["switch-not-a-list"]["cause"]
    project = files[".claude/settings.json"]
    assert set(project) == {"switch-unknown-server", "switch-not-a-string", "switch-bad-entry",
                            "switch-on-untrusted"}, project
    assert "'ghost'" in project["switch-unknown-server"]["cause"] and "probe" in project["switch-unknown-server"]["fix"]
    assert "not trusted" in project["switch-on-untrusted"]["cause"]
    assert "enabledMcpjsonServers" in project["switch-on-untrusted"]["fix"]
    local = files[".claude/settings.local.json"]
    assert set(local) == {"switch-no-such-key"}
    for problems in files.values():
        for problem in problems.values():
            assert problem["cause"] and problem["fix"] and "\n" not in problem["cause"] + problem["fix"]
    text = cli.run("mcp", "doctor", "--mcp-config", config, "--timeout", "15")
    assert text.rc == 1
    assert "MCP switches in settings  ✘ 6 problems" in text.stdout, text.stdout
    assert "offers no tool 'nope'" in text.stdout and "fix" in text.stdout
    one = cli.run("mcp", "doctor", "probe", "--json", "--mcp-config", config, "--timeout", "15")
    assert [e["server"] for e in json.loads(one.stdout)] == ["probe"]  # only what is about that server


def test_clean_switches_and_a_trusted_repository_s_switch_on_are_no_problem(cli: Cli) -> None:
    (cli.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": probe_entry()}}))
    config = cli.config_file({"probe": probe_entry()})
    _write(cli.work / ".claude" / "settings.json", {"enabledMcpjsonServers": ["proj"],
                                                     "disabledMcpTools": ["probe/poke", "probe/*"]})
    _write(cli.home / ".claude" / "settings.json", {"disabledMcpjsonServers": [], "disabledMcpServers": []})
    untrusted = cli.run("mcp", "doctor", "--json", "--mcp-config", config, "--timeout", "15")
    [settings] = [e for e in json.loads(untrusted.stdout) if e["type"] == "settings"]
    assert [p["code"] for p in settings["problems"]] == ["switch-on-untrusted"]
    assert cli.run("trust").rc == 0  # the user's consent: the repository's switch-on counts now
    trusted = cli.run("mcp", "doctor", "--json", "--mcp-config", config, "--timeout", "15")
    entries = json.loads(trusted.stdout)
    assert [e for e in entries if e["type"] == "settings"] == [], entries
    assert all(not p["code"].startswith("switch-") for e in entries for p in e["problems"]), entries
    text = cli.run("mcp", "doctor", "--mcp-config", config, "--timeout", "15")
    assert "MCP switches in settings  ✔ no problems" in text.stdout, text.stdout
