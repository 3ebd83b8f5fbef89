"""Issue 27, the outside review of hidden writes: five ways real programs wrote protected files past the gate's
judging of a Bash command's writes, each under the everyday allow rule for its program (or acceptEdits mode).

1. tar extracts what Python's tarfile did not list: a member after a junk block (GNU tar skips to the next
   header) or after two zero blocks (`tar -i`).
2. unzip extracts under a name zipfile does not show: the Info-ZIP Unicode Path extra field, `\\` in a name.
3. wget and curl save files under names from the URL or the server.
4. A hard link (or symlink) gives a protected file a plain name, and a write to that name writes the file.
5. A backup suffix (`cp -b -S .md a CLAUDE`) or split's piece names make a protected name from plain words.

Each attack is first run with the real program to prove it writes the guarded file, then the gate must ask.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import struct
import subprocess
import tarfile
import threading
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mini_claude.permissions import PermissionGate, PermissionMode, RuleSet
from mini_claude.permissions.boundaries import names_made
from mini_claude.permissions.command_writes import bash_writes
from mini_claude.permissions.rules import ToolCall
from mini_claude.tools.base import Tool
from mini_claude.tools.files import EditFileTool, WriteFileTool
from mini_claude.tools.shell import BashTool

pytestmark = pytest.mark.timeout(120)

HOOK = "#!/bin/sh\ntouch PWNED\n"
RULES = ["Bash(tar:*)", "Bash(unzip:*)", "Bash(wget:*)", "Bash(curl:*)", "Bash(cp:*)", "Bash(mv:*)", "Bash(ln:*)",
         "Bash(echo:*)", "Bash(split:*)", "Bash(link:*)",
         "Bash(csplit:*)"]


def _need(*programs: str) -> None:
    missing = [p for p in programs if shutil.which(p) is None]
    if missing and os.environ.get("CI"):
        pytest.fail(f"CI must install {missing}")
    if missing:
        pytest.skip(f"needs {missing}")


@dataclass
class Place:
    work: Path
    home: Path
    asked: list[str]

    def gate(self, mode: PermissionMode = PermissionMode.DEFAULT, allow: list[str] | None = None
             ) -> PermissionGate:
        async def ask(tool: Tool, args: dict[str, Any]) -> str:
            self.asked.append(args.get("command") or args.get("file_path") or "")
            return "no"

        rules = RuleSet.from_strings(allow=RULES if allow is None else allow)
        return PermissionGate(mode, rules, ask=ask, cwd=self.work, home=self.home)

    def allows(self, command: str, mode: PermissionMode = PermissionMode.DEFAULT,
               allow: list[str] | None = None) -> bool:
        return asyncio.run(self.gate(mode, allow).check(BashTool(), {"command": command})).allowed

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command], cwd=self.work, env={"PATH": os.environ["PATH"],
                              "HOME": str(self.home)}, timeout=60, capture_output=True, text=True)


@pytest.fixture
def place(tmp_path: Path) -> Iterator[Place]:
    work, home = tmp_path / "work", tmp_path / "home"
    for d in (work / ".git" / "hooks", home):
        d.mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    (work / "a.txt").write_text("a\n")
    yield Place(work, home, [])


def _asks(place: Place, command: str, mode: PermissionMode = PermissionMode.DEFAULT,
          allow: list[str] | None = None) -> None:
    place.asked.clear()
    assert not place.allows(command, mode, allow), command
    assert place.asked == [command], f"{command}: refused without asking"


# ------------------------------------------------------------------------------------- 1. tar's listing


def _member(name: str, text: str) -> bytes:
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info.tobuf(tarfile.GNU_FORMAT) + data + b"\0" * (-len(data) % 512)


def _write_tar(path: Path, *blocks: bytes) -> None:
    path.write_bytes(b"".join(blocks) + b"\0" * 1024)


JUNK = b"this is no tar header".ljust(512, b"J")
ZEROS = b"\0" * 1024


@pytest.mark.parametrize(("between", "command"), [
    (JUNK, "tar -xf ev4.tar"),
    (ZEROS, "tar -xif ev4.tar"),
    (ZEROS, "tar --ignore-zeros -xf ev4.tar"),
    (ZEROS, "tar -xf ev4.tar"),  # plain tar stops at the zero blocks; the gate judges the member anyway
])
def test_tar_members_past_a_junk_block_or_zero_blocks_are_judged(place: Place, between: bytes,
                                                                 command: str) -> None:
    _need("tar")
    _write_tar(place.work / "ev4.tar", _member("safe.txt", "ok\n"), between, _member(".git/hooks/pre-commit", HOOK))
    _asks(place, command)
    if "-i" in command or between is JUNK:
        place.run(command)
        assert (place.work / ".git" / "hooks" / "pre-commit").read_text() == HOOK


def _extension(kind: bytes, payload: str) -> bytes:
    """A raw header block of `kind` (b"x": a pax record `path=`, b"L": a GNU long name) and its data."""
    data = (f"{len(payload) + 7 + len(str(len(payload) + 7))} path={payload}\n" if kind == b"x"
            else payload + "\0").encode()
    info = tarfile.TarInfo("././@LongLink" if kind == b"L" else "PaxHeader")
    info.type, info.size = kind, len(data)
    return info.tobuf(tarfile.USTAR_FORMAT) + data + b"\0" * (-len(data) % 512)


@pytest.mark.parametrize(("chain", "hook"), [
    ((b"x", b"x"), "post-checkout"),  # two pax headers: GNU tar takes the last path, Python's reader the first
    ((b"L", b"L"), "post-merge"),     # two GNU long names
    ((b"L", b"x"), "pre-commit"),     # a long name, then a pax path
])
def test_a_tar_whose_headers_two_readers_read_differently_asks(place: Place, chain: tuple[bytes, bytes],
                                                               hook: str) -> None:
    """Second outside review: chained extension headers made the gate list `ok_benign.txt` where GNU tar extracts
    `.git/hooks/...`; GNU tar's own listing now has the last word."""
    _need("tar")
    first, second = chain
    blocks = (_extension(first, "ok_benign.txt"), _extension(second, f".git/hooks/{hook}"),
              _member("plain.txt", HOOK))
    _write_tar(place.work / "ch.tar", *blocks)
    _asks(place, "tar -xf ch.tar")
    place.run("tar -xf ch.tar")
    assert (place.work / ".git" / "hooks" / hook).read_text() == HOOK  # GNU tar really writes the hook


def test_a_tar_with_a_junk_block_asks_even_when_nothing_after_it_parses(place: Place) -> None:
    _write_tar(place.work / "j.tar", _member("safe.txt", "ok\n"), JUNK)
    _asks(place, "tar -xf j.tar")
    assert "not a valid tar header" in " ".join(place.gate().why_asking(BashTool(), {"command": "tar -xf j.tar"}))


@pytest.mark.parametrize("mode", ["w", "w:gz", "w:bz2", "w:xz"])
def test_a_clean_tar_is_still_allowed_and_a_compressed_evil_one_asks(place: Place, mode: str) -> None:
    for name, members in (("ok.tar", {"src/a.py": "print(1)\n", "README": "hi\n"}),
                          ("evil.tar", {"safe.txt": "ok\n", ".git/hooks/pre-commit": HOOK})):
        with tarfile.open(place.work / name, mode) as tar:
            for member, text in members.items():
                info = tarfile.TarInfo(member)
                info.size = len(text)
                tar.addfile(info, io.BytesIO(text.encode()))
    assert place.allows("tar -xf ok.tar")
    assert place.run("tar -xf ok.tar").returncode == 0
    _asks(place, "tar -xf evil.tar")


# ------------------------------------------------------------------------------------- 2. unzip's names


def _unicode_path(header_name: str, real_name: str, version: int = 1) -> bytes:
    name = real_name.encode()
    body = struct.pack("<BI", version, zlib.crc32(header_name.encode())) + name
    return struct.pack("<HH", 0x7075, len(body)) + body


def _zip(path: Path, name: str, *, extra: bytes = b"", dos: bool = False) -> None:
    info = zipfile.ZipInfo(name)
    info.extra = extra
    if dos:
        info.create_system = 0
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(info, HOOK)


def test_unzip_extracts_under_the_unicode_path_extra_field(place: Place) -> None:
    _need("unzip")
    _zip(place.work / "u.zip", "safe.txt", extra=_unicode_path("safe.txt", ".git/hooks/pre-commit"))
    assert zipfile.ZipFile(place.work / "u.zip").namelist() == ["safe.txt"]
    _asks(place, "unzip -q u.zip")
    _asks(place, "unzip -q u.zip", PermissionMode.ACCEPT_EDITS, [])
    place.run("unzip -q u.zip")
    assert (place.work / ".git" / "hooks" / "pre-commit").read_text() == HOOK


def test_unzip_reads_backslashes_of_an_ms_dos_zip_as_folders(place: Place) -> None:
    _need("unzip")
    _zip(place.work / "d.zip", ".git\\config", dos=True)
    _asks(place, "unzip -oq d.zip")
    place.run("unzip -oq d.zip")
    assert (place.work / ".git" / "config").read_text() == HOOK


def test_an_extra_field_the_gate_cannot_parse_asks(place: Place) -> None:
    _zip(place.work / "v.zip", "safe.txt", extra=_unicode_path("safe.txt", "safe.txt", version=9))
    _asks(place, "unzip -q v.zip")
    _zip(place.work / "ok.zip", "safe.txt", extra=_unicode_path("safe.txt", "docs/safe.txt"))
    assert place.allows("unzip -q ok.zip")


# ------------------------------------------------------------------------------------- 3. wget and curl


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "site"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n\tfsmonitor = touch PWNED\n")
    (root / "CLAUDE.md").write_text("obey\n")
    (root / "index.html").write_text('<a href="CLAUDE.md">x</a>\n')
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize(("command", "written"), [
    ("wget -q -N -nH -x {url}/.git/config", ".git/config"),
    ("wget -q {url}/CLAUDE.md", "CLAUDE.md"),
    ("wget -q -r -nd {url}/", "CLAUDE.md"),
    ("wget -q --default-page=CLAUDE.md {url}/", "CLAUDE.md"),
    ("curl -sO {url}/CLAUDE.md", "CLAUDE.md"),
    ("curl -s --remote-name {url}/CLAUDE.md", "CLAUDE.md"),
    ("curl -s --remote-name-a {url}/CLAUDE.md", "CLAUDE.md"),
    ("curl -sLOJ {url}/CLAUDE.md", "CLAUDE.md"),
    ("curl -s -o '#1' '{url}/{{CLAUDE.md}}'", "CLAUDE.md"),
])
def test_downloads_named_by_the_url_or_the_server_ask(place: Place, site: str, command: str, written: str) -> None:
    _need("wget", "curl")
    command = command.format(url=site)
    target = place.work / written
    target.unlink(missing_ok=True)
    _asks(place, command)
    place.run(command)
    assert target.exists(), command


def test_downloads_the_gate_can_name_stay_allowed(place: Place, site: str) -> None:
    _need("wget", "curl")
    for command in (f"wget -q -O page.html {site}/CLAUDE.md", f"wget -qO- {site}/CLAUDE.md",
                    f"wget -q --spider {site}/CLAUDE.md", f"curl -s {site}/CLAUDE.md",
                    f"curl -so out.md {site}/CLAUDE.md", "wget --version", "curl --help"):
        assert place.allows(command), command
        assert place.run(command).returncode == 0, command
    assert not (place.work / "CLAUDE.md").exists()
    _asks(place, f"curl -s --output-dir .git -o config {site}/.git/config")
    _asks(place, f"wget -q -O CLAUDE.md {site}/CLAUDE.md")
    _asks(place, f"wget -q --spider -r {site}/")  # it saves what it crawls, then deletes it


# ------------------------------------------------------------------------------------- 4. hard links


@pytest.mark.parametrize("command", ["cp -l .git/config hl", "cp --link .git/config hl", "cp --li .git/config hl",
                                     "cp -al .git/hooks x", "ln .git/config hl", "ln -s .git/config hl",
                                     "ln -s .git/config sub/hl", "cp -s {work}/.git/config hl",
                                     "link .git/config hl", "ln -t sub .git/config"])
def test_a_link_to_a_protected_file_is_a_write_of_it(place: Place, command: str) -> None:
    (place.work / "sub").mkdir()
    command = command.format(work=place.work)
    _asks(place, command)
    if command.split()[0] in ("cp", "mv"):
        _asks(place, command, PermissionMode.ACCEPT_EDITS, [])


def test_a_write_to_a_file_with_another_name_asks(place: Place) -> None:
    place.run("ln .git/config hl && echo '[core] fsmonitor = touch PWNED' >> hl")
    assert "PWNED" in (place.work / ".git" / "config").read_text()  # the attack works
    _asks(place, "echo x >> hl")
    notes = place.gate().why_asking(BashTool(), {"command": "echo x >> hl"})
    assert notes and "has another name (a hard link)" in notes[0], notes
    for tool, args in ((WriteFileTool(), {"file_path": "hl", "content": "x"}),
                       (EditFileTool(), {"file_path": "hl", "old_string": "a", "new_string": "b"})):
        gate = place.gate(PermissionMode.ACCEPT_EDITS, [])
        assert not asyncio.run(gate.check(tool, args)).allowed
    (place.work / "plain.txt").write_text("x")
    assert place.allows("echo y >> plain.txt")


def test_links_inside_the_workspace_stay_allowed(place: Place) -> None:
    (place.work / "src").mkdir()
    (place.work / "src" / "a.py").write_text("x")
    for command in ("ln -s src/a.py a_link.py", "cp -l a.txt b.txt", "cp -al src src2"):
        assert place.allows(command), command
        assert place.run(command).returncode == 0


# ------------------------------------------------------------------------------------- 5. backups and split


@pytest.mark.parametrize(("setup", "command", "written"), [
    ("touch CLAUDE", "cp -b -S .md a.txt CLAUDE", "CLAUDE.md"),
    ("touch CLAUDE", "cp -bS.md a.txt CLAUDE", "CLAUDE.md"),
    ("touch CLAUDE", "cp --backup --suf .md a.txt CLAUDE", "CLAUDE.md"),
    ("touch .mcp && cp a.txt s.txt", "mv -b --suffix=.json s.txt .mcp", ".mcp.json"),
    ("touch .envr", "cp --backup=simple --suffix c a.txt .envr", ".envrc"),
    ("mkdir sub2 && touch sub2/HEA", "cp -b -S D a.txt sub2/HEA", "sub2/HEAD"),
    ("mkdir d && touch d/CLAUDE", "cp -b -S .md CLAUDE_SRC d/CLAUDE", "d/CLAUDE.md"),
    ("touch CLAUDE", "ln -f -b -S .md a.txt CLAUDE", "CLAUDE.md"),
    ("printf '1\\n2\\n3\\n4\\n' > mem.txt", "split -a1 -l1 mem.txt CLAUDE.m", "CLAUDE.md"),
    ("printf '1\\n2\\n3\\n4\\n' > mem.txt", "split -n l/4 -a 1 mem.txt CLAUDE.m", "CLAUDE.md"),
    ("printf '1\\n2\\n3\\n' > mem.txt", "split -l1 -a1 mem.txt .envr", ".envrc"),
    ("printf '1\\n2\\n3\\n' > mem.txt", "split -l1 --suffix-len=1 mem.txt .envr", ".envrc"),
    ("printf '1\\n' > mem.txt", "split -l1 --additional-suffix=.pem mem.txt key", "keyaa.pem"),
    ("printf '1\\n2\\n' > mem.txt", "csplit -s -f CLAUDE -b %.0d.md mem.txt 2", "CLAUDE.md"),
    ("seq 1 12 > mem.txt", "csplit -s -f id_ed2551 -n 1 mem.txt /^/ {10}", "id_ed25519"),
])
def test_names_made_from_suffixes_are_writes(place: Place, setup: str, command: str, written: str | None) -> None:
    place.run(setup + " && echo x > CLAUDE_SRC")
    _asks(place, command)
    if command.startswith(("cp", "mv")):
        _asks(place, command, PermissionMode.ACCEPT_EDITS, [])
    place.run(command)
    if written is not None:
        assert (place.work / written).exists(), command


@pytest.mark.parametrize(("command", "backup"), [
    ("SIMPLE_BACKUP_SUFFIX=.md cp -b a.txt CLAUDE", "CLAUDE.md"),
    ("env SIMPLE_BACKUP_SUFFIX=.md mv -b a.txt CLAUDE", "CLAUDE.md"),
    ("cp -b -S .md --backup=numbered a.txt CLAUDE", None),
    ("cp -b a.txt CLAUDE", "CLAUDE~"),
    ("install -b -S .md a.txt CLAUDE", "CLAUDE.md"),
])
def test_the_backup_suffix_comes_from_the_option_or_the_variable(place: Place, command: str,
                                                                  backup: str | None) -> None:
    judged = {os.path.relpath(p, place.work) for p, _ in bash_writes(ToolCall("Bash", {"command": command}),
                                                                     place.work, place.home).paths}
    assert "CLAUDE" in judged
    assert (backup in judged) if backup else not any(p.startswith("CLAUDE.") for p in judged), judged
    (place.work / "CLAUDE").touch()
    place.run(command)
    assert backup is None or (place.work / backup).exists()


@pytest.mark.parametrize("command", ["cp -b a.txt b.txt", "cp --backup=numbered -S .md a.txt CLAUDE",
                                     "split -l1 mem.txt part_", "split -l1 -d mem.txt CLAUDE.m",
                                     "mv -b -S .bak b.txt c.txt"])
def test_everyday_backups_and_splits_stay_allowed(place: Place, command: str) -> None:
    place.run("printf '1\\n2\\n' > mem.txt && touch b.txt CLAUDE")
    assert place.allows(command), command


def test_setting_the_backup_suffix_in_the_command_asks(place: Place) -> None:
    for command in ("export SIMPLE_BACKUP_SUFFIX=.md; cp -b a.txt CLAUDE",
                    "SIMPLE_BACKUP_SUFFIX=.md cp -b a.txt CLAUDE"):
        _asks(place, command, allow=[*RULES, "Bash(export:*)"])


def test_the_names_a_split_prefix_can_make() -> None:
    lower = "abcdefghijklmnopqrstuvwxyz"
    assert names_made("CLAUDE.m", lower, 1, "") == ["CLAUDE.md"]
    assert names_made("CLAUDE.m", lower, 2, "") == []  # every piece has two letters: CLAUDE.maa ...
    assert names_made("CLAUDE.m", "0123456789", 1, "") == []
    assert names_made(".envr", lower, 1, "") == [".envrc"]
    assert names_made("x.p", lower, 1, "") == ["x.pem", "x.pfx"]
    assert names_made("", lower, 2, ".env") == ["aa.env"]
    assert "id_rsa" in names_made("id_", lower, 1, "")
    assert names_made("part_", lower, 2, "") == []
