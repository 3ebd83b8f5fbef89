"""Outside review of issue 27: the model key was stripped from every command's environment, but the agent's own
process still held it in its initial environment block, which `/proc/<agent pid>/environ` shows to any process of
the same user: `cut -z -c 1-24 /proc/$PPID/environ` under `Bash(cut:*)` handed the model the key in pieces that
masking cannot recognise. The agent now blanks those values in its own block at start (os.environ keeps them)."""

from __future__ import annotations

from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

KEY = "sk-ant-model-key-0123456789abcdef"
TOKEN = "ghp_usertoken0123456789abcdef"


def test_the_agents_own_environ_shows_no_key_to_its_commands(cli: Cli) -> None:
    probe = "tr '\\0' '\\n' < /proc/$PPID/environ | cut -c 1-200"
    mock = cli.mock([tool_use("Bash", {"command": probe}), answer("done")])
    cli.env.update(ANTHROPIC_API_KEY=KEY, GITHUB_TOKEN=TOKEN, FAVOURITE="teal")
    # a bare Bash rule: `< /proc/$PPID/environ` is a redirection from a path the gate cannot know (it could be a
    # socket), which no prefix rule covers
    result = cli.run("-p", "read the parent's environment", "--allowedTools", "Bash")
    assert result.rc == 0, result.stderr
    shown = result_text(tool_results(mock)[0])
    assert "FAVOURITE=teal" in shown, shown  # it really read the agent's environment
    assert "ANTHROPIC_API_KEY=*" in shown and "GITHUB_TOKEN=*" in shown, shown
    for secret, piece in ((KEY, KEY[:12]), (TOKEN, TOKEN[:12])):
        assert secret not in shown and piece not in shown, shown
    assert mock.requests  # the model client still had the key
