"""Running the Claude Agent SDK's shipped examples offline: where they are, how one is run, what it must print.

The examples are read at run time from the SDK's sdist (`scripts/install-agent-sdk.sh` puts its `examples/` folder in
`.cache/agent-sdk/examples`); nothing of the SDK is copied into this tree. One example run (`Run`) is a file, the
argv naming a sub-example, a scripted model (`turns`, built per run because some inputs name the scratch folder) and
what must show: text in its stdout, files it made, and what the model was sent. `run_example` copies the file into a
scratch folder — unchanged for the SDK itself (`target="sdk"`, its own bundled Claude Code binary), or with only its
imports of `claude_agent_sdk` pointed at `mini_claude.compat.claude_agent_sdk` (`target="compat"`) — and runs it as a
subprocess with HOME, cwd and the model (`ANTHROPIC_BASE_URL` at a `MockModelServer`) isolated.

Used by tests/compat/test_sdk_examples.py (ours) and tests/compat/run_sdk_examples.py (the SDK's, to prove each
scenario matches what the real thing does).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]
AGENT_SDK_DIR = Path(os.environ.get("MINI_CLAUDE_AGENT_SDK_DIR", ROOT / ".cache" / "agent-sdk"))
EXAMPLES = AGENT_SDK_DIR / "examples"
SDK_SITE = AGENT_SDK_DIR / "site"
COMPAT_MODULE = "mini_claude.compat.claude_agent_sdk"
RUN_TIMEOUT_S = 120
Target = Literal["sdk", "compat"]

_IMPORT = re.compile(r"^(\s*)(from|import)\s+claude_agent_sdk\b", re.MULTILINE)


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def call(name: str, tool_input: dict[str, Any], say: str = "") -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": say}] if say else []
    return {"content": [*content, {"type": "tool_use", "name": name, "input": tool_input}]}


QUOTE = text("The tool said: {{last_tool_result}}")


@dataclass(frozen=True)
class Scratch:
    """The folders one run uses: `sdk` stands for the SDK's checkout (the example sits in `sdk/examples`, and
    setting_sources.py uses `sdk` as its cwd), `home` is HOME, the process runs in `sdk`."""

    root: Path

    @property
    def sdk(self) -> Path:
        return self.root / "sdk"

    @property
    def home(self) -> Path:
        return self.root / "home"


@dataclass(frozen=True)
class Run:
    """One run of one example: `argv` after the file, the model's turns, and what must be seen afterwards.

    `expect` / `absent`: text that must / must not be in stdout; `files`: path under `sdk` → text it must contain;
    `no_files`: paths (under `sdk`, or absolute) that must not exist afterwards;
    `sent`: text that must appear somewhere in the requests the model received (the system prompt, a hook's
    context); `setup` prepares the scratch folders."""

    example: str
    argv: tuple[str, ...]
    turns: Callable[[Scratch], list[dict[str, Any]]]
    expect: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)
    no_files: tuple[str, ...] = ()
    sent: tuple[str, ...] = ()
    setup: Callable[[Scratch], None] | None = None
    slow: bool = False  # waits on the example's own sleeps (seconds): not worth CI's time

    @property
    def id(self) -> str:
        return "-".join([self.example.removesuffix(".py"), *self.argv]) or self.example


@dataclass
class Outcome:
    rc: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[dict[str, Any]]

    def problems(self, run: Run, scratch: Scratch) -> list[str]:
        """What this outcome lacks of `run`'s expectations (empty: it passed)."""
        found: list[str] = []
        if self.rc != 0:
            found.append(f"exit code {self.rc}")
        found += [f"stdout lacks {want!r}" for want in run.expect if want not in self.stdout]
        found += [f"stdout has {bad!r}" for bad in run.absent if bad in self.stdout]
        for name, want in run.files.items():
            path = scratch.sdk / name
            if not path.is_file():
                found.append(f"no file {name}")
            elif want not in path.read_text():
                found.append(f"{name} lacks {want!r}")
        for name in run.no_files:
            path = scratch.sdk / name  # an absolute name stays itself
            if path.exists():
                found.append(f"{name} was made")
                if not path.is_relative_to(scratch.root):  # a client wrote outside the scratch folder: tidy up
                    if path.parent.name.startswith("mini-claude-"):
                        shutil.rmtree(path.parent)
                    else:
                        path.unlink()
        bodies = repr([r.get("body") for r in self.requests])
        found += [f"the model was never sent {want!r}" for want in run.sent if want not in bodies]
        return found

    def report(self) -> str:
        return (f"--- stdout ---\n{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-3000:]}\n"
                f"--- {len(self.requests)} model requests, {self.seconds:.1f} s ---")


def compat_source(source: str) -> str:
    """`source` with each import of `claude_agent_sdk` (the package or a submodule such as `.types`) naming the
    compat module instead; nothing else changes."""
    changed, count = _IMPORT.subn(lambda m: f"{m.group(1)}{m.group(2)} {COMPAT_MODULE}", source)
    if count == 0:
        raise ValueError("the example imports nothing from claude_agent_sdk")
    return changed


def run_example(run: Run, target: Target, scratch: Scratch) -> Outcome:
    """Copy `run.example` into `scratch` (its imports changed for `compat`) and run it against a fresh mock model
    scripted with `run.turns`. The SDK runs its own bundled Claude Code binary (the examples take no `cli_path`)."""
    source = (EXAMPLES / run.example).read_text()
    (scratch.sdk / "examples").mkdir(parents=True, exist_ok=True)
    scratch.home.mkdir(parents=True, exist_ok=True)
    if run.setup:
        run.setup(scratch)
    script = scratch.sdk / "examples" / run.example
    script.write_text(compat_source(source) if target == "compat" else source)
    server = MockModelServer(parse_scenario({"turns": run.turns(scratch)}, source=run.id))
    url = server.start()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE", "MINI_CLAUDE_", "PYTHON"))}
    env.update(HOME=str(scratch.home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-test-not-a-key",
               PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    if target == "sdk":
        env.update(PYTHONPATH=str(SDK_SITE), IS_SANDBOX="1", DISABLE_AUTOUPDATER="1",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    else:
        env.update(PYTHONPATH=str(ROOT), MINI_CLAUDE_STATE_DIR=str(scratch.root / "state"))
    began = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, str(script), *run.argv], cwd=scratch.sdk, env=env,
                              capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = -9, _decoded(exc.stdout), _decoded(exc.stderr) + f"\n(killed after {RUN_TIMEOUT_S} s)"
    finally:
        requests = [r for r in server.requests if r["path"].startswith("/v1/messages")
                    and not r["path"].endswith("count_tokens")]
        server.stop()
    return Outcome(rc, out, err, time.monotonic() - began, requests)


def _decoded(data: str | bytes | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""
