"""Shell rules proved against real bash: generated commands mixing bash's constructs are matched by the permission
gate and then run with `/bin/bash -c` (as the bash tool does) in a scratch directory.

PATH holds only stub programs: `git` does nothing; `timeout`, `nohup`, `nice` run their command as the real ones
would; every other name the generator uses writes a marker file named after itself (the wrappers `sudo`, `env`,
`xargs`, `find -exec` then run their command too); `bash`/`sh` are the real bash. Builtins (`eval`, `exec`,
`command`, `source`, `trap`, ...) are bash's own. The environment is only PATH, MARK_DIR and FUNCNEST, so no real
program can be reached. The generated-command count and the run time are printed (and in any failure message).

(a) a command the allow rules auto-allow creates no marker and no file at all;
(b) a command the deny rule `Bash(rm:*)` lets through in bypassPermissions mode never runs the stub `rm`.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions.shell import split_shell_command
from mini_claude.permissions.write_places import resolve
from mini_claude.tools.shell import BashTool

BASH = "/bin/bash"
BATCH = 25            # commands per hypothesis example, run in parallel
EXAMPLES = 240        # hypothesis examples per property: 240 x 25 = 6,000 commands (over 5,000 distinct)
WORKERS = 4
RUN_TIMEOUT_S = 5.0
FUNCNEST = "6"        # generated functions named `git` call `git`: bash's own recursion limit keeps them finite
# `break` ends every generated loop after one round; allowing it lets loops of allowed commands be allowed.
ALLOW_RULES = ("Bash(git status:*)", "Bash(git diff:*)", "Bash(echo:*)", "Bash(true)", "Bash(:)", "Bash(break)")

pytestmark = [pytest.mark.skipif(not os.access(BASH, os.X_OK), reason="needs /bin/bash"), pytest.mark.timeout(300)]

_MARK = ': > "${MARK_DIR:?}/%s"\n'
_STUBS = {
    "git": "exit 0\n",
    "sudo": 'while [ $# -gt 0 ]; do case "$1" in -u|-g) shift 2;; -*) shift;; *) break;; esac; done\nexec "$@"\n',
    "env": 'while [ $# -gt 0 ]; do case "$1" in -u) shift 2;; -*|*=*) shift;; *) break;; esac; done\n'
           '[ $# -gt 0 ] && exec "$@"\n',
    "timeout": 'while [ $# -gt 0 ]; do case "$1" in -s|-k) shift 2;; -*) shift;; *) break;; esac; done\n'
               'shift\nexec "$@"\n',
    "nohup": 'exec "$@"\n',
    "nice": '[ "$1" = -n ] && shift 2\nexec "$@"\n',
    "xargs": 'while read -r line; do set -- "$@" $line; done\nexec "$@"\n',
    "find": 'while [ $# -gt 0 ] && [ "$1" != -exec ]; do shift; done\n[ $# -gt 0 ] || exit 0\nshift\nfirst=1\n'
            'for a in "$@"; do\n  if [ $first = 1 ]; then set --; first=0; fi\n'
            '  case $a in ";"|"+") break;; "{}") set -- "$@" ./f;; *) set -- "$@" "$a";; esac\ndone\n"$@"\n',
}
# `git` is the allowed program; `timeout`/`nohup`/`nice` only change how their command runs (allow rules look through
# them), so their stubs run it faithfully and leave no marker of their own.
_NO_MARK = frozenset({"git", "timeout", "nohup", "nice"})
_MARKER_ONLY = ("rm", "touch", "ls", "cat", "wc", "grep", "m", "x", "y", "f")


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_stubs(tmp_path_factory.mktemp("stubs"))


def make_stubs(bin_dir: Path) -> Path:
    for name in (*_STUBS, *_MARKER_ONLY):
        body = _STUBS.get(name, "")
        script = bin_dir / name
        script.write_text("#!/bin/sh\n" + ("" if name in _NO_MARK else _MARK % name) + body)
        script.chmod(0o755)
    for shell in ("bash", "sh"):
        (bin_dir / shell).symlink_to(BASH)
    return bin_dir


# ----------------------------------------------------------------------------------------------- the generator


def commands(bad: str, benign_weight: int) -> st.SearchStrategy[str]:
    """Commands mixing lists, pipelines, compound commands, subshells, substitutions, heredocs, functions,
    comments with quotes, quoting tricks and wrappers. `bad` is the stub the property watches for; a leaf is
    benign `benign_weight` times as often as hostile."""
    q = shlex.quote
    b1, b2 = bad[0], bad[1:]
    octal = "".join(f"\\{ord(c):o}" for c in bad)
    word = st.tuples(st.text(alphabet=f"ab-_.#={bad}", min_size=1, max_size=6),
                     st.sampled_from(["{}", "'{}'", '"{}"', "$'{}'", "{}\\ x"])).map(lambda t: t[1].format(t[0]))
    simple = st.tuples(
        st.sampled_from(["git status", "git diff", "echo", "timeout 5 git status", "nohup git diff",
                         "nice -n 5 git status", "time git status", "git status --", "git diff --stat"]),
        st.lists(word, max_size=3),
        st.sampled_from(["", " 2>/dev/null", " 2>&1", " >/dev/null", " <<< x", " < /dev/null"]),
    ).map(lambda t: " ".join([t[0], *t[1]]) + t[2])
    benign = st.one_of(simple, st.sampled_from([
        "git status a#b", f"echo {bad}", f"git diff -- '{bad} x'", "ls",
        "git status \\\n -s", f"echo '$({bad} x)'", "true", ":", f"cat <<'EOF'\n$({bad} x)\nEOF",
        f"cat <<EOF\n{bad} x\nEOF", "git status <<< 'x'", f"echo <<'EOF'\n{bad} x\nEOF",
    ]))
    hostile = st.sampled_from([
        f"{bad} x", f"$'{bad}' x", f"$'{octal}' x", f'"{b1}"{b2} x', f"{b1}''{b2} x", f"\\{bad} x", f"'{bad}' x",
        f'"{bad}" x', f"{{{bad},x}}", f"{b1}\\{b2} x", f"x={bad}; $x y", f"${{u:-{bad}}} x", f"{b1}${{u}}{b2} x",
        f"$(echo {bad}) x", f"`echo {bad}` x", f"git status $({bad} x)", f"git status `{bad} x`",
        f'git status "$({bad} x)"', f"git status <({bad} x)", "git status > out", "git status >> out",
        "git status &> out", "git status 2> out", f"eval {bad} x", f"eval 'git status; {bad} x'", f"eval \"{b1}\"{b2}",
        f"bash -c '{bad} x'", f"sh -c \"git status && {bad} x\"", f"env {bad} x", f"env A=1 {bad} x",
        f"sudo {bad} x", f"sudo -u root {bad} x", f"timeout 5 {bad} x", f"nohup {bad} x", f"nice -n 1 {bad} x",
        f"xargs {bad} <<< x", f"find . -exec {bad} {{}} \\;", f"(exec {bad} x)", f"command {bad} x",
        f"source /dev/stdin <<< '{bad} x'", f"bash <<'EOF'\n{bad} x\nEOF", f"bash <<EOF\n{bad} x\nEOF",
        f"cat <<EOF\n$({bad} x)\nEOF", f"echo {bad} x | bash", f"echo {bad} x | xargs", f"trap '{bad} x' EXIT",
        f"shopt -s expand_aliases\nalias z='{bad} x'\nz", f"git() {{ {bad} x; }}; git status",
        f"echo() {{ {bad} x; }}; echo hi", "PATH=. git status", "for PATH in x; do git status; done",
        "git status $((PATH=0))", "git status ${PATH:=/nowhere}", f"read v <<< {bad}; $v x",
        f"printf -v v {bad}; $v x", f"x={b1}; y={b2}; $x$y z", f"a=(0 {bad}); ${{a[1]}} x",
        f"git status #'\n{bad} x\n#'", f"git status #\"\n{bad} x", f"git status # $(\n{bad} x",
        f"{bad} x &", f"cat <({bad} x)", f". <(echo {bad} x)", f"command -p {bad} x", f"builtin eval '{bad} x'",
        f"exec -a n {bad} x", f"time {bad} x", f"coproc {bad} x", f"{b1}\\\n{b2} x", f"\\{b1}\\{b2} x",
        f"\"$(echo {b1}){b2}\" x", f"IFS=,; c={bad},x; $c", f"a=({bad} x); \"${{a[@]}}\"", f"set -- {bad} x; \"$@\"",
        f"v=$'\\x{ord(b1):x}{b2}'; $v y", f". /dev/stdin <<< '{bad} x'", f"bash -s <<< '{bad} x'",
        f"sh -c 'eval \"$1\"' _ '{bad} x'", f"trap '{bad} x' DEBUG; :", f"[[ $({bad} x) ]]", f"(( $({bad} x) ))",
        f"echo $(( $({bad} x) ))", f"declare d=$({bad} x)", f"export e=$({bad} x)", f"for i in $({bad} x); do :; done",
        f"case $({bad} x) in *) ;; esac", f"z[$({bad} x)]=1", f"echo ${{u:-$({bad} x)}}", f"cat <<< $({bad} x)",
        f"echo > $({bad} x)", f"{{ {bad} x; }} 2>/dev/null", f"{bad} x < /dev/null", f"until ! {bad} x; do break; done",
        f"$(< /dev/null){bad} x", f"case {bad} in *) $(echo {bad}) x;; esac", f"echo `echo {bad} x` | sh",
    ])
    # a leaf is hostile once in `benign_weight + 1` draws (weights without a huge one_of)
    leaf = st.tuples(st.integers(0, benign_weight), benign, hostile).map(lambda t: t[2] if t[0] == 0 else t[1])
    quoted = {"eval {0}", "bash -c {0}", "echo {0} | sh"}
    unary_structure = [
        "{{ {0}; }}", "( {0} )", "! {0}", "case x in x) {0};; esac",
        # a function named like an allowed command: its body runs when `git status` is called
        "git() {{ {0}; }}; git status", "function git {{ {0}; }}; git diff", "git() ( {0} ); git status",
        "f() {{ {0}; }}; f", "{0} # it's", '{0} # "', "{0} # `", "{0} # $(", "{0} # \\", "{0} # '\"'",
    ]
    unary_code = ["git status $( {0} )", "echo `{0}`", "v=$( {0} )", "bash <<'EOF'\n{0}\nEOF", *quoted]
    binary = [
        "{0} ; {1}", "{0} && {1}", "{0} || {1}", "{0} & {1}", "{0} | {1}", "{0} |& {1}", "{0}\n{1}",
        "if {0}; then {1}; fi", "until {0}; do {1}; break; done", "while {0}; do {1}; break; done",
        "{0} #'\n{1}", '{0} #"\n{1}', "{0} #`\n{1}", "{0} #$(\n{1}",
    ]

    def fill(template: str, *parts: str) -> str:
        return template.format(*(q(p) for p in parts) if template in quoted else parts)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(st.sampled_from(unary_structure * (benign_weight // 2) + unary_code), inner)
            .map(lambda t: fill(*t)),
            st.tuples(st.sampled_from(binary), inner, inner).map(lambda t: fill(*t)),
            st.tuples(inner, inner, inner).map(lambda t: "if {}; then {}; else {}; fi".format(*t)),
        )

    return st.recursive(leaf, extend, max_leaves=6)


# ------------------------------------------------------------------------------------------------- the runner


@dataclass
class Stats:
    generated: int = 0
    distinct: set[str] = field(default_factory=set)
    ran: int = 0
    skipped: int = 0
    timeouts: int = 0


def run_in_scratch(command: str, stubs: Path, scratch: Path) -> set[str]:
    """Run `command` with real bash in a fresh directory; the names of the markers and files it created."""
    work, marks = scratch / "work", scratch / "marks"
    work.mkdir(parents=True)
    marks.mkdir()
    proc = subprocess.Popen([BASH, "-c", command], cwd=work, env={"PATH": str(stubs), "MARK_DIR": str(marks), "FUNCNEST": FUNCNEST},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        # The pipe closes only when every process holding it (background jobs included) has exited.
        proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"<timeout>"}
    return {p.name for p in marks.iterdir()} | {f"work/{p.name}" for p in work.iterdir()}


def gate_allows(gate: PermissionGate, command: str) -> bool:
    return asyncio.run(gate.check(BashTool(), {"command": command})).allowed


def check_batch(batch: list[str], gate: PermissionGate, stubs: Path, scratch: Path, stats: Stats,
                violates: Callable[[str, set[str]], bool]) -> None:
    stats.generated += len(batch)
    stats.distinct.update(batch)
    to_run = [c for c in batch if gate_allows(gate, c)]
    stats.skipped += len(batch) - len(to_run)
    stats.ran += len(to_run)
    base = stats.ran
    with ThreadPoolExecutor(WORKERS) as pool:
        created = list(pool.map(lambda ic: run_in_scratch(ic[1], stubs, scratch / f"{base}-{ic[0]}"),
                                enumerate(to_run)))
    stats.timeouts += sum("<timeout>" in c for c in created)
    bad = [f"{command!r} created {sorted(made)}" for command, made in zip(to_run, created, strict=True)
           if violates(command, made)]
    assert not bad, "the gate let through:\n" + "\n".join(bad)


def judged_writes(command: str, cwd: Path) -> set[str]:
    """The files (as `work/NAME`) the gate judged this command to write in its working directory."""
    judged = set()
    for write in (w for part in split_shell_command(command).writes for w in part):
        paths, _ = resolve(write, cwd, cwd / "home")
        judged.update(f"work/{os.path.relpath(p, cwd)}" for p in paths if os.path.dirname(p) == str(cwd))
    return judged


def property_settings() -> settings:
    return settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def report(name: str, stats: Stats, started: float) -> str:
    return (f"{name}: {stats.generated} generated ({len(stats.distinct)} distinct), {stats.ran} run with bash, "
            f"{stats.skipped} stopped by the gate, {stats.timeouts} timeouts, {time.monotonic() - started:.1f} s")


# ---------------------------------------------------------------------------------------------- the properties


def test_allow_rules_never_let_bash_run_anything_else(stubs: Path, tmp_path: Path) -> None:
    gate = PermissionGate(PermissionMode.DEFAULT, RuleSet.from_strings(allow=ALLOW_RULES), ask=None, cwd=tmp_path)
    stats, started = Stats(), time.monotonic()

    @property_settings()
    @given(st.lists(commands("touch", 10), min_size=BATCH, max_size=BATCH, unique=True))
    def check(batch: list[str]) -> None:
        # Anything created (a stub's marker, a file) is work the allow rules did not vouch for, unless the gate
        # judged it as a write of that file inside the workspace (`git status > out` under `Bash(git status:*)`).
        check_batch(batch, gate, stubs, tmp_path, stats,
                    lambda command, made: bool(made - judged_writes(command, tmp_path)))

    check()
    summary = report("allow", stats, started)
    print(summary)
    assert len(stats.distinct) >= 5000 and stats.ran >= 1000 and stats.skipped >= 1000, summary


def test_deny_rule_holds_in_bypass_mode(stubs: Path, tmp_path: Path) -> None:
    gate = PermissionGate(PermissionMode.BYPASS, RuleSet.from_strings(deny=["Bash(rm:*)"]), ask=None, cwd=tmp_path)
    stats, started = Stats(), time.monotonic()

    @property_settings()
    @given(st.lists(commands("rm", 2), min_size=BATCH, max_size=BATCH, unique=True))
    def check(batch: list[str]) -> None:
        check_batch(batch, gate, stubs, tmp_path, stats, lambda command, made: "rm" in made)

    check()
    summary = report("deny", stats, started)
    print(summary)
    assert len(stats.distinct) >= 5000 and stats.ran >= 1000 and stats.skipped >= 1000, summary
