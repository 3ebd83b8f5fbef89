"""Run the SDK's shipped examples unchanged against the real claude-agent-sdk (its bundled Claude Code binary) with the
same scripted model the compat tests use — proof that each scenario makes the real thing do what the example
expects, so a failure of ours under tests/compat is ours. Not part of CI (the CLI takes seconds per session).

    .venv/bin/python tests/compat/run_sdk_examples.py [--target sdk|compat] [--slow] [--keep] [RUN_ID ...]

Needs `scripts/install-agent-sdk.sh` to have run. Prints one line per run (ok / FAILED with what is missing, and the
output of failed runs) and exits non-zero when any failed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.compat.examples import EXAMPLES, Scratch, run_example  # noqa: E402
from tests.compat.scenarios import RUNS  # noqa: E402


def describe(body: dict[str, Any]) -> str:
    """One line for a Messages request: its model, system prompt's start and its last message's gist."""
    system = body.get("system", "")
    system = system if isinstance(system, str) else " ".join(b.get("text", "") for b in system)
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content")
    gist = content if isinstance(content, str) else " | ".join(
        str(b.get("text") or b.get("content") or b.get("name") or b.get("type")) for b in content or ())
    tools = len(body.get("tools") or ())
    return f"{body.get('model')} tools={tools} system={system[:60]!r} last={gist[:160]!r}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", choices=("sdk", "compat"), default="sdk")
    parser.add_argument("--slow", action="store_true", help="also the runs that wait on the example's own sleeps")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders (printed)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print the output of passing runs too")
    parser.add_argument("--requests", action="store_true", help="print a line per model request of each run")
    parser.add_argument("ids", nargs="*", help="run ids (default: all), e.g. hooks-PreToolUse")
    args = parser.parse_args()
    if not EXAMPLES.is_dir():
        print(f"no examples at {EXAMPLES}: run scripts/install-agent-sdk.sh first", file=sys.stderr)
        return 2
    runs = [r for r in RUNS if (r.id in args.ids if args.ids else args.slow or not r.slow)]
    failed = 0
    for run in runs:
        root = Path(tempfile.mkdtemp(prefix=f"sdk-ex-{run.id}-"))
        scratch = Scratch(root)
        outcome = run_example(run, args.target, scratch)
        problems = outcome.problems(run, scratch)
        failed += bool(problems)
        print(f"{'ok    ' if not problems else 'FAILED'} {run.id:<45} {outcome.seconds:5.1f} s  "
              f"{len(outcome.requests)} requests  {'; '.join(problems)}", flush=True)
        if problems or args.verbose:
            print(outcome.report())
        if args.requests:
            for number, request in enumerate(outcome.requests, 1):
                print(f"  request {number}: {describe(request.get('body') or {})}")
        if args.keep:
            print(f"       kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"{len(runs) - failed}/{len(runs)} runs passed against {args.target}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
