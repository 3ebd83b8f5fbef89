"""What the model is sent, side by side: the same `-p` runs of mini-claude and of Claude Code's binary against the
offline mock model, and what each put in its requests and how each exited (issue 26, acceptance 2).

    .venv/bin/python bench/model_request.py [--claude PATH] [--json]

Each case runs once per client in a fresh scratch folder (a git repository with a CLAUDE.md, an isolated HOME, no
key of the caller's) with the same scenario, and reports: the core tools' names and input keys, the model id with
no setting and for `--model sonnet|opus|haiku`, `max_tokens`, `thinking`, `output_config`, `context_management`,
the number of cache breakpoints, the system prompt's size, where CLAUDE.md went, and the exit code and json
`subtype` of an answered run, of a run whose tool call was denied and of a run stopped by `--max-turns`.
Claude Code's binary: `--claude`, else `$CLAUDE_CODE_BIN`, else the one scripts/test.sh installs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mini_claude.models.mock_server import MockModelServer  # noqa: E402
from mini_claude.models.scenario import parse_scenario  # noqa: E402

INSTALLED = ROOT / ".cache" / "claude-code" / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
CORE_TOOLS = ("Bash", "Read", "Edit", "Write", "Glob", "Grep", "WebFetch", "WebSearch", "TodoWrite", "Agent",
              "NotebookEdit", "ExitPlanMode", "TaskOutput", "TaskStop", "ToolSearch", "Skill")
RUN_TIMEOUT_S = 120

ANSWER = {"content": [{"type": "text", "text": "done"}]}
TOUCH = {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch made-by-model"}}]}


def _scratch(base: Path) -> tuple[Path, Path]:
    work, home = base / "work", base / "home"
    work.mkdir(parents=True)
    home.mkdir()
    (work / "CLAUDE.md").write_text("# Rules of this project\n- Answer in English.\n")
    (work / "app.py").write_text("print('hello')\n")
    git = ["git", "-c", "user.email=bench@example.invalid", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", "-A"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=work, check=True)
    return work, home


def _argv_env(client: str, claude: str, home: Path, url: str) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE_", "MINI_CLAUDE_"))}
    env.update(HOME=str(home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-bench-not-a-key")
    if client == "claude-code":
        env.update(IS_SANDBOX="1", DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        return [claude], env
    env.update(MINI_CLAUDE_STATE_DIR=str(home / ".mini-claude-state"), PYTHONPATH=str(ROOT))
    return [sys.executable, "-m", "mini_claude"], env


def run_case(client: str, claude: str, turns: list[dict[str, Any]], *flags: str) -> dict[str, Any]:
    """One `-p` run of `client` on `turns`: its requests (bodies and headers), exit code and json result."""
    with tempfile.TemporaryDirectory(prefix="mc-bench-req-") as tmp:
        work, home = _scratch(Path(tmp))
        server = MockModelServer(parse_scenario({"turns": turns}, source="bench"))
        url = server.start()
        try:
            argv, env = _argv_env(client, claude, home, url)
            proc = subprocess.run([*argv, "-p", "go", "--output-format", "json", *flags], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
            requests = [r for r in server.requests if r["path"] == "/v1/messages"]
        finally:
            server.stop()
        try:
            result = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {}
        except ValueError:
            result = {"unparsed": proc.stdout[-300:]}
        return {"rc": proc.returncode, "result": result, "requests": requests, "stderr": proc.stderr[-500:]}


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


def _breakpoints(body: dict[str, Any]) -> int:
    count = 1 if "cache_control" in body else 0
    for tool in body.get("tools") or ():
        count += "cache_control" in tool
    system = body.get("system")
    if isinstance(system, list):
        count += sum("cache_control" in b for b in system)
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, list):
            count += sum(isinstance(b, dict) and "cache_control" in b for b in content)
    return count


def _first_user_text(body: dict[str, Any]) -> str:
    for message in body.get("messages") or ():
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else "".join(
                b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def describe_first_request(run: dict[str, Any]) -> dict[str, Any]:
    body = run["requests"][0]["body"] if run["requests"] else {}
    tools = {t.get("name"): sorted((t.get("input_schema") or {}).get("properties", {})) for t in body.get("tools") or ()
             if not t.get("defer_loading")}
    system = _system_text(body)
    return {
        "model": body.get("model"),
        "max_tokens": body.get("max_tokens"),
        "thinking": body.get("thinking"),
        "output_config": body.get("output_config"),
        "context_management": body.get("context_management"),
        "beta": run["requests"][0]["headers"].get("anthropic-beta") if run["requests"] else None,
        "cache_breakpoints": _breakpoints(body),
        "system_chars": len(system),
        "claude_md_in": ("system" if "Answer in English" in system else
                         "first user message" if "Answer in English" in _first_user_text(body) else "nowhere"),
        "tools_sent": sorted(tools),
        "core_tools": {name: tools[name] for name in CORE_TOOLS if name in tools},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claude", default=os.environ.get("CLAUDE_CODE_BIN", str(INSTALLED)))
    parser.add_argument("--json", action="store_true", help="print the raw comparison as JSON")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    for client in ("mini-claude", "claude-code"):
        row: dict[str, Any] = {}
        row["first_request"] = describe_first_request(run_case(client, args.claude, [ANSWER]))
        for alias in ("sonnet", "opus", "haiku"):
            first = run_case(client, args.claude, [ANSWER], "--model", alias)
            row[f"--model {alias}"] = first["requests"][0]["body"].get("model") if first["requests"] else None
        answered = run_case(client, args.claude, [ANSWER])
        denied = run_case(client, args.claude, [TOUCH, ANSWER])
        max_turns = run_case(client, args.claude, [TOUCH, ANSWER], "--max-turns", "1")
        for name, run in (("answered", answered), ("denied", denied), ("max_turns", max_turns)):
            row[f"exit {name}"] = {"rc": run["rc"], "subtype": run["result"].get("subtype"),
                                   "is_error": run["result"].get("is_error"),
                                   "denials": len(run["result"].get("permission_denials") or [])}
        report[client] = row
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    ours, theirs = report["mini-claude"], report["claude-code"]
    keys = [k for k in ours if k != "first_request"]
    print("| | mini-claude | Claude Code |\n|---|---|---|")
    for key, value in ours["first_request"].items():
        if key != "core_tools":
            print(f"| {key} | `{json.dumps(value)}` | `{json.dumps(theirs['first_request'].get(key))}` |")
    for name in CORE_TOOLS:
        a, b = ours["first_request"]["core_tools"].get(name), theirs["first_request"]["core_tools"].get(name)
        if a or b:
            print(f"| tool {name} | {', '.join(a) if a else '—'} | {', '.join(b) if b else '—'} |")
    for key in keys:
        print(f"| {key} | `{json.dumps(ours[key])}` | `{json.dumps(theirs[key])}` |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
