"""Issue 27, "Secrets stay out of commands": besides the agent's own model key (test_model_key_not_in_shell.py),
variables whose names look like secrets (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`) reached every shell command, so a
prompt-injected model could print them under an everyday allow rule; hooks got the model key; and output that carried
a known secret value (a file holding the key) went to the model, the screen and the saved session as it was.

Now: commands get no secret-looking variable unless the user's own settings pass it through (a repository's
settings cannot, and are told so in one warning line); hooks get the user's environment without the agent's
credentials; and every known secret value is `[secret NAME]` in what the model receives, what the terminal shows
and what the session file keeps. Real CLI processes, real shells, the mock model's request log."""

from __future__ import annotations

import json

from tests.integration.conftest import Cli, answer, probe_entry, result_text, tool_results, tool_use

MODEL_KEY = "sk-ant-model-key-0123456789abcdef"
GH_TOKEN = "ghp_user-github-token-0123456789"
AWS_SECRET = "aws-secret-access-key-0123456789"
LENGTHS = 'echo "g=${#GITHUB_TOKEN} a=${#AWS_SECRET_ACCESS_KEY} k=${#ANTHROPIC_API_KEY} f=$FAVOURITE"'


def _user_settings(cli: Cli, settings: dict[str, object]) -> None:
    (cli.home / ".claude").mkdir(exist_ok=True)
    (cli.home / ".claude" / "settings.json").write_text(json.dumps(settings))


def _secret_env(cli: Cli) -> None:
    cli.env.update(ANTHROPIC_API_KEY=MODEL_KEY, GITHUB_TOKEN=GH_TOKEN, AWS_SECRET_ACCESS_KEY=AWS_SECRET,
                   FAVOURITE="teal")


def test_env_and_echo_under_allow_rules_print_no_secret(cli: Cli) -> None:
    mock = cli.mock([tool_use("Bash", {"command": "env"}),
                     tool_use("Bash", {"command": 'echo "$ANTHROPIC_API_KEY $GITHUB_TOKEN $AWS_SECRET_ACCESS_KEY"'}),
                     answer("done")])
    _secret_env(cli)
    result = cli.run("-p", "show me the environment", "--allowedTools", "Bash(env)", "Bash(echo:*)")
    assert result.rc == 0, result.stderr
    env_out, echo_out = (result_text(block) for block in tool_results(mock))
    names = {line.partition("=")[0] for line in env_out.splitlines()}
    assert "FAVOURITE" in names and "PATH" in names, env_out  # everything else still reaches the command
    assert not names & {"ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"}, sorted(names)
    assert echo_out.strip() == "", echo_out
    everything = "\n".join([env_out, echo_out, result.stdout, result.stderr])
    for secret in (MODEL_KEY, GH_TOKEN, AWS_SECRET):
        assert secret not in everything


def test_the_users_pass_through_lets_named_variables_reach_commands(cli: Cli) -> None:
    mock = cli.mock([tool_use("Bash", {"command": LENGTHS}), answer("done")])
    _secret_env(cli)
    # the agent's own key never passes, even when the user's pattern would cover it
    _user_settings(cli, {"shellEnvironment": {"passThrough": ["GITHUB_*", "ANTHROPIC_*"]}})
    result = cli.run("-p", "probe", "--allowedTools", "Bash(echo:*)")
    assert result.rc == 0, result.stderr
    assert result_text(tool_results(mock)[0]) == f"g={len(GH_TOKEN)} a=0 k=0 f=teal"


def test_a_repositorys_pass_through_is_ignored_with_a_warning(cli: Cli) -> None:
    mock = cli.mock([tool_use("Bash", {"command": LENGTHS}), answer("done")])
    _secret_env(cli)
    (cli.work / ".claude").mkdir()
    (cli.work / ".claude" / "settings.json").write_text(
        json.dumps({"shellEnvironment": {"passThrough": ["*"]}}))
    result = cli.run("-p", "probe", "--allowedTools", "Bash(echo:*)")
    assert result.rc == 0, result.stderr
    assert result_text(tool_results(mock)[0]) == "g=0 a=0 k=0 f=teal"
    assert ("settings: .claude/settings.json: shellEnvironment: ignored: a repository's settings cannot pass your "
            "secret-looking variables to commands (set it in ~/.claude/settings.json or --settings)") in result.stderr


def test_a_hook_gets_the_users_variables_but_never_the_model_key(cli: Cli) -> None:
    seen = cli.tmp / "hook-env.txt"
    mock = cli.mock([tool_use("Bash", {"command": "echo hi"}), answer("done")])
    _secret_env(cli)
    hook = {"type": "command", "command": f'echo "k=${{#ANTHROPIC_API_KEY}} g=${{#GITHUB_TOKEN}}" > {seen}'}
    _user_settings(cli, {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    result = cli.run("-p", "hi", "--allowedTools", "Bash(echo:*)")
    assert result.rc == 0, result.stderr
    assert mock.requests
    assert seen.read_text().strip() == f"k=0 g={len(GH_TOKEN)}"


def test_a_known_secret_value_in_output_is_masked_for_the_model_the_screen_and_the_session(cli: Cli) -> None:
    (cli.work / "notes.txt").write_text(f"the key is {MODEL_KEY}\nthe token is {GH_TOKEN}\n")
    mock = cli.mock([tool_use("Bash", {"command": "cat notes.txt"}),
                     tool_use("Read", {"file_path": str(cli.work / "notes.txt")}),
                     answer("done")])
    _secret_env(cli)
    result = cli.run("-p", "read the notes", "--allowedTools", "Bash(cat:*)", "Read", "--verbose")
    assert result.rc == 0, result.stderr
    shell_out, read_out = (result_text(block) for block in tool_results(mock))
    assert shell_out == "the key is [secret ANTHROPIC_API_KEY]\nthe token is [secret GITHUB_TOKEN]", shell_out
    assert "the key is [secret ANTHROPIC_API_KEY]" in read_out, read_out
    assert "[secret GITHUB_TOKEN]" in read_out, read_out
    # the screen (-p: stderr): the command's output under its call line
    assert ("● Bash(cat notes.txt)\n  ⎿  the key is [secret ANTHROPIC_API_KEY]\n     the token is [secret GITHUB_TOKEN]\n"
            in result.stderr), result.stderr
    sessions = list((cli.state / "sessions").rglob("*.jsonl"))
    assert sessions, "the session was saved"
    saved = "\n".join(path.read_text() for path in sessions)
    assert "[secret ANTHROPIC_API_KEY]" in saved
    for text in (saved, result.stdout, result.stderr, json.dumps(mock.requests)):
        assert MODEL_KEY not in text
        assert GH_TOKEN not in text


def test_a_stdio_server_gets_no_model_key_and_its_results_are_masked(cli: Cli) -> None:
    """A stdio MCP server never inherits the agent's credentials; it does get the user's other variables (a
    server is configured by the user to use them), and a known value in its tool result is masked all the same."""
    config = cli.config_file({"p": probe_entry()})
    mock = cli.mock([tool_use("mcp__p__get_env", {"name": "ANTHROPIC_API_KEY"}),
                     tool_use("mcp__p__get_env", {"name": "GITHUB_TOKEN"}),
                     answer("done")])
    _secret_env(cli)
    result = cli.run("-p", "probe", "--mcp-config", config, "--allowedTools", "mcp__p__get_env")
    assert result.rc == 0, result.stderr
    assert [result_text(block) for block in tool_results(mock)] == ["<unset>", "[secret GITHUB_TOKEN]"]
    assert GH_TOKEN not in result.stdout + result.stderr


def test_what_hooks_say_to_the_model_is_masked(cli: Cli) -> None:
    """Hooks get the user's secret-looking variables; what they send the model (a UserPromptSubmit's context, a
    PreToolUse refusal's reason) carries no value of them."""
    mock = cli.mock([tool_use("Bash", {"command": "echo hi"}), answer("done")])
    _secret_env(cli)
    say = {"type": "command", "command": 'echo "context: $GITHUB_TOKEN"'}
    refuse = {"type": "command", "command": 'echo "refused with $AWS_SECRET_ACCESS_KEY" >&2; exit 2'}
    _user_settings(cli, {"hooks": {"UserPromptSubmit": [{"hooks": [say]}],
                                   "PreToolUse": [{"matcher": "Bash", "hooks": [refuse]}]}})
    result = cli.run("-p", "hi", "--allowedTools", "Bash(echo:*)")
    assert result.rc == 0, result.stderr
    sent = json.dumps(mock.requests)
    assert "context: [secret GITHUB_TOKEN]" in sent
    assert "refused with [secret AWS_SECRET_ACCESS_KEY]" in result_text(tool_results(mock)[0])
    for text in (sent, result.stdout, result.stderr):
        assert GH_TOKEN not in text and AWS_SECRET not in text


def test_a_custom_commands_shell_output_is_masked(cli: Cli) -> None:
    """Review of issue 27: a repository's custom command with !`cmd` put the command's output into the prompt
    unmasked, so a file (or another process's environment) holding the key reached the model and the session."""
    (cli.work / "notes.txt").write_text(f"the key is {MODEL_KEY}\n")
    (cli.work / ".claude" / "commands").mkdir(parents=True)
    (cli.work / ".claude" / "commands" / "show.md").write_text(
        "---\nallowed-tools: Bash(cat:*)\n---\nnotes: !`cat notes.txt`\n")
    mock = cli.mock([answer("done")])
    _secret_env(cli)
    result = cli.run("-p", "/show", "--allowedTools", "Bash(cat:*)")
    assert result.rc == 0, result.stderr
    sent = json.dumps(mock.requests)
    assert "the key is [secret ANTHROPIC_API_KEY]" in sent, sent[-2000:]  # the command really ran
    saved = "\n".join(path.read_text() for path in (cli.state / "sessions").rglob("*.jsonl"))
    for text in (sent, saved, result.stdout, result.stderr):
        assert MODEL_KEY not in text


def test_a_value_serialised_before_masking_is_masked_in_its_json_spelling() -> None:
    """Review of issue 27: structuredContent is JSON text before the loop masks it, so a value holding `"` or `\\`
    was escaped there and slipped past; each value's JSON spellings are known too."""
    from mini_claude.secrets import SecretValues

    values = SecretValues()
    value = 'Pa"ss\\wörd_canary12345'
    values.add("GITHUB_TOKEN", value)
    for text in (json.dumps({"x": value}), json.dumps({"x": value}, ensure_ascii=False), value):
        assert values.mask(text).count("[secret GITHUB_TOKEN]") == 1 and "canary" not in values.mask(text), text
