"""Issue 21, acceptance 1 (commands): a custom command's ``!`cmd` `` is replaced by the command's output and `@path`
attaches the file, through the permission gate under the command's `allowed-tools`; a command that needs approval
stops the whole command before anything runs or reaches the model (`-p`: a refusal naming the rule). The real CLI
against the mock model, real bash, real files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.integration.conftest import Cli, answer


def command(folder: Path, name: str, body: str, allowed: str | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    head = f"---\nallowed-tools: {allowed}\n---\n" if allowed else ""
    (folder / f"{name}.md").write_text(head + body)


def project(c: Cli) -> Path:
    return c.work / ".claude" / "commands"


def user(c: Cli) -> Path:
    return c.home / ".claude" / "commands"


def first_user_message(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    content = requests[0]["body"]["messages"][0]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def test_bang_output_inlined_and_at_file_attached(cli: Cli) -> None:
    (cli.work / "notes.txt").write_text("note body\nsecond line\n")
    command(project(cli), "x", "Look: !`echo hi-there`\nNotes: @notes.txt.\nEnd $ARGUMENTS\n")
    mock = cli.mock([answer("done")])
    r = cli.run("-p", "/x foo", "--allowedTools", "Bash(echo:*)")  # (mini-claude asks before any echo)
    assert r.rc == 0, r.stderr
    blocks = first_user_message(mock.requests)
    assert blocks[0]["text"] == "Look: hi-there\nNotes: @notes.txt.\nEnd foo"
    [attached] = [b["text"] for b in blocks[1:]]
    assert attached == ("Called the Read tool with the following input: "
                        f"{json.dumps({'file_path': str(cli.work / 'notes.txt')}, separators=(',', ':'))}\n"
                        "Result of calling the Read tool:\n     1\tnote body\n     2\tsecond line")


def test_a_command_needing_approval_stops_everything(cli: Cli) -> None:
    command(user(cli), "y", "A: !`touch first`\nB: !`touch second`\n", allowed="Bash(touch first)")
    mock = cli.mock([answer("never")])
    r = cli.run("-p", "/y")
    assert r.rc == 1 and r.stdout == ""
    assert "/y: stopped, nothing was run or sent: !`touch second`: permission denied for Bash: not allowed in " \
           "non-interactive mode" in r.stderr
    assert '"Bash(touch second)"' in r.stderr or '"Bash(touch:*)"' in r.stderr  # the rule that would allow it
    assert not (cli.work / "first").exists() and not (cli.work / "second").exists()  # nothing ran
    assert mock.requests == []  # nothing reached the model


def test_allowed_tools_let_the_command_run(cli: Cli) -> None:
    command(user(cli), "y", "Made: !`touch made && echo made-it`\n", allowed="Bash(touch:*), Bash(echo:*)")
    mock = cli.mock([answer("done")])
    r = cli.run("-p", "/y")
    assert r.rc == 0, r.stderr
    assert (cli.work / "made").exists()
    assert first_user_message(mock.requests)[0]["text"] == "Made: made-it"


def test_a_project_commands_allowed_tools_do_not_count(cli: Cli) -> None:
    command(project(cli), "y", "Made: !`touch made`\n", allowed="Bash(touch:*)")
    mock = cli.mock([answer("never")])
    r = cli.run("-p", "/y")
    assert r.rc == 1 and "!`touch made`" in r.stderr
    assert not (cli.work / "made").exists() and mock.requests == []


def test_at_paths_outside_the_project_or_secret_are_refused(cli: Cli, tmp_path: Path) -> None:
    ssh = cli.home / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("PRIVATE KEY\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("outside text\n")
    os.symlink(outside, cli.work / "link.txt")
    (cli.work / ".env").write_text("TOKEN=abc\n")
    for mention, why in (("@~/.ssh/id_rsa", "outside"), ("@link.txt", "outside"), ("@.env", "")):
        command(project(cli), "z", f"Read {mention}\n")
        mock = cli.mock([answer("never")])
        r = cli.run("-p", "/z")
        assert r.rc == 1, (mention, r.stderr)
        assert f"/z: stopped, nothing was run or sent: {mention}: permission denied for Read" in r.stderr
        assert why in r.stderr
        assert mock.requests == []
        assert "PRIVATE KEY" not in r.stderr + r.stdout and "outside text" not in r.stderr + r.stdout


def test_at_a_missing_file_is_left_as_text_with_a_warning(cli: Cli) -> None:
    command(project(cli), "m", "See @nothing-here.txt and mail me@example.com\n")
    mock = cli.mock([answer("done")])
    r = cli.run("-p", "/m")
    assert r.rc == 0, r.stderr
    assert "/m: @nothing-here.txt names no file; left as text" in r.stderr
    assert first_user_message(mock.requests)[0]["text"] == "See @nothing-here.txt and mail me@example.com"
