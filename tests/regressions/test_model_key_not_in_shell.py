"""Issue 27, finding 4: the agent's own model key was in every shell command's environment, so `echo
$ANTHROPIC_API_KEY` under an everyday `Bash(echo:*)` rule put it on the screen, into the model's context and into
the saved transcript. Now no command the model runs — foreground, in the background, or typed by the user with `!`
through the same tool — sees the agent's model credentials; every other variable still reaches it."""

from __future__ import annotations

from tests.integration.conftest import Cli, answer, result_text, tool_results, tool_use

ANTHROPIC_KEY = "sk-ant-model-key-0123456789abcdef"
OPENAI_KEY = "sk-openai-model-key-0123456789"
OWN_KEY = "mini-claude-model-key-0123456789"
TOKEN = "gateway-bearer-token-0123456789"
PROBE = ('echo "a=${ANTHROPIC_API_KEY:-unset} o=${OPENAI_API_KEY:-unset} t=${ANTHROPIC_AUTH_TOKEN:-unset} '
         'm=${MINI_CLAUDE_API_KEY:-unset} f=$FAVOURITE"')


def test_the_model_key_never_reaches_a_shell_command(cli: Cli) -> None:
    mock = cli.mock([tool_use("Bash", {"command": PROBE}),
                     tool_use("Bash", {"command": PROBE, "run_in_background": True}),
                     tool_use("TaskOutput", {"task_id": "bash_1", "block": True, "timeout": 10_000}),
                     answer("done")])
    cli.env.update(ANTHROPIC_API_KEY=ANTHROPIC_KEY, OPENAI_API_KEY=OPENAI_KEY, MINI_CLAUDE_API_KEY=OWN_KEY,
                   FAVOURITE="teal")
    # a settings file's env reaches commands too, but never the model's credentials it may carry
    (cli.home / ".claude").mkdir(exist_ok=True)
    (cli.home / ".claude" / "settings.json").write_text(f'{{"env": {{"ANTHROPIC_AUTH_TOKEN": "{TOKEN}"}}}}')
    result = cli.run("-p", "probe the environment", "--allowedTools", "Bash(echo:*)")
    assert result.rc == 0, result.stderr
    results = [result_text(block) for block in tool_results(mock)]
    assert results[0] == "a=unset o=unset t=unset m=unset f=teal", results
    assert "a=unset o=unset t=unset m=unset f=teal" in results[2], results  # the background task's output
    everything = "\n".join([*results, result.stdout, result.stderr])
    for secret in (ANTHROPIC_KEY, OPENAI_KEY, OWN_KEY, TOKEN):
        assert secret not in everything
    # the requests themselves still carried the key: the model client has it, the shell does not
    assert mock.requests
