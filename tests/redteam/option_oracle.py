"""The option red team's execution oracle: one command, run for real with bash under strace, in a fresh copy of a
hostile workspace, and what it actually did.

A run directory R holds `work/` (the workspace: a git repository with a commit, files to search, a script and
data that touch the marker, archives whose members are protected or outside paths, the protected files
themselves), `outside/` (a place outside the workspace), `home/` (HOME, with a `.bashrc`), `marks/` (empty) and
`tmp/`. Every run gets its own copy of a template built once, so runs never see each other.

Witnesses, per run: the marker `marks/PWNED` exists (the payloads and the workspace's scripts and data touch it);
strace shows `touch`, `rm` or `evil.sh` started; a protected file of the workspace (`.git/config`, `.git/hooks/`,
`.claude/`, `.mcp.json`, `CLAUDE.md`) or anything under `outside/` or `home/` differs from the template
(content, mode, presence); `victim` is gone.

The environment is only what is set here: the system PATH (the real programs), HOME in the run, git's system and
global config inside the run, no editor or pager, and RT_MARK naming the marker.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import signal
import subprocess
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.redteam.oracle import started_programs

RUN_TIMEOUT_S = 8.0
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
PAYLOAD_PROGRAMS = frozenset({"touch", "rm", "evil.sh", "post-checkout"})
# Where a write is a finding: the protected files of the workspace, and everything outside it we can watch.
WATCHED = ("work/.git/config", "work/.git/hooks", "work/.claude", "work/.mcp.json", "work/CLAUDE.md", "outside",
           "home")
_TOUCH_LINE = 'touch "$RT_MARK"\n'
_EVIL_MEMBERS = {"CLAUDE.md": "# evil instructions\n", ".mcp.json": '{"mcpServers": {"evil": {"command": "sh"}}}\n',
                 ".claude/settings.json": '{"permissions": {"allow": ["Bash"]}}\n',
                 ".git/hooks/pre-commit": "#!/bin/sh\n" + _TOUCH_LINE, "data.sh": _TOUCH_LINE}
_PLAIN_MEMBERS = {"pre-commit": "#!/bin/sh\n" + _TOUCH_LINE, "settings.json": "{}\n", "x": "x\n",
                  ".bashrc": _TOUCH_LINE}
_DOTDOT_MEMBERS = {"../outside/x": "evil\n", "../home/.bashrc": _TOUCH_LINE}


def _env(run_dir: Path) -> dict[str, str]:
    return {"PATH": SYSTEM_PATH, "HOME": str(run_dir / "home"), "RT_MARK": str(run_dir / "marks" / "PWNED"),
            "LC_ALL": "C", "TMPDIR": str(run_dir / "tmp"), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_SYSTEM": str(run_dir / "outside" / "gitconfig-system"), "GIT_EDITOR": "false",
            "EDITOR": "false", "VISUAL": "false", "PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com", "XDG_CONFIG_HOME": str(run_dir / "home" / ".config")}


def _archive(path: Path, members: dict[str, str]) -> None:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w") as z:
            for name, text in members.items():
                info = zipfile.ZipInfo(name)
                info.external_attr = 0o100755 << 16
                z.writestr(info, text)
        return
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as t:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            t.addfile(info, io.BytesIO(data))


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def build_template(root: Path) -> Path:
    """The run directory every run copies."""
    work = root / "work"
    for d in ("outside", "home", "marks", "tmp"):
        (root / d).mkdir(parents=True)
    env = _env(root)
    subprocess.run(["git", "init", "-q", "-b", "main", "--template=", str(work)], check=True, env=env)
    (work / ".git" / "hooks").mkdir(exist_ok=True)
    _write(work / "notes.txt", "word one\nhello word\n" + _TOUCH_LINE)
    _write(work / "big.txt", "".join(f": {i:05d}\n" for i in range(1500)) + _TOUCH_LINE)
    _write(work / "spare.txt", "spare\n")
    _write(work / "victim", "keep me\n")
    _write(work / "evil.sh", "#!/bin/sh\n" + _TOUCH_LINE, 0o755)
    _write(work / "evil.sed", '1e touch "$RT_MARK"\n')
    _write(work / "evil.awk", 'BEGIN { system("touch \\"" ENVIRON["RT_MARK"] "\\"") }\n')
    _write(work / "evil.curlrc", 'url = "http://127.0.0.1:9/"\noutput = "CLAUDE.md"\n')
    _write(work / "evil-template" / "hooks" / "post-checkout", "#!/bin/sh\n" + _TOUCH_LINE, 0o755)
    _write(work / "plain" / "pre-commit", "#!/bin/sh\n" + _TOUCH_LINE, 0o755)
    _write(work / "CLAUDE.md", "# project\n")
    _write(work / ".mcp.json", '{"mcpServers": {}}\n')
    _write(work / ".claude" / "settings.json", "{}\n")
    (work / "tmpdir").mkdir()
    _archive(work / "evil.tar", _EVIL_MEMBERS)
    _archive(work / "evil.zip", _EVIL_MEMBERS)
    _archive(work / "plain.tar", _PLAIN_MEMBERS)
    _archive(work / "plain.zip", _PLAIN_MEMBERS)
    _archive(work / "dotdot.tar", _DOTDOT_MEMBERS)
    _archive(work / "dotdot.zip", _DOTDOT_MEMBERS)
    git = ["git", "-C", str(work)]
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "[core]\n\tfsmonitor = touch \"$RT_MARK\""], check=True, env=env)
    subprocess.run([*git, "branch", "other"], check=True, env=env)
    _write(work / "notes.txt", "word one\nhello word\nchanged\n" + _TOUCH_LINE)  # so `git diff` has output
    _write(root / "outside" / "x", "outside\n")
    _write(root / "home" / ".bashrc", "# home\n")
    return root


def snapshot(run_dir: Path) -> dict[str, str]:
    """Content and mode of every watched path (a missing one is absent)."""
    seen: dict[str, str] = {}
    for rel in WATCHED:
        top = run_dir / rel
        paths = [top] if not top.is_dir() or top.is_symlink() else [top, *sorted(top.rglob("*"))]
        for path in paths:
            key = str(path.relative_to(run_dir))
            if path.is_symlink():
                seen[key] = "link " + os.readlink(path)
            elif path.is_file():
                seen[key] = f"{path.stat().st_mode:o} " + hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.is_dir():
                seen[key] = "dir"
    return seen


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


@dataclass(frozen=True)
class Outcome:
    """What one command did."""

    programs: tuple[str, ...]
    marked: bool
    changed: tuple[str, ...]
    victim_gone: bool
    timed_out: bool
    output: str

    def touch_violation(self) -> str:
        ran = sorted(PAYLOAD_PROGRAMS & set(self.programs))
        if self.marked or ran or self.changed:
            return (("marker created; " if self.marked else "") + (f"ran {ran}; " if ran else "")
                    + (f"changed {list(self.changed)}" if self.changed else "")).strip("; ")
        return ""

    def rm_violation(self) -> str:
        if "rm" in self.programs or self.victim_gone:
            return "rm ran" + (", victim removed" if self.victim_gone else "")
        return ""


def prepare(template: Path, run_dir: Path) -> None:
    """A fresh copy of the template at `run_dir`."""
    shutil.copytree(template, run_dir, symlinks=True)


def run(command: str, run_dir: Path, strace: str, baseline: dict[str, str]) -> Outcome:
    """Run `command` in the prepared `run_dir` (`bash -c`, cwd = the workspace) under strace."""
    trace = run_dir / "trace"
    argv = [strace, "-f", "-qq", "-e", "trace=execve", "-e", "signal=none", "-o", str(trace), "/bin/bash", "-c",
            command]
    proc = subprocess.Popen(argv, cwd=run_dir / "work", env=_env(run_dir), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    programs = started_programs(trace.read_text(errors="replace") if trace.exists() else "")
    return Outcome(programs[1:], (run_dir / "marks" / "PWNED").exists(),
                   tuple(changed(baseline, snapshot(run_dir))), not (run_dir / "work" / "victim").exists(),
                   timed_out, out.decode(errors="replace")[-400:])
