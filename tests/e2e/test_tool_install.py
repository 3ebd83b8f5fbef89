"""Issue 29, acceptance 2: installed like a tool on a fresh machine, mini-claude stays out of the user's project.

A clone of this repository (git clone of HEAD) is installed the two ways the README names — `uv tool install` and
`pipx install` (pip building the wheel and installing it into the tool's own virtualenv) — each into folders of its
own under tmp (HOME too), with uv and pipx from scripts/install-tools.sh (.cache/tools; their download caches there
keep a second run fast: uv ~3 s, pipx ~7 s warm). The installed `mini-claude`, found on PATH with nothing activated, then runs `-p` against the
mock model in another project whose own virtualenv is active, and the model's `command -v python3` is the
project's; with the tool's own virtualenv active (as the README once said to activate ours) it is the system's,
and so it is with this checkout's dev `.venv` active. The time each install took is printed (`-s` shows it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_claude.models.mock_server import MockModelServer
from mini_claude.models.scenario import parse_scenario
from tests.helpers import ROOT, require, require_program
from tests.integration.conftest import result_text, sent_tool_results

pytestmark = pytest.mark.timeout(600)

TOOLS = Path(os.environ.get("MINI_CLAUDE_TOOLS_DIR", ROOT / ".cache" / "tools"))
PROBE = 'command -v python3; echo "VE=$VIRTUAL_ENV"'
SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"]
INSTALL_TIMEOUT_S = 300
# what an install may take from the network or its proxy, kept when the rest of the environment is not
_NETWORK_KEYS = ("PIP_", "SSL_CERT", "REQUESTS_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy",
                 "https_proxy", "no_proxy", "LANG", "LC_ALL")


def _base_python() -> str:
    """A plain interpreter (not a virtualenv's) for the new environments: the one this test's virtualenv is made of."""
    for candidate in (Path(sys.base_prefix) / "bin" / "python3", Path("/usr/bin/python3")):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    require("a base python3", "the installs need a Python ≥ 3.11 outside any virtualenv")


def _tool(name: str) -> Path:
    path = TOOLS / "venv" / "bin" / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        require(name, f"not in {TOOLS / 'venv' / 'bin'}; run `bash scripts/install-tools.sh` (scripts/test.sh does)")
    return path


def _fresh_env(home: Path, **extra: str) -> dict[str, str]:
    """A new machine's environment: no virtualenv, no PYTHONPATH, the system's PATH, HOME in tmp."""
    env = {k: v for k, v in os.environ.items() if k.startswith(_NETWORK_KEYS)}
    env.update(PATH=os.pathsep.join(SYSTEM_PATH), HOME=str(home), **extra)
    return env


def _install(argv: list[str], env: dict[str, str], what: str) -> float:
    began = time.monotonic()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                          stdin=subprocess.DEVNULL)
    took = time.monotonic() - began
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    print(f"\n[install timing] {what}: {took:.1f} s")
    return took


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository's HEAD, cloned as a user would (what is not committed is not in it)."""
    git = require_program("git", "the install starts from a clone")
    where = tmp_path_factory.mktemp("clone") / "mini-claude"
    subprocess.run([git, "clone", "-q", str(ROOT), str(where)], check=True, timeout=120,
                   stdin=subprocess.DEVNULL, capture_output=True)
    return where


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[dict[str, Path]]:
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run([_base_python(), "-m", "venv", "--without-pip", str(project / ".venv")], check=True, timeout=120)
    yield {"home": home, "project": project, "state": tmp_path / "state", "tmp": tmp_path}


def _which_python(exe: Path, m: dict[str, Path], *, active: Path | None, path: list[str]) -> str:
    """Run the installed `mini-claude -p` in the project with `active` as VIRTUAL_ENV and `path` as PATH; the model
    calls Bash `command -v python3`; what the tool result showed."""
    mock = MockModelServer(parse_scenario({"turns": [
        {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": PROBE}}]},
        {"content": [{"type": "text", "text": "done"}]}]}, source="test"))
    url = mock.start()
    try:
        env = _fresh_env(m["home"], MINI_CLAUDE_STATE_DIR=str(m["state"]), ANTHROPIC_BASE_URL=url,
                         ANTHROPIC_API_KEY="sk-test")
        env["PATH"] = os.pathsep.join(path)
        if active is not None:
            env["VIRTUAL_ENV"] = str(active)
        found = shutil.which("mini-claude", path=env["PATH"])
        # the installed one (or, with the tool's own virtualenv active, its copy in there): nothing else shadows it
        assert found in (str(exe), str(active / "bin" / "mini-claude") if active else None), (found, exe)
        proc = subprocess.run(["mini-claude", "-p", "which python3?", "--allowedTools", "Bash"], cwd=m["project"],
                              env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        results: list[dict[str, Any]] = sent_tool_results(mock.requests)
        assert len(results) == 1, proc.stderr
        return result_text(results[0])
    finally:
        mock.stop()


def _system_python3(*path: str) -> str:
    """The python3 found on `path` (the system's PATH by default)."""
    found = shutil.which("python3", path=os.pathsep.join(path or SYSTEM_PATH))
    assert found is not None
    return found


def _assert_stays_out(exe: Path, own_venv: Path, m: dict[str, Path]) -> None:
    bin_dir = exe.parent
    theirs = m["project"] / ".venv"
    shown = _which_python(exe, m, active=theirs, path=[str(theirs / "bin"), str(bin_dir), *SYSTEM_PATH])
    assert shown.splitlines()[:2] == [f"{theirs}/bin/python3", f"VE={theirs}"], shown  # the project's, kept
    # the tool's own virtualenv active, as the README once said to activate ours: the system's python3
    path = list(dict.fromkeys([str(own_venv / "bin"), str(bin_dir), *SYSTEM_PATH]))
    shown = _which_python(exe, m, active=own_venv, path=path)
    assert shown.splitlines()[:2] == [_system_python3(*(p for p in path if p != str(own_venv / "bin"))), "VE="], shown
    assert str(own_venv) not in shown


def _interpreter_of(exe: Path) -> Path:
    first = exe.read_text(errors="replace").splitlines()[0]
    assert first.startswith("#!"), first
    return Path(first[2:].split()[0])


def test_uv_tool_install_from_a_clone(clone: Path, machine: dict[str, Path]) -> None:
    uv = _tool("uv")
    tmp = machine["tmp"]
    env = _fresh_env(machine["home"], UV_TOOL_DIR=str(tmp / "uv-tools"), UV_TOOL_BIN_DIR=str(tmp / "bin"),
                     UV_CACHE_DIR=str(TOOLS / "uv-cache"), UV_PYTHON_DOWNLOADS="never", UV_NO_CONFIG="1")
    _install([str(uv), "tool", "install", "--python", _base_python(), str(clone)], env, "uv tool install <clone>")
    exe = tmp / "bin" / "mini-claude"
    own = tmp / "uv-tools" / "mini-claude"
    assert _interpreter_of(exe) == own / "bin" / "python"  # its own environment, not this checkout's
    _assert_stays_out(exe, own, machine)


def test_pipx_install_from_a_clone(clone: Path, machine: dict[str, Path]) -> None:
    pipx = _tool("pipx")
    tmp = machine["tmp"]
    env = _fresh_env(machine["home"], PIPX_HOME=str(tmp / "pipx"), PIPX_BIN_DIR=str(tmp / "bin"),
                     PIPX_MAN_DIR=str(tmp / "man"), PIP_CACHE_DIR=str(TOOLS / "pip-cache"))
    _install([str(pipx), "install", "--python", _base_python(), str(clone)], env, "pipx install <clone>")
    exe = tmp / "bin" / "mini-claude"
    own = tmp / "pipx" / "venvs" / "mini-claude"
    assert _interpreter_of(exe) == own / "bin" / "python"
    _assert_stays_out(exe, own, machine)


def test_the_dev_venv_active_as_the_readme_once_said(machine: dict[str, Path]) -> None:
    """`source .venv/bin/activate; mini-claude`: the dev install's own virtualenv is the one active, and taken away."""
    dev = Path(sys.prefix)
    exe = dev / "bin" / "mini-claude"
    if dev == Path(sys.base_prefix) or not exe.is_file():
        pytest.skip("the tests run outside the dev virtualenv (scripts/test.sh runs them from .venv)")
    shown = _which_python(exe, machine, active=dev, path=[str(dev / "bin"), *SYSTEM_PATH])
    assert shown.splitlines()[:2] == [_system_python3(), "VE="], shown
    assert str(dev) not in shown
