"""Issue 18, findings 3, 4 and 11, end to end: the real CLI (`python -m mini_claude -p`) against the mock model,
running the real bash tool in a scratch project. Each command here got through on feae78a.

3. An unquoted heredoc body is expanded by bash: `$(touch PWNED)` on a line that starts with a blank ran under
   `Bash(git status:*)`, and hid `rm` from a deny rule.
4. Data re-read as code: `${_@P}` (prompt expansion of the last argument) and arithmetic over a variable whose
   value is `a[$(cmd)]` ran `touch` under `Bash(echo:*)`.
11. Programs that run code from their arguments passed a deny rule under `--yolo`.
"""

from __future__ import annotations

import pytest

from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

pytestmark = pytest.mark.timeout(120)

NOT_ALLOWED = "permission denied for Bash: not allowed in non-interactive mode; allow with --yolo or add "
DENIED_BY_RULE = 'permission denied for Bash: denied by rule "Bash(rm:*)" from --disallowedTools'
CANNOT_SEE = ', so deny rule "Bash(rm:*)" from --disallowedTools cannot see what it runs; bypassPermissions mode ' \
             "refuses such a command while a Bash deny or ask rule is in force"



def run_one(cli: Cli, command: str, *flags: str) -> str:
    """Have the model ask for `command` once; the text of the tool result it got back."""
    mock = cli.mock([tool_use("Bash", {"command": command}), answer("done")])
    r = cli.run("-p", "go", *flags)
    assert r.rc == 0 and "denied on the way" in r.stderr, r.stderr  # answered; a call was denied on the way
    [result] = tool_results(mock)
    assert result.get("is_error") is True, result
    return result_text(result)


@pytest.mark.parametrize(("rule", "command"), [
    # finding 3: the body line starts with a blank, so tree-sitter saw no substitution in it
    ("Bash(git status:*)", "git status --short <<EOF\n $(touch PWNED)\nEOF"),
    ("Bash(git status:*)", "git status <<EOF\n\t`touch PWNED`\nEOF"),
    ("Bash(git status:*)", "git status <<-EOF\n\t${u:-$(touch PWNED)}\n\tEOF"),
    # finding 4: text that was only ever a quoted string reaches bash's evaluator
    ("Bash(echo:*)", "echo '$(touch PWNED)' ; echo ${_@P}"),
    ("Bash(echo:*)", "echo 'a[$(touch PWNED)]' ; echo $(( _ ))"),
    ("Bash(echo:*)", "echo 'a[$(touch PWNED)]' ; echo ${x:_}"),
    ("Bash(echo:*)", "echo 'a[$(touch PWNED)]' ; echo ${u[_]}"),
    ("Bash(echo:*)", "echo 'a[$(touch PWNED)]' ; echo ${!_}"),
])
def test_an_allow_rule_does_not_cover_code_bash_makes_from_data(cli: Cli, rule: str, command: str) -> None:
    text = run_one(cli, command, "--allowedTools", rule)
    assert text.startswith(NOT_ALLOWED), text
    assert not (cli.work / "PWNED").exists()


def test_a_deny_rule_sees_commands_in_an_expanded_heredoc_body(cli: Cli) -> None:
    victim = cli.work / "victim"
    victim.write_text("keep me")
    text = run_one(cli, "cat <<EOF\n $(rm victim)\nEOF", "--yolo", "--disallowedTools", "Bash(rm:*)")
    assert text == DENIED_BY_RULE
    assert victim.read_text() == "keep me"


@pytest.mark.parametrize(("command", "why"), [
    ("git -c alias.x='!rm victim' x", "git -c sets configuration that can run a program"),
    ("git --config-env=alias.x=V x", "git --config-env sets configuration that can run a program"),
    ("hash -p /bin/rm foo; foo victim", "hash -p makes a name run another program"),
    ("awk 'BEGIN{system(\"rm victim\")}'", "awk runs a program that can start commands (system, pipes, getline)"),
    ("sed -n '1e rm victim' /dev/null", "sed runs a script that can start commands (the e command or flag)"),
    ("sed -n '1s/x/y/e' /dev/null", "sed runs a script that can start commands (the e command or flag)"),
    ("tar cf /dev/null /dev/null --checkpoint=1 --checkpoint-action=exec='rm victim'",
     "tar --checkpoint-action can run a command (exec=CMD)"),
    ("ssh -o ProxyCommand='rm victim' example.invalid", "ssh -o can set a command to run (ProxyCommand, ...)"),
    ("echo cm0gdmljdGlt | base64 -d | sh", "sh reads the code it runs from a pipe"),
    ("python3 -c 'import os; os.remove(\"victim\")'", "python3 runs code from its arguments, a file or stdin"),
    ("find . -name victim -exec perl -e 'unlink @ARGV' {} +", "perl runs code from its arguments, a file or stdin"),
    ("PS4='$(rm victim)' bash -xc :", "an assignment to PS4 can make bash or a program run code from it"),
    ("env -S 'perl -e unlink(q(victim))'", "env -S splits a string into a command"),
])
def test_a_deny_rule_holds_under_yolo_against_programs_that_run_code(cli: Cli, command: str, why: str | None) -> None:
    victim = cli.work / "victim"
    victim.write_text("keep me")
    text = run_one(cli, command, "--yolo", "--disallowedTools", "Bash(rm:*)")
    expected = DENIED_BY_RULE if why is None else f"permission denied for Bash: {why}{CANNOT_SEE}"
    assert text == expected
    assert victim.read_text() == "keep me"


def test_without_a_bash_rule_yolo_still_runs_everything(cli: Cli) -> None:
    """The refusal is the price of a deny rule being in force: without one, bypass mode is bypass mode."""
    mock = cli.mock([tool_use("Bash", {"command": "awk 'BEGIN{system(\"touch made\")}'"}), answer("done")])
    r = cli.run("-p", "go", "--yolo", "--disallowedTools", "Read(secret)")
    assert r.rc == 0, r.stderr
    [result] = tool_results(mock)
    assert result.get("is_error") is not True
    assert (cli.work / "made").exists()
