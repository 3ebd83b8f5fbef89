"""Issue 28, acceptance 2: the Claude Agent SDK's shipped examples run against the mock model with only their import
changed to `mini_claude.compat.claude_agent_sdk`.

Each example is read from the SDK's sdist at test time (`.cache/agent-sdk/examples`, put there by
scripts/install-agent-sdk.sh; a skip saying so without it, a failure under CI), copied into a scratch folder with its
`claude_agent_sdk` imports pointed at the compat module, and run as a subprocess with HOME, cwd and the model
isolated; tests/compat/scenarios.py scripts the model and says what the output must show. The same scenarios pass
against the real SDK (tests/compat/run_sdk_examples.py), so a failure here is a difference of ours. Runs that only
wait on the example's own sleeps (`slow`) are left to that script. tests/compat/README.md lists what each exercises.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.compat.examples import COMPAT_MODULE, EXAMPLES, Run, Scratch, compat_source, run_example
from tests.compat.scenarios import RUNS
from tests.helpers import require

FAST_RUNS = [run for run in RUNS if not run.slow]


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def test_compat_module_exists() -> None:
    """The one clear failure while the compat module is not there (each example below then skips, pointing here)."""
    assert _module_exists(COMPAT_MODULE), f"{COMPAT_MODULE} is missing: the SDK's examples cannot run against it"


def test_import_rewrite_changes_only_the_imports() -> None:
    source = ("import anyio\n\nfrom claude_agent_sdk import (\n    query,\n)\nfrom claude_agent_sdk.types import X\n"
              "    from claude_agent_sdk import ClaudeSDKClient\nprint('claude_agent_sdk stays in text')\n")
    assert compat_source(source) == source.replace("from claude_agent_sdk", f"from {COMPAT_MODULE}")
    with pytest.raises(ValueError, match="imports nothing"):
        compat_source("print('hi')\n")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("run", FAST_RUNS, ids=[run.id for run in FAST_RUNS])
def test_example_runs_with_the_compat_import(run: Run, tmp_path: Path) -> None:
    if not (EXAMPLES / run.example).is_file():
        require("the Claude Agent SDK's examples", f"no {run.example} in {EXAMPLES} (run scripts/install-agent-sdk.sh)")
    if not _module_exists(COMPAT_MODULE):
        pytest.skip(f"{COMPAT_MODULE} is missing (test_compat_module_exists fails for it)")
    scratch = Scratch(tmp_path)
    outcome = run_example(run, "compat", scratch)
    problems = outcome.problems(run, scratch)
    assert not problems, "; ".join(problems) + "\n" + outcome.report()
