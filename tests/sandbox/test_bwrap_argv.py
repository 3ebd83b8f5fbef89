"""The bwrap command line built from a policy, the Seatbelt profile text, and the sandbox settings' merge."""

from __future__ import annotations

import sys
from pathlib import Path

from mini_claude.sandbox.bwrap import PROXY_SOCKET_INSIDE, bwrap_argv, find_bwrap
from mini_claude.sandbox.config import SandboxConfig, merge_sandbox
from mini_claude.sandbox.policy import SandboxPolicy
from mini_claude.sandbox.seatbelt import seatbelt_profile


def pairs(argv: list[str], flag: str, arity: int = 2) -> list[tuple[str, ...]]:
    return [tuple(argv[i + 1:i + 1 + arity]) for i, word in enumerate(argv) if word == flag]


def policy_of(place: dict[str, Path], **kw: object) -> SandboxPolicy:
    tmp = place["state"].parent / "sbx" / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    return SandboxPolicy((place["work"],), place["home"], place["state"], tmp, **kw)  # type: ignore[arg-type]


def test_the_whole_policy_on_the_command_line(place: dict[str, Path]) -> None:
    place["state"].mkdir()
    policy = policy_of(place)
    work, home = place["work"], place["home"]
    argv = bwrap_argv("/x/bwrap", policy, ["bash", "-c", "true"], cwd=work)
    assert argv[0] == "/x/bwrap" and argv[-3:] == ["bash", "-c", "true"]
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent"):
        assert flag in argv
    assert "--new-session" not in argv  # the command stays in the caller's process group
    assert pairs(argv, "--ro-bind")[0] == ("/", "/")
    assert (str(policy.tmp_dir), "/tmp") in pairs(argv, "--bind")
    assert ("/run",) in pairs(argv, "--tmpfs", 1)  # services' unix sockets are not reachable
    assert (str(work), str(work)) in pairs(argv, "--bind")
    ro = pairs(argv, "--ro-bind")
    for inside in (".git/config", ".git/hooks"):
        assert (str(work / inside), str(work / inside)) in ro
    # missing: a placeholder stands there, an empty folder (git ignores it; a /dev/null file would stop `git add -A`)
    empty = str(policy.tmp_dir.parent / "empty")
    for name in (".mcp.json", "CLAUDE.md", ".envrc", ".gitmodules", ".husky", "lefthook.yml"):
        assert (empty, str(work / name)) in ro
    # a repository's top gets no `HEAD` placeholder (`git log HEAD` would be ambiguous) but a socket `refs`, made by
    # the runtime: not made here, so not bound
    assert not any(target in (str(work / "HEAD"), str(work / "refs")) for _, target in ro)
    assert (str(policy.tmp_dir.parent / "empty-file"), str(work / ".git/config.worktree")) in ro  # git reads it
    assert any(target == str(work / ".claude") for _, target in ro)
    assert ("/dev/null", str(home / ".netrc")) in ro  # a secret file reads empty
    assert (str(home / ".ssh"),) in pairs(argv, "--tmpfs", 1)  # a secret folder looks empty
    assert (str(place["state"]),) in pairs(argv, "--tmpfs", 1)
    assert (str(home / ".aws"),) not in pairs(argv, "--tmpfs", 1)  # missing: nothing to hide
    # order: the writable folder is bound before what is made read-only or hidden inside it
    assert argv.index(str(work)) < argv.index(str(work / ".git/config"))
    assert pairs(argv, "--chdir", 1) == [(str(work),)]
    assert PROXY_SOCKET_INSIDE not in argv


def test_a_proxy_adds_its_socket_and_the_forwarder(place: dict[str, Path]) -> None:
    policy = policy_of(place, proxy_socket=Path("/run/x/proxy.sock"), proxy_port=4000)
    argv = bwrap_argv("bwrap", policy, ["bash", "-c", "true"], cwd=place["work"])
    assert ("/run/x/proxy.sock", PROXY_SOCKET_INSIDE) in pairs(argv, "--bind")
    tail = argv[argv.index("--", argv.index("--chdir")) + 1:]
    assert tail[0] == sys.executable and tail[3].endswith("forwarder.py")
    assert tail[4:] == [PROXY_SOCKET_INSIDE, "4000", "--", "bash", "-c", "true"]


def test_a_worktree_git_file_is_read_only_and_a_missing_git_gets_a_placeholder(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / ".git").write_text("gitdir: /elsewhere\n")
    policy = SandboxPolicy((a, b), tmp_path / "home", None, tmp_path / "t")
    ro = pairs(bwrap_argv("bwrap", policy, ["true"], cwd=a), "--ro-bind")
    assert (str(a / ".git"), str(a / ".git")) in ro
    assert any(target == str(b / ".git") for _, target in ro)
    assert any(target == str(b / "HEAD") for _, target in ro)  # not a repository: a `HEAD` placeholder


def test_find_bwrap_honours_the_variable_then_the_wheel() -> None:
    assert find_bwrap({"MINI_CLAUDE_BWRAP": "/opt/bw"}) == "/opt/bw"
    found = find_bwrap({"PATH": ""})
    assert found is None or found.endswith("bwrap")


def test_seatbelt_profile_holds_the_same_policy(place: dict[str, Path]) -> None:
    policy = policy_of(place)
    text = seatbelt_profile(policy, proxy_port=3999)
    work, home = place["work"], place["home"]
    assert text.startswith("(version 1)\n(deny default)")
    assert f'(allow file-write* (subpath "{policy.tmp_dir}") (subpath "{work}"))' in text
    assert f'(subpath "{work / ".git/hooks"}")' in text and f'(literal "{work / ".git/commondir"}")' in text
    assert f'(subpath "{work / ".mcp.json"}")' in text and f'(literal "{work / "refs"}")' in text  # file or folder
    deny_read = next(line for line in text.splitlines() if line.startswith("(deny file-read*"))
    assert f'(subpath "{home / ".ssh"}")' in deny_read and f'(subpath "{home / ".aws"}")' in deny_read
    assert '(allow network-outbound (remote tcp "localhost:3999"))' in text
    assert "network-outbound" not in seatbelt_profile(policy)
    # the denials come after the allowances (Seatbelt: the last matching rule wins)
    assert text.index("(deny file-write*") > text.index("(allow file-write*")


def test_a_quote_in_a_path_cannot_end_the_profile_string(tmp_path: Path) -> None:
    odd = tmp_path / 'we"ird'
    text = seatbelt_profile(SandboxPolicy((odd,), tmp_path, None, tmp_path / "t"))
    assert '(subpath "' + str(odd).replace('"', '\\"') + '")' in text


def merged(*layers: tuple[dict[str, object], bool]) -> tuple[SandboxConfig, list[str]]:
    problems: list[str] = []
    config = SandboxConfig()
    for raw, trusted in layers:
        config = merge_sandbox(config, raw, trusted=trusted, bad=lambda key, message: problems.append(key))
    return config, problems


def test_the_user_may_set_anything() -> None:
    config, problems = merged(({"enabled": True, "autoAllowBashIfSandboxed": False, "excludedCommands": ["docker"],
                                "network": {"allowedDomains": ["PyPI.org", "*.github.com"]}}, True))
    assert problems == []
    assert config.is_enabled and not config.auto_allows and config.excluded_commands == ("docker",)
    assert config.allowed_domains == ("pypi.org", "*.github.com")


def test_a_repository_may_turn_it_on_and_narrow_it_but_never_widen_it() -> None:
    user = ({"enabled": True, "network": {"allowedDomains": ["a.com", "b.com"]}}, True)
    repo = ({"enabled": False, "autoAllowBashIfSandboxed": False, "allowUnsandboxedCommands": True,
             "excludedCommands": ["curl"],
             "network": {"allowedDomains": ["a.com", "evil.com"], "allowLocalBinding": True,
                         "allowUnixSockets": ["/var/run/docker.sock"], "httpProxyPort": 8080}}, False)
    config, problems = merged(user, repo)
    assert config.is_enabled  # not turned off
    assert not config.auto_allows  # stricter: kept
    assert config.excluded_commands == () and config.allowed_domains == ("a.com",)
    assert config.allow_local_binding is None and config.allow_unix_sockets == () and config.http_proxy_port is None
    assert set(problems) == {"sandbox.enabled", "sandbox.excludedCommands", "sandbox.network.allowedDomains",
                             "sandbox.network.allowLocalBinding", "sandbox.network.allowUnixSockets",
                             "sandbox.network.httpProxyPort"}
    on, _ = merged(({"enabled": True, "allowUnsandboxedCommands": False, "network": {"allowedDomains": ["x.org"]}},
                    False))
    assert on.is_enabled and not on.unsandboxed_allowed
    assert on.allowed_domains is None and not on.network_on  # a repository cannot open the network


def test_bad_values_are_named() -> None:
    config, problems = merged(({"enabled": "yes", "excludedCommands": "docker", "network": []}, True))
    assert not config.is_enabled
    assert problems == ["sandbox.enabled", "sandbox.excludedCommands", "sandbox.network"]
    _, problems = merged(([], True))
    assert problems == ["sandbox"]
