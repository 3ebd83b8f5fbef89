"""The outside review's sandbox escapes (issue 27), each with real bwrap and the real git: first the mechanism shown
to work unconfined (the same command, run as is, makes the user's next git run the planted code or writes the
file), then the same command contained by the sandbox — and the user's ordinary git still working, inside the
sandbox and out, with no placeholder left behind."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mini_claude.sandbox.bwrap import find_bwrap
from mini_claude.sandbox.config import SandboxConfig
from mini_claude.sandbox.runtime import Sandbox
from mini_claude.tools.base import ToolContext
from mini_claude.tools.shell import BashTool
from tests.helpers import eventually

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(find_bwrap() is None or shutil.which("git") is None,
                                 reason="bubblewrap or git is not installed")]


def user_env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}


def sh(command: str, cwd: Path, home: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `command` as the user would, outside any sandbox."""
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=user_env(home), capture_output=True, text=True,
                          timeout=30, check=check)


def make_repo(folder: Path, home: Path) -> Path:
    folder.mkdir(parents=True)
    sh("git init -q -b main . && git config user.email u@example.com && git config user.name U && "
       "echo one > a.txt && git add a.txt && git commit -qm one", folder, home)
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


async def confined(work_dirs: list[Path], home: Path, command: str, cwd: Path | None = None) -> str:
    """Run `command` with the Bash tool in a sandbox over `work_dirs`; its output."""
    tool = BashTool()
    tool.env = user_env(home)
    sandbox = Sandbox(SandboxConfig(enabled=True), work_dirs=work_dirs, home=home, state_dir=home / ".state")
    tool.sandbox = sandbox
    ctx = ToolContext(cwd=cwd or work_dirs[0], spill_dir=home / ".state" / "spill")
    result = await tool.run({"command": command}, ctx)
    await sandbox.aclose()
    return result.as_text()


def refusals(out: str) -> int:
    """How many writes the sandbox refused: read-only mounts, /dev/null bound read-only, a placeholder folder."""
    return sum(out.count(mark) for mark in ("Read-only file system", "Permission denied", "Is a directory"))


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


COMMONDIR_ATTACK = (
    "mkdir .evil && cp -r .git/objects .git/refs .git/HEAD .evil/ && "
    "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch PWNED\\n' > .evil/config && "
    "echo ../.evil > .git/commondir")


async def test_a_commondir_redirect_is_contained(tmp_path: Path, home: Path) -> None:
    plain = make_repo(tmp_path / "plain", home)
    sh(COMMONDIR_ATTACK, plain, home)
    sh("git status", plain, home, check=False)
    assert (plain / "PWNED").exists()  # unconfined, the user's next git status runs the planted command

    work = make_repo(tmp_path / "work", home)
    before = listing(work / ".git")
    out = await confined([work], home, COMMONDIR_ATTACK + "; cat .git/commondir")
    assert "Read-only file system" in out and str(work / ".git") in out  # the placeholder names the folder itself
    assert sh("git status --porcelain", work, home).stdout == "?? .evil/\n"
    assert not (work / "PWNED").exists() and listing(work / ".git") == before


@pytest.mark.parametrize("target", [".git/config.worktree", ".git/objects/info/alternates", ".git/config",
                                    ".git/hooks/pre-commit", ".git/info/attributes"])
async def test_git_files_that_configure_or_redirect_git_are_read_only(tmp_path: Path, home: Path,
                                                                      target: str) -> None:
    plain = make_repo(tmp_path / "plain", home)
    sh(f"echo x >> {target}", plain, home)  # unconfined, the write goes through
    work = make_repo(tmp_path / "work", home)
    sh("git config extensions.worktreeConfig true", work, home)
    before = {p: p.read_bytes() for p in (work / ".git").rglob("*") if p.is_file()}
    out = await confined([work], home, f"echo x >> {target}")
    assert refusals(out) == 1 and "[sandbox]" in out
    assert not (work / target).exists() or (work / target).read_bytes() == before[work / target]
    assert sh("git status --porcelain && git log --oneline", work, home).stdout.endswith("one\n")


async def test_a_submodules_and_a_worktrees_git_files_are_read_only(tmp_path: Path, home: Path) -> None:
    work = make_repo(tmp_path / "work", home)
    module = work / ".git" / "modules" / "lib" / "dep"
    shutil.copytree(work / ".git", module, ignore=shutil.ignore_patterns("modules"))
    sh(f"git worktree add -q {tmp_path / 'wt'} -b side", work, home)
    out = await confined([work], home, "echo x >> .git/modules/lib/dep/config; echo x > .git/modules/lib/dep/commondir; "
                                       "echo /evil > .git/worktrees/wt/commondir; echo ok > .git/scratch")
    assert refusals(out) == 3
    assert not (module / "commondir").exists() and (work / ".git/worktrees/wt/commondir").read_text() == "../..\n"
    assert (work / ".git" / "scratch").read_text() == "ok\n"  # the rest of .git stays writable


BARE_ATTACK = ("mkdir -p objects refs/heads && echo 'ref: refs/heads/main' > HEAD && "
               "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n"
               "\\tfsmonitor = touch PWNED\\n' > config")


async def test_a_bare_repository_planted_in_a_folder_that_is_none_is_contained(tmp_path: Path, home: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    sh(BARE_ATTACK, plain, home)
    sh("git status", plain, home, check=False)
    assert (plain / "PWNED").exists()  # unconfined, git took the folder for a repository and ran its fsmonitor

    work = tmp_path / "work"
    work.mkdir()
    out = await confined([work], home, BARE_ATTACK)
    assert "HEAD" in out and refusals(out) >= 1 and "[sandbox]" in out
    status = sh("git status", work, home, check=False)
    assert status.returncode == 128 and "not a git repository" in status.stderr
    assert not (work / "PWNED").exists() and not (work / "HEAD").exists() and not (work / ".git").exists()


SPOILED_REPOSITORY_ATTACK = ("cp -r .git/objects .git/refs . ; echo 'ref: refs/heads/main' > HEAD; printf '[core]\\n"
                             "\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n"
                             "\\tfsmonitor = touch PWNED\\n' > config; echo garbage > .git/HEAD")


async def test_a_repository_with_its_git_folder_spoiled_is_not_taken_for_a_bare_one(tmp_path: Path,
                                                                                    home: Path) -> None:
    plain = make_repo(tmp_path / "plain", home)
    sh(SPOILED_REPOSITORY_ATTACK, plain, home)
    sh("git status", plain, home, check=False)
    assert (plain / "PWNED").exists()  # unconfined: an invalid .git, and git takes the folder itself

    work = make_repo(tmp_path / "work", home)
    out = await confined([work], home, SPOILED_REPOSITORY_ATTACK)
    assert "cannot overwrite non-directory './refs'" in out  # the placeholder stood there
    status = sh("git status", work, home, check=False)
    assert "not a git repository" in status.stderr and not (work / "PWNED").exists()
    assert "refs" not in {p.name for p in work.iterdir()}  # the placeholder went; the planted HEAD, alone, makes no repository


async def test_hook_managers_and_other_protected_names_are_read_only(tmp_path: Path, home: Path) -> None:
    husky = "mkdir -p .husky && printf '#!/bin/sh\\ntouch PWNED\\n' > .husky/pre-commit && chmod +x .husky/pre-commit"
    plain = make_repo(tmp_path / "plain", home)
    sh("git config core.hooksPath .husky && " + husky, plain, home)
    sh("echo two > a.txt && git commit -qam two", plain, home)
    assert (plain / "PWNED").exists()  # unconfined, the planted hook ran on the user's commit

    work = make_repo(tmp_path / "work", home)
    sh("git config core.hooksPath .husky", work, home)
    for folder in (".vscode", ".idea", ".devcontainer"):
        (work / folder).mkdir()
    (work / "lefthook.yml").write_text("pre-commit: {}\n")
    before = [name for name in listing(work) if not name.startswith(".git/")]
    attack = "; ".join([husky, "echo 'touch PWNED' > .envrc", "mkdir -p .githooks && echo x > .githooks/pre-commit",
                        "echo x > .vscode/tasks.json", "echo x > .idea/workspace.xml", "echo x > .devcontainer/a.json",
                        "echo '[submodule \"x\"]' > .gitmodules", "echo 'repos: []' > .pre-commit-config.yaml",
                        "echo x >> lefthook.yml", "echo x > .lefthook.yml", "mkdir -p .claude/commands",
                        "echo x > CLAUDE.md", "echo x > .mcp.json"])
    out = await confined([work], home, attack)
    assert refusals(out) >= 12
    sh("echo two > a.txt && git commit -qam two", work, home)
    assert not (work / "PWNED").exists()
    after = [name for name in listing(work) if not name.startswith(".git/")]
    assert after == before and (work / "lefthook.yml").read_text() == "pre-commit: {}\n"  # nothing left


HOME_FILES = (".bashrc", ".profile", ".bash_profile", ".zshrc", ".gitconfig", ".config/git/config", ".local/bin/ls")


async def test_a_writable_home_keeps_its_start_up_files_read_only(tmp_path: Path, home: Path) -> None:
    (home / ".bashrc").write_text("# mine\n")
    (home / ".config").mkdir()
    attack = "; ".join(f"mkdir -p $(dirname ~/{rel}) && echo 'touch PWNED' >> ~/{rel}" for rel in HOME_FILES)
    plain_home = tmp_path / "plain-home"
    shutil.copytree(home, plain_home)
    sh(attack, plain_home, plain_home)
    assert all((plain_home / rel).is_file() for rel in HOME_FILES)  # unconfined, every write goes through

    work = make_repo(home / "proj", home)
    before = listing(home)
    out = await confined([work, home], home, attack + "; echo ok > ~/notes.txt")
    assert refusals(out) >= len(HOME_FILES) - 1
    assert (home / "notes.txt").read_text() == "ok\n"  # the rest of the home is writable, as --add-dir asked
    assert "~/.zshrc is a file" in await confined([work, home], home, "test -f ~/.zshrc && echo '~/.zshrc is a file'")
    (home / "notes.txt").unlink()
    assert listing(home) == before and (home / ".bashrc").read_text() == "# mine\n"


SECRETS = (".pgpass", ".my.cnf", ".s3cfg", ".env", ".config/git/credentials", ".boto", ".huggingface/token",
           ".cache/huggingface/token", ".pulumi/credentials.json", ".config/sops/age/keys.txt", ".oci/config",
           ".databrickscfg", ".config/rclone/rclone.conf", ".config/doctl/config.yaml", ".config/vercel/auth.json",
           ".config/netlify/config.json", ".config/hcloud/cli.toml", ".config/op/config",
           ".config/heroku/config.json", ".mozilla/firefox/abc.default/logins.json",
           ".mozilla/firefox/abc.default/key4.db", ".bash_history", ".zsh_history", ".python_history",
           ".psql_history", ".mysql_history", ".local/share/fish/fish_history", ".docker/config.json",
           ".config/gcloud/credentials.db")


async def test_secret_files_in_the_home_are_hidden(tmp_path: Path, home: Path) -> None:
    for rel in SECRETS:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"MARK-{rel}\n")
    command = " ; ".join(f"cat ~/{rel}" for rel in SECRETS) + " 2>&1; echo end"
    assert sh(command, home, home).stdout.count("MARK-") == len(SECRETS)  # unconfined, all readable
    work = make_repo(tmp_path / "work", home)
    for dirs in ([work], [work, home]):  # the home added as a working folder too
        out = await confined(dirs, home, command)
        assert [line for line in out.splitlines() if "MARK-" in line] == [] and "\nend\n" in out


async def test_the_users_git_workflow_works_inside_and_leaves_nothing(tmp_path: Path, home: Path) -> None:
    work = make_repo(tmp_path / "work", home)
    out = await confined([work], home, (
        "git status --short && echo two > b.txt && git add -A && git commit -qm two && git branch side && "
        "echo three >> a.txt && git stash -q && git stash list && git stash pop -q && git commit -qam three && "
        "git log --oneline | wc -l && git branch --list && git status --porcelain && git log -1 --format=%s HEAD && "
        "git diff HEAD --stat && git reset -q HEAD && git checkout -q side && git checkout -q main && echo done"))
    assert out.endswith("done") and "stash@{0}" in out and "3\n" in out and "side" in out
    assert sh("git status --porcelain", work, home).stdout == ""
    assert sh("git log --format=%s", work, home).stdout == "three\ntwo\none\n"
    assert sorted(p.name for p in work.iterdir()) == [".git", "a.txt", "b.txt"]
    assert not (work / ".git" / "commondir").exists() and not (work / ".git" / "config.worktree").exists()


async def test_placeholders_go_after_a_timeout_and_a_cancel(tmp_path: Path, home: Path) -> None:
    work = make_repo(tmp_path / "work", home)
    before = listing(work)
    tool = BashTool()
    tool.env = user_env(home)
    tool.sandbox = Sandbox(SandboxConfig(enabled=True), work_dirs=[work], home=home, state_dir=home / ".state")
    ctx = ToolContext(cwd=work, spill_dir=home / ".state" / "spill")
    timed = await tool.run({"command": "sleep 30", "timeout": 300}, ctx)
    assert "timed out" in timed.as_text() and listing(work) == before
    task = asyncio.create_task(tool.run({"command": "sleep 30"}, ctx))
    await eventually((work / ".envrc").exists, "the placeholders to stand while it runs", within_s=10)
    assert (work / ".git" / "commondir").read_text() == f"{work / '.git'}\n"
    assert stat.S_ISSOCK((work / "refs").lstat().st_mode) and not (work / "HEAD").exists()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert listing(work) == before
    await tool.sandbox.aclose()


async def test_a_placeholder_two_runs_share_stays_until_the_last_ends(tmp_path: Path, home: Path) -> None:
    work = make_repo(tmp_path / "work", home)
    tool = BashTool()
    tool.env = user_env(home)
    tool.sandbox = Sandbox(SandboxConfig(enabled=True), work_dirs=[work], home=home, state_dir=home / ".state")
    ctx = ToolContext(cwd=work, spill_dir=home / ".state" / "spill")
    # the long run waits for the short one to have ended (their /tmp is the session's, shared), then tries to plant
    long = asyncio.create_task(tool.run({"command": "until [ -e /tmp/go ]; do sleep 0.02; done; sleep 0.2; "
                                                    "echo x > .envrc; echo x > .git/commondir; echo end"}, ctx))
    short = await tool.run({"command": "touch /tmp/go"}, ctx)
    assert not short.is_error and (work / ".envrc").is_dir()  # the long run still holds it
    out = (await long).as_text()
    assert refusals(out) == 2 and "end" in out
    assert sorted(p.name for p in work.iterdir()) == [".git", "a.txt"] and not (work / ".git/commondir").exists()
    await tool.sandbox.aclose()


def test_a_placeholder_left_by_an_agent_that_ends_mid_run_goes_at_exit(tmp_path: Path, home: Path) -> None:
    work = make_repo(tmp_path / "work", home)
    script = (
        "import asyncio, sys\nfrom pathlib import Path\n"
        "from mini_claude.sandbox.config import SandboxConfig\nfrom mini_claude.sandbox.runtime import Sandbox\n"
        "async def main():\n"
        f"    s = Sandbox(SandboxConfig(enabled=True), work_dirs=[Path({str(work)!r})], home=Path({str(home)!r}),"
        " state_dir=None)\n"
        "    assert await s.available()\n"
        "    await s.launch(['true'], Path.cwd())\n"
        "    print(Path('.git/commondir').read_text().strip())\n"
        "asyncio.run(main())\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=work, capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(work / ".git")  # it stood while the agent ran...
    assert not (work / ".git" / "commondir").exists()  # ...and went when it exited without finishing the run


async def test_an_added_folder_that_is_a_start_up_folder_stays_read_only(tmp_path: Path, home: Path) -> None:
    work = make_repo(tmp_path / "work", home)
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    out = await confined([work, bin_dir], home, f"echo 'touch PWNED' > {bin_dir}/ls; echo ok > made.txt")
    assert refusals(out) == 1 and (work / "made.txt").read_text() == "ok\n" and list(bin_dir.iterdir()) == []


async def test_without_socket_nodes_a_repository_gets_a_head_placeholder(tmp_path: Path, home: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sockets(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "mknod", no_sockets)
    work = make_repo(tmp_path / "work", home)
    out = await confined([work], home, "test -d HEAD && echo 'HEAD stands'; echo x > HEAD")
    assert "HEAD stands" in out and refusals(out) == 1
    assert sorted(p.name for p in work.iterdir()) == [".git", "a.txt"]


async def test_editor_and_container_folders_cannot_be_created(tmp_path: Path, home: Path) -> None:
    """Second outside review: `.vscode/tasks.json` (a task that runs on opening the folder), `.devcontainer/` and
    `.idea/` were writable while missing; now they get read-only placeholders like the other names that act alone."""
    attack = ("mkdir -p .vscode .devcontainer .idea; echo '{\"tasks\": []}' > .vscode/tasks.json; "
              "echo '{\"postCreateCommand\": \"touch PWNED\"}' > .devcontainer/devcontainer.json; "
              "echo x > .idea/workspace.xml; echo end")
    plain = make_repo(tmp_path / "plain", home)
    sh(attack, plain, home)
    assert (plain / ".vscode" / "tasks.json").is_file()  # unconfined, the writes go through
    work = make_repo(tmp_path / "work", home)
    before = listing(work)
    out = await confined([work], home, attack)
    assert refusals(out) >= 3 and "end" in out, out
    assert listing(work) == before  # nothing written, every placeholder gone


async def test_a_writable_home_cannot_gain_a_secret_place(tmp_path: Path, home: Path) -> None:
    """Second outside review: with the home added as a working folder, a missing `~/.ssh` could be created and
    `authorized_keys` planted; a missing secret place now gets a read-only placeholder for the run."""
    attack = "mkdir -p ~/.ssh ~/.docker; echo 'ssh-ed25519 AAAA attacker' >> ~/.ssh/authorized_keys; echo end"
    plain_home = tmp_path / "plain-home"
    plain_home.mkdir()
    sh(attack, plain_home, plain_home)
    assert (plain_home / ".ssh" / "authorized_keys").is_file()  # unconfined, it is planted
    work = make_repo(home / "proj", home)
    before = listing(home)
    out = await confined([work, home], home, attack)
    assert "end" in out and not (home / ".ssh").exists() and listing(home) == before


async def test_placeholders_go_when_the_call_is_cancelled_while_its_shell_starts(
        tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found under load: a cancel that lands while the shell is still being started (after the placeholders were
    made) used to leave them behind. The start is held here so the cancel lands exactly there."""
    work = make_repo(tmp_path / "work", home)
    before = listing(work)
    starting, never = asyncio.Event(), asyncio.Event()

    async def held_start(*args: object, **kwargs: object) -> None:
        starting.set()
        await never.wait()

    monkeypatch.setattr("mini_claude.tools.shell.start_shell", held_start)
    tool = BashTool()
    tool.env = user_env(home)
    tool.sandbox = Sandbox(SandboxConfig(enabled=True), work_dirs=[work], home=home, state_dir=home / ".state")
    ctx = ToolContext(cwd=work, spill_dir=home / ".state" / "spill")
    task = asyncio.create_task(tool.run({"command": "sleep 30"}, ctx))
    await asyncio.wait_for(starting.wait(), 10)
    assert listing(work) != before  # the placeholders stand while the shell starts
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert listing(work) == before
    await tool.sandbox.aclose()
