"""Issue 27, findings 1 and 2: an argument-blind allow rule (`Bash(tar:*)`) covers a command only when every option
in it is one the gate knows, read the way the program reads it (mini_claude/permissions/options/).

Each finding is shown twice with real programs and a marker file: bash really runs the marker through the option
(so the test is real), and the gate does not allow the same command without asking; in bypass mode with the deny
rule `Bash(rm:*)` the same option running `rm` is refused. Then the parser itself (prefixes, ambiguity, clusters,
both value forms, `--`, words the gate cannot know), a property test over every table's code-running options, the
tables against the installed programs' own `--help`, and everyday commands that must still pass without asking.
"""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions.code_runners import code_risks
from mini_claude.permissions.options import canonical, findings, option_writes, tables
from mini_claude.permissions.options.notation import WRITES, program
from mini_claude.permissions.options.parse import parse, resolve_long
from mini_claude.permissions.options.spec import Effect, Style
from mini_claude.tools.base import Tool
from mini_claude.tools.shell import BashTool

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder with a text file, a script-like file, an archive of it, a zip of it, a big file, a curl config."""
    (tmp_path / "f").write_text("b\na\nc\n")
    (tmp_path / "s.sh").write_text("touch M\n")
    (tmp_path / "big").write_text("touch M\n" + "".join(f": {n}\n" for n in range(20000)))
    (tmp_path / "cfg").write_text(f'output = "M"\nurl = "file://{tmp_path / "f"}"\n')
    (tmp_path / "victim").write_text("keep me\n")
    (tmp_path / "rgcfg").write_text("--pre=sh\n")
    (tmp_path / "--checkpoint=1").write_text("")  # names a glob turns into options (a cloned repository's files)
    (tmp_path / "--checkpoint-action=exec=sh s.sh").write_text("")
    subprocess.run(["tar", "-cf", "a.tar", "s.sh"], cwd=tmp_path, check=True, timeout=30)
    subprocess.run(["zip", "-q", "a.zip", "f"], cwd=tmp_path, check=True, timeout=30)
    return tmp_path


def decide(command: str, cwd: Path, mode: PermissionMode, **rules: list[str]) -> tuple[bool, list[str]]:
    """The gate's decision on `command` (allowed?) and the commands it asked the user about (answered no)."""
    asked: list[str] = []

    async def ask(tool: Tool, args: dict[str, Any]) -> str:
        asked.append(args["command"])
        return "no"

    gate = PermissionGate(mode, RuleSet.from_strings(**rules), ask=ask, cwd=cwd, home=cwd)
    decision = asyncio.run(gate.check(BashTool(), {"command": command}))
    return decision.allowed, asked


def run_bash(command: str, cwd: Path) -> None:
    subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, timeout=60)


# (allow rule, command that runs `touch M` through an option); each ran with real bash (asserted below)
FINDINGS = [
    ("Bash(tar:*)", "tar --to-com='touch M' -xf a.tar"),
    ("Bash(tar:*)", "tar --checkpoint-ac=exec='touch M' --checkpoint=1 -cf b.tar f"),
    ("Bash(tar:*)", "tar -I 'touch M; gzip' -cf c.tar f"),
    ("Bash(tar:*)", "tar cIf 'touch M; gzip' c.tar f"),
    ("Bash(tar:*)", "tar -cf b.tar *"),  # the glob's file names are options: the gate cannot know them
    ("Bash(zip:*)", "zip -T --unzip-com='touch M; true' a.zip f"),
    ("Bash(zip:*)", "zip -T -TT='touch M; true' a.zip f"),
    ("Bash(rg:*)", "rg --pre=sh touch s.sh"),
    ("Bash(rg:*)", "RIPGREP_CONFIG_PATH=rgcfg rg touch s.sh"),  # ripgrep's option file can hold --pre
    ("Bash(sort:*)", "sort -S 16k --compress-prog=sh big"),
    ("Bash(split:*)", "split --fil='touch M' f piece"),
    ("Bash(curl:*)", "curl -s --conf cfg"),
    ("Bash(sed:*)", "sed --expr='1e touch M' f"),
]


@pytest.mark.parametrize(("rule", "command"), FINDINGS)
def test_an_option_that_runs_code_is_not_covered_by_an_allow_rule(rule: str, command: str, work: Path) -> None:
    program = rule.removeprefix("Bash(").split(":")[0]
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    run_bash(command, work)
    assert (work / "M").exists(), f"bash did not run the marker through {command!r}: the test proves nothing"
    (work / "M").unlink()
    allowed, asked = decide(command, work, PermissionMode.DEFAULT, allow=[rule])
    assert not allowed and asked == [command]
    assert not (work / "M").exists()


@pytest.mark.parametrize("command", [
    "tar --to-com='rm victim' -xf a.tar",
    "tar --checkpoint-ac=exec='rm victim' --checkpoint=1 -cf b.tar f",
    "zip -T --unzip-com='rm victim; true' a.zip f",
    "sort --frobnicate f",  # not an option sort has: the gate cannot say what it does
])
def test_bypass_mode_refuses_an_option_the_deny_rule_cannot_see_through(command: str, work: Path) -> None:
    allowed, _ = decide(command, work, PermissionMode.BYPASS, deny=["Bash(rm:*)"])
    assert not allowed
    if "victim" in command:
        run_bash(command, work)
        assert not (work / "victim").exists(), "bash did not run rm through the option: the test proves nothing"


@pytest.mark.parametrize(("rule", "command"), [
    ("Bash(rg:*)", "rg -n foo src"),
    ("Bash(rg:*)", "rg --pre-glob '*.gz' -tpy -C2 foo"),
    ("Bash(sort:*)", "sort -u f"),
    ("Bash(sort:*)", "sort -t: -k2,2n -r f"),
    ("Bash(tar:*)", "tar -tzf a.tgz"),
    ("Bash(tar:*)", "tar tvf a.tar"),
    ("Bash(ls:*)", "ls -la"),
    ("Bash(ls:*)", "ls --col=never -1 src"),
    ("Bash(grep:*)", "grep -rn x ."),
    ("Bash(grep:*)", "grep -E -C3 --include='*.py' 'def (a|b)' src"),
    ("Bash(head:*)", "head -n 5 f"),
    ("Bash(head:*)", "head -20 f"),
    ("Bash(tail:*)", "tail -n +3 f"),
    ("Bash(find:*)", "find . -name '*.py'"),
    ("Bash(find:*)", "find . -type f -newer f -maxdepth 2 -print0"),
    ("Bash(wc:*)", "wc -l f"),
    ("Bash(diff:*)", "diff -u a b"),
    ("Bash(cut:*)", "cut -d, -f1,3 f"),
    ("Bash(jq:*)", "jq -r '.a' f"),
    ("Bash(echo:*)", "echo --anything goes"),
    ("Bash(du:*)", "du -sh ."),
    ("Bash(chmod:*)", "chmod -x f"),
    ("Bash(ls:*)", "ls *.py"),  # a word the gate cannot know, for programs with no option that runs or writes
    ("Bash(cat:*)", 'cat "$f"'),
    ("Bash(grep:*)", "grep -n x src/*.py"),
    ("Bash(od:*)", "od -An -tx1 f"),
    ("Bash(zip:*)", "zip -qr a.zip src"),
    ("Bash(unzip:*)", "unzip -l a.zip"),
    ("Bash(curl:*)", "curl -fsSL https://example.com"),
    ("Bash(xargs grep:*)", "xargs grep -l TODO"),
    ("Bash(timeout 5 make:*)", "timeout 5 make"),
])
def test_everyday_options_pass_without_asking(rule: str, command: str, work: Path) -> None:
    allowed, asked = decide(command, work, PermissionMode.DEFAULT, allow=[rule])
    assert allowed and asked == []


def test_man_abbreviations_are_its_options(work: Path) -> None:
    """man is argp: `--pag=CMD` is `--pager` (it pages through CMD on a terminal)."""
    assert not decide("man --pag='touch M; cat' ls", work, PermissionMode.DEFAULT, allow=["Bash(man:*)"])[0]
    assert decide("man -k passwd", work, PermissionMode.DEFAULT, allow=["Bash(man:*)"])[0]


def test_an_abbreviated_wrapper_option_does_not_hide_the_wrapped_command(work: Path) -> None:
    command = "timeout --kill-a 1 5 rm victim"
    assert not decide(command, work, PermissionMode.BYPASS, deny=["Bash(rm:*)"])[0]
    assert canonical(command.split(), 0)[1] == "--kill-after"


def test_awk_program_text_attached_or_abbreviated_is_read() -> None:
    """gawk's `--source=TEXT`, `-eTEXT` and `--sour=TEXT` carry the program (gawk is not installed here: the
    reading is checked on its own)."""
    for word in ("--source=", "-e", "--sour="):
        risks = code_risks(["gawk", word + 'BEGIN{system("touch M")}', "/dev/null"])
        assert [r.why for r in risks] == ["gawk runs a program that can start commands (system, pipes, getline)"]


# ------------------------------------------------------------------------------------------------ the parser

def kinds(command: str) -> list[tuple[int, str]]:
    return [(f.index, f.effect.value) for f in findings(command.split(), 0) or []]


def writes(command: str) -> list[tuple[int, str | None]]:
    return [(f.index, f.path) for f in option_writes(command.split(), 0)]


def test_prefixes_resolve_as_getopt_long_does() -> None:
    assert kinds("tar --to-com=sh -xf a.tar") == [(1, "code"), (2, "reads")]
    assert kinds("tar --exclude x -tf a") == [(3, "reads")]  # an exact name wins over --exclude-from
    assert kinds("tar --concat -f a b") == [(2, "reads")]  # --catenate|--concatenate: one option
    assert kinds("grep --colo=auto x") == []  # --color|--colour
    assert kinds("curl --outp x") == [(1, "unknown")]  # --output or --output-dir
    assert resolve_long(tables()["curl"], "--outp")[1] == "--outp is ambiguous (--output, --output-dir)"
    assert kinds("rg --pr=sh x") == [(1, "unknown")]  # ripgrep takes whole names only
    assert kinds("sort --frob f") == [(1, "unknown")]


def test_short_clusters_and_both_value_forms() -> None:
    assert writes("sort -uo out f") == [(1, "out")]
    assert writes("sort -uoout f") == [(1, "out")]
    assert writes("sort --output out f") == [(1, "out")]
    assert writes("sort --out=out f") == [(1, "out")]
    assert kinds("tar -xzvf a.tgz") == [(1, "reads")]
    assert kinds("sort -uZ f") == [(1, "unknown")]
    assert kinds("sort -o --frob f") == [(1, "writes")]  # the value of -o, not an option


def test_optional_values_are_only_attached() -> None:
    spec = program("t", "-o|--out? -x", {"-o": (WRITES, "writes")})
    assert [f.path for f in parse(spec, ["t", "--out", "x"], 0)] == [None]
    assert [f.path for f in parse(spec, ["t", "--out=x"], 0)] == ["x"]
    assert [f.path for f in parse(spec, ["t", "-xox"], 0)] == ["x"]


def test_double_dash_ends_options_and_operands_do_not_unless_the_program_stops() -> None:
    assert kinds("sort -- --frob") == []
    assert kinds("sort f --frob") == [(2, "unknown")]
    assert kinds("xargs -0 grep --frob") == []  # xargs stops at its command
    assert kinds("printf '%s' --frob") == []


def test_a_word_the_gate_cannot_know_is_unknown_where_an_option_may_stand() -> None:
    assert [(f.index, f.effect.value) for f in findings(["sort", None, "f"], 0) or []] == [(1, "unknown")]
    assert [(f.index, f.path) for f in findings(["sort", "-o", None, "f"], 0) or []] == [(1, None)]
    assert findings(["sort", "--", None], 0) == []
    assert findings(["cat", None], 0) == []  # cat has no option that runs code or writes
    assert findings(["git", "log"], 0) is None and findings(["frobtool", "-x"], 0) is None


def test_tar_old_style_and_archive_writes() -> None:
    assert [p for _, p in writes("tar czf out.tgz src")] == ["out.tgz"]
    assert [p for _, p in writes("tar -cf out.tar src")] == ["out.tar"]
    assert writes("tar -xf in.tar") == []
    assert [p for _, p in writes("curl -sSLo page.html https://x")] == ["page.html"]
    assert [p for _, p in writes("wget --output-doc=p https://x")] == ["p"]
    assert writes("curl -o - https://x") == writes("wget -qO- https://x") == []  # standard output


# ------------------------------------------------------------------------------------ every table, generated

_CODE = [(name, opt, spelling) for name, spec in tables().items() if spec.style is Style.GETOPT
         for opt in spec.options if opt.effect is Effect.CODE for spelling in opt.names if spelling.startswith("--")]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_CODE), st.integers(min_value=3), st.booleans())
def test_every_unambiguous_prefix_of_a_code_option_is_code(case: tuple[str, Any, str], cut: int,
                                                           attached: bool) -> None:
    name, opt, spelling = case
    prefix = spelling[:max(3, min(cut, len(spelling)))]
    spec = tables()[name]
    others = {id(o) for o in spec.options for n in o.names if n.startswith("--") and n.startswith(prefix)}
    argv = [name, f"{prefix}=x"] if attached else [name, prefix, "x"]
    found = [f.effect for f in findings(argv, 0) or [] if f.index == 1]
    exact = any(n == prefix for o in spec.options for n in o.names)
    if others == {id(opt)} or (exact and prefix in opt.names):
        assert found and found[0] is Effect.CODE, (argv, found)
    elif not exact:
        assert found == [Effect.UNKNOWN], (argv, found)


def _help_options(name: str) -> list[str]:
    path = ROOT / "scripts" / "gen_option_tables.py"
    loaded = importlib.util.spec_from_file_location("gen_option_tables", path)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return [n for entry in module.options(name) for n in entry.rstrip("=?").split("|")]


# help text that looks like an option: cut's range `-M`, diff's placeholders for its --old-group-format kin
_NOT_OPTIONS = {"cut": {"-M"}, "diff": {"--GTYPE-group-format", "--LTYPE-line-format"}}


@pytest.mark.parametrize("name", ["tar", "sort", "split", "grep", "sed", "xargs", "env", "ls", "head", "tail", "wc",
                                  "cut", "uniq", "diff", "du", "cp", "mv", "wget", "curl", "timeout", "flock",
                                  "man", "ls", "stat", "od", "file", "chmod"])
def test_each_table_knows_every_option_of_the_installed_program(name: str) -> None:
    if shutil.which(name) is None:
        pytest.skip(f"{name} is not installed")
    known = {n for o in tables()[name].options for n in o.names}
    missing = [n for n in _help_options(name) if n not in known and n not in _NOT_OPTIONS.get(name, {"-NUM"})]
    assert missing == []
