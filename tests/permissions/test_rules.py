"""Rule parsing and matching: every rule form, compound-command safety, paths, MCP names."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.errors import ConfigError
from mini_claude.permissions import (
    MatchEnv,
    RuleSet,
    ToolCall,
    claude_tool_name,
    parse_rule,
    split_rule_list,
    split_shell_command,
)
from mini_claude.settings import Settings, SettingsRule


@pytest.fixture
def env(tmp_path: Path) -> MatchEnv:
    cwd = tmp_path / "proj"
    home = tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    return MatchEnv(cwd=cwd, home=home)


def allows(rules: list[str], call: ToolCall, env: MatchEnv) -> bool:
    return RuleSet.from_strings(allow=rules).match_allow(call, env) is not None


def denies(rules: list[str], call: ToolCall, env: MatchEnv) -> bool:
    return RuleSet.from_strings(deny=rules).match_deny(call, env) is not None


def bash(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command})


# ------------------------------------------------------------------------------------------------------ parsing


@pytest.mark.parametrize(("text", "message"), [
    ("", 'invalid permission rule "": empty rule'),
    ("Bash(git status", 'invalid permission rule "Bash(git status": missing closing ")"'),
    ("Bash)", 'invalid permission rule "Bash)": unexpected ")"'),
    ("(ls)", 'invalid permission rule "(ls)": missing tool name before "("'),
    ("Bash()", 'invalid permission rule "Bash()": empty specifier (write "Bash" to match every call)'),
    ("Bash(git:*x)", 'invalid permission rule "Bash(git:*x)": ":*" may only end the pattern'),
    ("Bash(g*t:*)", 'invalid permission rule "Bash(g*t:*)": ":*" may only end the pattern; use "*" for other '
                    'wildcards'),
    ("mcp__github(x)", 'invalid permission rule "mcp__github(x)": MCP rules take no "(...)": write "mcp__server" '
                       'or "mcp__server__tool"'),
    ("Web Fetch", "invalid permission rule \"Web Fetch\": a tool name may contain only letters, digits, '_', '-', "
                  "'.' and '*'"),
])
def test_parse_errors_name_the_rule(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_rule(text, source=".claude/settings.json", key="permissions.allow[0]")
    assert info.value.message == message
    assert info.value.file == ".claude/settings.json"
    assert info.value.key == "permissions.allow[0]"


def test_cli_parse_error_names_the_flag() -> None:
    with pytest.raises(ConfigError) as info:
        RuleSet().with_cli(deny=["Bash(rm"])
    assert str(info.value) == '--disallowedTools: invalid permission rule "Bash(rm": missing closing ")"'


def test_from_settings_collects_errors_and_keeps_good_rules() -> None:
    settings = Settings(
        permissions_allow=[SettingsRule("Read", "~/.claude/settings.json", "permissions.allow[0]"),
                           SettingsRule("Bash(", ".claude/settings.json", "permissions.allow[0]")],
        permissions_deny=[SettingsRule("Bash(rm:*)", ".claude/settings.json", "permissions.deny[0]")],
    )
    rules = RuleSet.from_settings(settings)
    assert [r.text for r in rules.allow] == ["Read"]
    assert [(r.text, r.source, r.key) for r in rules.deny] == [("Bash(rm:*)", ".claude/settings.json",
                                                                "permissions.deny[0]")]
    assert [str(e) for e in rules.errors] == [
        '.claude/settings.json: permissions.allow[0]: invalid permission rule "Bash(": missing closing ")"'
    ]


def test_unknown_tools_are_kept_and_match_nothing(env: MatchEnv) -> None:
    rules = RuleSet.from_strings(allow=["WebFetch(domain:example.com)", "Task", "NotebookEdit"])
    assert [r.tool for r in rules.allow] == ["WebFetch", "Task", "NotebookEdit"]
    for call in (bash("ls"), ToolCall("Read", {"file_path": "a"}), ToolCall("mcp__s__t")):
        assert rules.match_allow(call, env) is None
    # ...except a tool that really has that name
    assert rules.match_allow(ToolCall("Task"), env) is not None


def test_builtin_names_map_and_are_accepted_as_aliases(env: MatchEnv) -> None:
    assert [claude_tool_name(n) for n in ("Read", "glob", "grep", "Write", "Edit", "bash")] == [
        "Read", "Glob", "Grep", "Write", "Edit", "Bash"]
    assert claude_tool_name("mcp__a__b") == "mcp__a__b"
    assert parse_rule("bash(git status:*)", source="x").tool == "Bash"
    assert allows(["bash(git status:*)"], bash("git status"), env)


def test_split_rule_list_for_cli_values() -> None:
    assert split_rule_list(["Bash(git log:*) Read,Edit", "Bash(npm run *)"]) == [
        "Bash(git log:*)", "Read", "Edit", "Bash(npm run *)"]


# ------------------------------------------------------------------------------------------------- Bash forms


def test_bare_bash_and_star_match_everything(env: MatchEnv) -> None:
    for rule in ("Bash", "Bash(*)"):
        assert allows([rule], bash("rm -rf / && echo $(id) > /etc/x"), env)


def test_exact_rule(env: MatchEnv) -> None:
    assert allows(["Bash(git status)"], bash("git status"), env)
    assert allows(["Bash(git status)"], bash("  git   status "), env)
    assert not allows(["Bash(git status)"], bash("git status -s"), env)
    assert not allows(["Bash(git status)"], bash("git"), env)


def test_colon_star_prefix_has_a_word_boundary(env: MatchEnv) -> None:
    rule = ["Bash(git status:*)"]
    assert allows(rule, bash("git status"), env)
    assert allows(rule, bash("git status --short"), env)
    assert not allows(rule, bash("git statusx"), env)
    assert not allows(rule, bash("git stash"), env)
    assert not denies(["Bash(rm:*)"], bash("rmdir build"), env)


def test_wildcards(env: MatchEnv) -> None:
    assert allows(["Bash(npm run *)"], bash("npm run test"), env)
    assert allows(["Bash(npm run *)"], bash("npm run"), env)  # trailing " *" includes the bare command
    assert not allows(["Bash(npm run *)"], bash("npm runner"), env)
    assert allows(["Bash(ls*)"], bash("lsof -i"), env)
    assert not allows(["Bash(ls *)"], bash("lsof -i"), env)
    assert allows(["Bash(git * main)"], bash("git checkout main"), env)
    assert not allows(["Bash(git * main)"], bash("git checkout dev"), env)
    assert allows(["Bash(* --version)"], bash("node --version"), env)


def test_harmless_wrappers_are_stripped_for_allow(env: MatchEnv) -> None:
    assert allows(["Bash(npm test:*)"], bash("timeout 60 npm test"), env)
    assert allows(["Bash(npm test:*)"], bash("nice -n 5 nohup npm test"), env)
    # env assignments change what runs (PATH=, LD_PRELOAD=): not stripped for allow
    assert not allows(["Bash(npm test:*)"], bash("LD_PRELOAD=x.so npm test"), env)
    assert not allows(["Bash(npm test:*)"], bash("sudo npm test"), env)


# ---------------------------------------------------------------------------------------- compound-command safety


@pytest.mark.parametrize("command", [
    "git status && rm -rf /",
    "git status; rm -rf /",
    "git status | sh",
    "git status || rm -rf /",
    "git status & rm -rf /",
    "git status\nrm -rf /",
    "(git status; rm -rf /)",
    "git status $(rm -rf /)",
    'git status "$(rm -rf /)"',
    "git status `rm -rf /`",
    "git status <(rm -rf /)",
    "git status > \"$f\"",
    "git status 'unterminated",
])
def test_prefix_rule_never_allows_a_smuggled_command(command: str, env: MatchEnv) -> None:
    assert not allows(["Bash(git status:*)"], bash(command), env)


def test_compound_is_allowed_when_every_part_is(env: MatchEnv) -> None:
    rules = ["Bash(git status:*)", "Bash(git diff:*)", "Bash(wc:*)"]
    assert allows(rules, bash("git status && git diff | wc -l"), env)
    assert allows(rules, bash("git status 2>&1 > /dev/null; git diff"), env)
    assert not allows(rules, bash("git status && git push"), env)
    used = RuleSet.from_strings(allow=rules).match_allow(bash("git diff; git status; git diff"), env)
    assert used is not None and [r.text for r in used] == ["Bash(git diff:*)", "Bash(git status:*)"]


def test_quoted_separators_are_not_separators(env: MatchEnv) -> None:
    assert allows(["Bash(git commit:*)"], bash("git commit -m 'fix: a && b; c | d'"), env)
    assert allows(["Bash(echo:*)"], bash('echo "a > b"'), env)
    assert not allows(["Bash(echo:*)"], bash("echo \"$(id)\""), env)
    assert allows(["Bash(echo:*)"], bash("echo '$(id)'"), env)  # single quotes: no substitution


def test_exact_rule_for_the_whole_compound_text(env: MatchEnv) -> None:
    assert allows(["Bash(make && make test)"], bash("make && make test"), env)
    # a wildcard rule is never applied to the whole compound text
    assert not allows(["Bash(make *)"], bash("make && rm -rf /"), env)


def test_split_shell_command_parts() -> None:
    assert split_shell_command("a && b | c; d").parts == ("a", "b", "c", "d")
    split = split_shell_command('echo "$(rm -rf /)" ; ls')
    assert split.parts == ("rm -rf /", 'echo "$(…)"', "ls")
    assert split.opaque and split.why_opaque == "command substitution"
    assert split_shell_command("npm test > $out").why_opaque == "output redirection to a path the gate cannot know"
    # a redirection to a named file is a write of that file, which the gate judges (test_hidden_writes.py)
    written = split_shell_command("npm test > out.txt")
    assert not written.opaque and [w.path for w in written.writes[0]] == ["out.txt"]
    assert not split_shell_command("npm test 2>&1 >/dev/null").opaque


@pytest.mark.parametrize("command", [
    "rm -rf /",
    "ls && rm -rf /",
    "echo $(rm -rf /)",
    "echo `rm -rf /`",
    "sudo rm -rf /",
    "sudo -u root rm -rf /",
    "env FOO=1 rm -rf /",
    "FOO=1 rm -rf /",
    "timeout 5 rm -rf /",
    "/bin/rm -rf /",
    "'rm' -rf /",
    "\\rm -rf /",
    "bash -c 'rm -rf /'",
    "sh -lc \"cd x && rm -rf /\"",
    "xargs rm < list",
    "eval 'rm -rf /'",
])
def test_deny_matches_any_part_and_looks_through_wrappers(command: str, env: MatchEnv) -> None:
    assert denies(["Bash(rm:*)"], bash(command), env)


def test_deny_does_not_over_match(env: MatchEnv) -> None:
    assert not denies(["Bash(rm:*)"], bash("git commit -m 'rm old files'"), env)
    assert not denies(["Bash(rm:*)"], bash("echo rm"), env)


# ------------------------------------------------------------------------------------------------ path rules


def read(path: str) -> ToolCall:
    return ToolCall("Read", {"file_path": path})


def edit(path: str) -> ToolCall:
    return ToolCall("Edit", {"file_path": path})


def test_relative_glob_is_anchored_at_cwd(env: MatchEnv) -> None:
    rule = ["Read(src/**)"]
    assert allows(rule, read("src/a.py"), env)
    assert allows(rule, read("src/deep/b.py"), env)
    assert allows(rule, read(str(env.cwd / "src/a.py")), env)
    assert not allows(rule, read("lib/src/a.py"), env)
    assert not allows(rule, read("srcx/a.py"), env)
    assert not allows(rule, read("src/../secret.txt"), env)


def test_slashless_pattern_matches_at_any_depth(env: MatchEnv) -> None:
    assert denies(["Read(*.env)"], read(".env"), env)
    assert denies(["Read(*.env)"], read("config/prod.env"), env)
    assert denies(["Read(.env)"], read("sub/.env"), env)
    assert not denies(["Read(./.env)"], read("sub/.env"), env)  # ./ anchors it
    assert denies(["Read(./.env)"], read(".env"), env)


def test_directory_pattern_covers_its_contents(env: MatchEnv) -> None:
    assert denies(["Read(secrets)"], read("secrets/key.pem"), env)
    assert denies(["Read(secrets/)"], read("secrets/a/b"), env)
    assert denies(["Edit(docs/**/*.md)"], edit("docs/a/b/c.md"), env)
    assert denies(["Edit(docs/**/*.md)"], edit("docs/c.md"), env)
    assert not denies(["Edit(docs/**/*.md)"], edit("docs/c.txt"), env)
    assert denies(["Edit(src/?.py)"], edit("src/a.py"), env)
    assert denies(["Edit(src/[ab].py)"], edit("src/b.py"), env)
    assert not denies(["Edit(src/[!ab].py)"], edit("src/b.py"), env)


def test_absolute_home_and_root_relative_forms(env: MatchEnv) -> None:
    secret = env.home / ".ssh" / "id_rsa"
    assert denies(["Read(~/.ssh/**)"], read(str(secret)), env)
    assert denies(["Read(~/.ssh/**)"], read("~/.ssh/id_rsa"), env)
    assert denies([f"Read(/{env.home}/.ssh/**)"], read(str(secret)), env)  # //abs form
    assert denies(["Read(//etc/passwd)"], read("/etc/passwd"), env)
    assert not denies(["Read(//etc/passwd)"], read(str(env.cwd / "etc/passwd")), env)
    # /path is relative to the project (cwd), as in Claude Code, not to the filesystem root
    assert denies(["Edit(/build/**)"], edit("build/out.js"), env)
    assert not denies(["Edit(/build/**)"], edit("/build/out.js"), env)


def test_symlink_into_a_denied_directory_is_denied(env: MatchEnv) -> None:
    (env.cwd / "secrets").mkdir()
    (env.cwd / "secrets" / "k").write_text("x")
    (env.cwd / "innocent").symlink_to(env.cwd / "secrets")
    assert denies(["Read(secrets/**)"], read("innocent/k"), env)


def test_read_covers_glob_and_grep_edit_covers_write(env: MatchEnv) -> None:
    assert denies(["Read(secrets/**)"], ToolCall("Grep", {"pattern": "x", "path": "secrets/a"}), env)
    assert denies(["Read(secrets/**)"], ToolCall("Glob", {"pattern": "secrets/*.txt"}), env)
    assert denies(["Read(secrets/**)"], ToolCall("Grep", {"pattern": "x", "path": "secrets"}), env)
    assert not denies(["Read(secrets/key)"], ToolCall("Grep", {"pattern": "x", "path": "secrets"}), env)
    assert denies(["Read"], ToolCall("Glob", {"pattern": "*"}), env)
    assert denies(["Edit(docs/**)"], ToolCall("Write", {"file_path": "docs/new.md", "content": ""}), env)
    assert not denies(["Write"], edit("a.txt"), env)
    assert not denies(["Glob"], read("a.txt"), env)
    assert denies(["Glob"], ToolCall("Glob", {"pattern": "*"}), env)
    assert not denies(["Edit"], read("a.txt"), env)


def test_path_rule_needs_a_path(env: MatchEnv) -> None:
    assert not denies(["Edit(**)"], ToolCall("Edit", {}), env)
    assert denies(["Edit"], ToolCall("Edit", {}), env)


# ------------------------------------------------------------------------------------------------------- MCP


def mcp(name: str) -> ToolCall:
    return ToolCall(name, {})


def test_mcp_rule_forms_without_lookup(env: MatchEnv) -> None:
    assert allows(["mcp__github"], mcp("mcp__github__create_issue"), env)
    assert allows(["mcp__github__*"], mcp("mcp__github__create_issue"), env)
    assert allows(["mcp__github__create_issue"], mcp("mcp__github__create_issue"), env)
    assert not allows(["mcp__github__create_issue"], mcp("mcp__github__delete_repo"), env)
    assert not allows(["mcp__git"], mcp("mcp__github__create_issue"), env)
    assert not allows(["mcp__github"], mcp("mcp__githubx__t"), env)
    assert not allows(["mcp__github"], bash("ls"), env)
    assert not allows(["Bash"], mcp("mcp__github__t"), env)
    assert allows(["mcp__github__get_*"], mcp("mcp__github__get_issue"), env)


def test_mcp_server_names_with_double_underscores_use_the_lookup(tmp_path: Path) -> None:
    servers = {"mcp__my__server__search": "my__server", "mcp__my__tool": "my"}
    env = MatchEnv(cwd=tmp_path, home=tmp_path, server_of=servers.get)
    assert allows(["mcp__my__server"], mcp("mcp__my__server__search"), env)
    assert allows(["mcp__my__server__*"], mcp("mcp__my__server__search"), env)
    # server "my" does not own server "my__server"'s tools, though the names share a prefix
    assert not allows(["mcp__my"], mcp("mcp__my__server__search"), env)
    assert not allows(["mcp__my__*"], mcp("mcp__my__server__search"), env)
    assert allows(["mcp__my"], mcp("mcp__my__tool"), env)
    # the exact qualified name always works
    assert allows(["mcp__my__server__search"], mcp("mcp__my__server__search"), env)
    assert denies(["mcp__my__server"], mcp("mcp__my__server__search"), env)


def test_mcp_lookup_knows_the_real_server_name(tmp_path: Path) -> None:
    # a server configured as "my.server" is qualified with "_"; the rule may use the configured name
    env = MatchEnv(cwd=tmp_path, home=tmp_path, server_of={"mcp__my_server__t": "my.server"}.get)
    assert allows(["mcp__my.server"], mcp("mcp__my_server__t"), env)


def test_real_builtin_argument_name_path(env: MatchEnv) -> None:
    # the file tools take Claude Code's `file_path`, and it is the one key the rules read (the tool's schema rejects
    # any other key before the gate runs, so a second path key can never be checked while the first is opened)
    assert not denies(["Read(.env)"], ToolCall("Read", {"path": ".env"}), env)
    assert denies(["Edit(docs/**)"], ToolCall("Edit", {"file_path": "docs/a.md"}), env)
    assert denies(["Read(.env)"], ToolCall("Read", {"file_path": ".env"}), env)
    assert allows(["Edit(src/**)"], ToolCall("Write", {"file_path": "src/x.py", "content": ""}), env)
