"""Issue 29 (install): with the agent's own virtualenv active — as the README once said to do — the model's shell
commands ran in it, so the user's `python3 -m pytest` tested against our packages. The CLI now takes its own
virtualenv off PATH and VIRTUAL_ENV for everything it runs for the user; a virtualenv the user activated for their
own project is kept."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mini_claude.own_venv import without_own_virtualenv
from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

PROBE = 'command -v python3; echo "VE=$VIRTUAL_ENV"'


def test_only_our_virtualenv_is_taken_away() -> None:
    env = {"PATH": "/opt/agent/.venv/bin:/home/u/proj/.venv/bin:/usr/bin", "VIRTUAL_ENV": "/opt/agent/.venv",
           "VIRTUAL_ENV_PROMPT": "(.venv)", "HOME": "/home/u"}
    cleaned = without_own_virtualenv(env, prefix="/opt/agent/.venv", base_prefix="/usr")
    assert cleaned == {"PATH": "/home/u/proj/.venv/bin:/usr/bin", "HOME": "/home/u"}
    theirs = {**env, "VIRTUAL_ENV": "/home/u/proj/.venv"}
    assert without_own_virtualenv(theirs, prefix="/opt/agent/.venv", base_prefix="/usr")["VIRTUAL_ENV"] == \
        "/home/u/proj/.venv"
    assert without_own_virtualenv(env, prefix="/usr", base_prefix="/usr") == env  # not run from a virtualenv


def _our_venv() -> Path:
    if sys.prefix == sys.base_prefix:
        pytest.skip("the tests run outside a virtualenv (scripts/test.sh runs them from .venv)")
    return Path(sys.prefix)


def test_our_active_virtualenv_does_not_reach_the_models_commands(cli: Cli) -> None:
    ours = _our_venv()
    mock = cli.mock([tool_use("Bash", {"command": PROBE}), answer("done")])
    env = {"VIRTUAL_ENV": str(ours), "PATH": f"{ours / 'bin'}{os.pathsep}{cli.env.get('PATH', os.defpath)}"}
    result = cli.run("-p", "which python?", "--allowedTools", "Bash", env=env)
    assert result.rc == 0, result.stderr
    shown = result_text(tool_results(mock)[0])
    assert str(ours) not in shown and "VE=\n" in shown + "\n", shown


def test_the_users_project_virtualenv_is_kept(cli: Cli, tmp_path: Path) -> None:
    ours = _our_venv()
    project_venv = tmp_path / "proj-venv"
    (project_venv / "bin").mkdir(parents=True)
    (project_venv / "bin" / "python3").symlink_to(sys.base_prefix + "/bin/python3")
    mock = cli.mock([tool_use("Bash", {"command": PROBE}), answer("done")])
    env = {"VIRTUAL_ENV": str(project_venv),
           "PATH": os.pathsep.join([str(project_venv / "bin"), str(ours / "bin"), cli.env.get("PATH", os.defpath)])}
    result = cli.run("-p", "which python?", "--allowedTools", "Bash", env=env)
    assert result.rc == 0, result.stderr
    shown = result_text(tool_results(mock)[0])
    assert f"{project_venv}/bin/python3" in shown and f"VE={project_venv}" in shown, shown
