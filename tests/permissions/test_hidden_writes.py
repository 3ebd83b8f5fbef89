"""Issue 27, finding 3: writes are writes, wherever they hide. A Bash command's redirections, `tee`, `dd of=`,
`cp`/`mv` targets, archive members and file-writing options are judged by the gate as writes of those paths:
protected places and places outside the workspace ask (default and acceptEdits mode, under the user's everyday
Bash allow rules), bypass mode runs them, an Edit deny rule denies them, and everyday writes inside the workspace
stay allowed. Each attack is first run with real bash to prove it really writes the file the gate guards.
"""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions import writes as writes_module
from mini_claude.permissions.command_writes import bash_writes
from mini_claude.permissions.options.spec import Effect, Found
from mini_claude.permissions.rules import ToolCall
from mini_claude.tools.base import Tool
from mini_claude.tools.shell import BashTool

pytestmark = pytest.mark.timeout(120)

EVERYDAY = ["Bash(sort:*)", "Bash(tee:*)", "Bash(echo:*)", "Bash(tar:*)", "Bash(unzip:*)", "Bash(dd:*)",
            "Bash(cp:*)", "Bash(mv:*)", "Bash(git status:*)"]
PAYLOAD = "[core]\n\tfsmonitor = touch PWNED\n"


def _sort_output(argv: list[str | None], i: int) -> list[Found]:
    """Our own reading of `sort -o FILE` / `--output=FILE` (the option tables land from another change)."""
    if os.path.basename(argv[i] or "") != "sort":
        return []
    found = []
    for k in range(i + 1, len(argv)):
        word = argv[k]
        if word == "-o" and k + 1 < len(argv):
            found.append(Found(k + 1, Effect.WRITES, "sort -o writes it", argv[k + 1]))
        elif word is not None and word.startswith("--output="):
            found.append(Found(k, Effect.WRITES, "sort --output writes it", word.split("=", 1)[1]))
    return found


@pytest.fixture(autouse=True)
def sort_knows_its_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writes_module, "option_writes", _sort_output)


@dataclass
class Place:
    work: Path
    home: Path
    asked: list[str]

    def gate(self, mode: PermissionMode = PermissionMode.DEFAULT, allow: list[str] | None = None,
             deny: list[str] | None = None) -> PermissionGate:
        async def ask(tool: Tool, args: dict[str, Any]) -> str:
            self.asked.append(args["command"])
            return "no"

        rules = RuleSet.from_strings(allow=EVERYDAY if allow is None else allow, deny=deny or [])
        return PermissionGate(mode, rules, ask=ask, cwd=self.work, home=self.home)

    def check(self, gate: PermissionGate, command: str) -> bool:
        return asyncio.run(gate.check(BashTool(), {"command": command})).allowed

    def run(self, command: str, *, check: bool = True) -> None:
        subprocess.run(["bash", "-c", command], cwd=self.work, env={"PATH": os.environ["PATH"],
                       "HOME": str(self.home)}, check=check, timeout=30, capture_output=True)


@pytest.fixture
def place(tmp_path: Path) -> Iterator[Place]:
    work, home = tmp_path / "work", tmp_path / "home"
    for d in (work / ".git" / "hooks", work / ".claude", work / "secrets", home):
        d.mkdir(parents=True)
    (work / "f").write_text(PAYLOAD)
    (work / "in.txt").write_text("b\na\n")
    _tar(work / "evil.tar", {".git/hooks/pre-commit": "#!/bin/sh\ntouch PWNED\n"})
    _tar(work / "ok.tgz", {"src/a.py": "print(1)\n", "README": "hi\n"}, gz=True)
    with zipfile.ZipFile(work / "evil.zip", "w") as zf:
        zf.writestr(".mcp.json", '{"mcpServers": {}}')
    yield Place(work, home, [])


def _tar(path: Path, members: dict[str, str], *, gz: bool = False) -> None:
    with tarfile.open(path, "w:gz" if gz else "w") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


# (command, the file it writes, relative to the workspace; `~/` for home)
ATTACKS = [
    ("sort -o .git/config f", ".git/config"),
    ("tee .claude/settings.json < f", ".claude/settings.json"),
    ("dd if=f of=.mcp.json", ".mcp.json"),
    ("cp f ~/.bashrc", "~/.bashrc"),
    ("echo x > ../outside", "../outside"),
    ("tar -xf evil.tar", ".git/hooks/pre-commit"),
    ("unzip evil.zip", ".mcp.json"),
    ("mv f .git/config", ".git/config"),
    ("git status >> .git/hooks/post-checkout", ".git/hooks/post-checkout"),
    ("echo x | tee -a CLAUDE.md", "CLAUDE.md"),
    ("timeout 5 cp f .git/config", ".git/config"),
    ("cd .git && echo x > config", ".git/config"),
    ("echo '[core]' > .env", ".env"),
]


def _target(place: Place, written: str) -> Path:
    return place.home / written[2:] if written.startswith("~/") else place.work / written


@pytest.mark.parametrize(("command", "written"), ATTACKS)
@pytest.mark.parametrize("mode", [PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS])
def test_a_hidden_write_to_a_guarded_place_asks(place: Place, command: str, written: str,
                                                mode: PermissionMode) -> None:
    assert not place.check(place.gate(mode), command)
    assert place.asked == [command]
    assert not _target(place, written).exists()
    place.run(command, check=False)  # what the gate stopped really writes that file (`git status` fails here)
    assert _target(place, written).exists()


@pytest.mark.parametrize(("command", "written"), ATTACKS)
def test_bypass_mode_runs_them(place: Place, command: str, written: str) -> None:
    assert place.check(place.gate(PermissionMode.BYPASS, allow=[]), command)
    assert place.asked == []


def test_the_question_names_the_written_path(place: Place) -> None:
    gate = place.gate()
    notes = gate.why_asking(BashTool(), {"command": "sort -o .git/config f"})
    assert notes and notes[0].startswith(f"writes {place.work / '.git' / 'config'} (sort -o writes it), which ")
    assert "configures code execution" in notes[0]
    # "always" remembers this exact command, which then names its write on purpose
    assert gate.always_rules(BashTool(), {"command": "sort -o .git/config f"}) == ["Bash(sort -o .git/config f)"]
    exact = place.gate(allow=["Bash(sort -o .git/config f)"])
    assert place.check(exact, "sort -o .git/config f")


@pytest.mark.parametrize("mode", [PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS, PermissionMode.BYPASS])
def test_an_edit_deny_rule_denies_a_command_writing_there(place: Place, mode: PermissionMode) -> None:
    gate = place.gate(mode, deny=["Edit(secrets/**)"])
    decision = asyncio.run(gate.check(BashTool(), {"command": "echo x > secrets/a"}))
    assert not decision.allowed and "Edit(secrets/**)" in decision.reason
    assert place.asked == []
    assert not place.check(gate, "cp f secrets/")
    assert place.check(gate, "echo x > notes.txt") or mode is not PermissionMode.BYPASS
    if mode is PermissionMode.BYPASS:  # a write the gate cannot name is refused while the deny rule holds
        assert not place.check(gate, 'echo x > "$F"')


def test_an_edit_ask_rule_asks(place: Place) -> None:
    gate = place.gate(allow=[*EVERYDAY, "Edit"], deny=[])
    gate.rules = RuleSet.from_strings(allow=EVERYDAY, ask=["Edit(docs/**)"])
    assert not place.check(gate, "echo x > docs/a.md")
    assert place.asked == ["echo x > docs/a.md"]


@pytest.mark.parametrize("command", [
    "sort -o out.txt in.txt",
    "echo hi > notes.txt",
    "tar -xzf ok.tgz",
    "echo ok > status.txt 2>&1",
    "echo a >> log.txt; echo b | tee -a log.txt",
    "sort in.txt > /dev/null",
])
def test_everyday_writes_in_the_workspace_stay_allowed(place: Place, command: str) -> None:
    assert place.check(place.gate(), command)
    assert place.asked == []
    place.run(command)


def test_an_outside_write_is_allowed_by_an_edit_rule_naming_that_place(place: Place, tmp_path: Path) -> None:
    gate = place.gate(allow=[*EVERYDAY, f"Edit(/{tmp_path}/out/**)"])
    assert place.check(gate, f"sort -o {tmp_path}/out/x in.txt")
    assert not place.check(gate, f"sort -o {tmp_path}/elsewhere in.txt")


@pytest.mark.parametrize("members", [
    {"../escape": "x"},
    {"/abs": "x"},
])
def test_an_archive_the_gate_cannot_place_asks(place: Place, members: dict[str, str]) -> None:
    _tar(place.work / "odd.tar", members)
    assert not place.check(place.gate(), "tar -xf odd.tar")


def test_archive_links_stdin_and_unreadable_archives_ask(place: Place) -> None:
    link = tarfile.TarInfo("lnk")
    link.type, link.linkname = tarfile.SYMTYPE, "../../home/.bashrc"
    with tarfile.open(place.work / "link.tar", "w") as tar:
        tar.addfile(link)
    gate = place.gate()
    for command in ("tar -xf link.tar", "tar -xf - < evil.tar", "tar -xf missing.tar", "cat evil.tar | tar -x",
                    "unzip missing.zip", 'tar -xf "$A"'):
        assert not place.check(gate, command), command


def test_accept_edits_runs_the_common_file_commands_inside_the_workspace(place: Place) -> None:
    gate = place.gate(PermissionMode.ACCEPT_EDITS, allow=[])
    for command in ("mkdir -p build/out", "touch build/out/a", "cp in.txt build/", "mv build/in.txt build/b",
                    "rm build/b", "rm -r build"):
        assert place.check(gate, command), command
        place.run(command)
    for command in ("cp ~/.ssh/id_rsa x", "cp f .git/config", "rm -rf .git", "rm -rf .", "touch ../x",
                    "echo x > y", "mkdir $(id)"):
        assert not place.check(gate, command), command
    assert not place.check(place.gate(allow=[]), "mkdir build")  # default mode still asks


def test_an_exact_rule_for_a_part_does_not_cover_its_redirection(place: Place) -> None:
    gate = place.gate(allow=["Bash(echo hi)"])
    assert place.check(gate, "echo hi")
    assert not place.check(gate, "echo hi > notes.txt")  # the rule's text named no file
    assert place.check(place.gate(allow=["Bash(echo hi > notes.txt)"]), "echo hi > notes.txt")


def test_non_interactive_refusal_names_the_written_path_and_the_exact_rule(place: Place) -> None:
    gate = place.gate()
    gate.ask = None
    decision = asyncio.run(gate.check(BashTool(), {"command": "tee .mcp.json < f"}))
    assert not decision.allowed
    assert f"{place.work / '.mcp.json'} configures code execution" in decision.reason
    assert "so writing it needs the user's approval" in decision.reason
    assert '"Bash(tee .mcp.json < f)"' in decision.reason


def test_a_bare_bash_rule_runs_unknown_writes_but_not_protected_ones(place: Place) -> None:
    gate = place.gate(allow=["Bash"])
    assert place.check(gate, 'echo x > "$OUT"')  # opaque, as before: a bare `Bash` allows it
    assert place.check(gate, "tar -xf missing.tar")
    assert not place.check(gate, "tee .mcp.json < f")  # a protected write asks under every Bash rule


@pytest.mark.parametrize(("command", "written"), [
    ("sed -i s/x/y/ f", ["f"]),
    ("sed -ni.bak p f", ["f", "f.bak"]),
    ("sed -in p f", ["f", "fn"]),  # -i takes the rest of its cluster as the backup suffix
    ("tar xzf ok.tgz -C out", ["out", "out/src/a.py", "out/README"]),
    ("cp -t dest f in.txt", ["dest/f", "dest/in.txt"]),
    ("mv f g", ["g", "f"]),
    ("sudo -u root tee a b", ["a", "b"]),
])
def test_where_the_writes_are_found(place: Place, command: str, written: list[str]) -> None:
    (place.work / "dest").mkdir()
    judged = [os.path.relpath(p, place.work) for p, _ in bash_writes(ToolCall("Bash", {"command": command}),
                                                                      place.work, place.home).paths]
    assert set(written) <= set(judged), judged


def test_a_glob_pattern_is_judged_by_the_files_it_matches(place: Place) -> None:
    for name in ("a.pyc", "b.pyc", "CLAUDE.md", "notes.md"):
        (place.work / name).write_text("x")
    gate = place.gate(allow=["Bash(rm:*)"])
    assert place.check(gate, "rm -f *.pyc")
    assert not place.check(gate, "rm -f *.md")  # it matches CLAUDE.md
    place.run("rm -f *.md")
    assert not (place.work / "CLAUDE.md").exists()
