"""PathPattern agrees with git: for generated gitignore-style rule patterns and a real tree of files and folders in
a scratch repository, a rule matches a path exactly when `git check-ignore` says a `.gitignore` holding that
pattern ignores it (real `git`, hypothesis-generated patterns)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mini_claude.errors import ConfigError
from mini_claude.permissions import MatchEnv, parse_rule
from mini_claude.permissions.paths import PathPattern
from tests.helpers import require_program

pytestmark = pytest.mark.timeout(300)

GENERATED_PATTERNS = 400

NAMES = ["a", "b", "ab", "ba", ".env", "x.env", "a.md", "b-1"]
# pattern pieces: literals, wildcards, classes (no `!`/`#` at the start: a rule has no negation or comments)
PIECES = ["a", "b", "ab", ".env", "x", "md", "-1", ".", "*", "**", "?", "[ab]", "[!a]", "[a-b]", "\\*"]


def build_tree(root: Path) -> list[str]:
    """Files and folders three levels deep (folders at each level hold files of the same names)."""
    paths: list[str] = []

    def fill(folder: Path, rel: str, depth: int) -> None:
        for i, name in enumerate(NAMES):
            path_rel = f"{rel}{name}"
            if depth < 2 and i % 2 == 0:
                (folder / name).mkdir()
                paths.append(path_rel)
                fill(folder / name, path_rel + "/", depth + 1)
            else:
                (folder / name).write_text("x")
                paths.append(path_rel)

    fill(root, "", 0)
    return paths


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str], str]]:
    git = require_program("git", "the gitignore property test compares with git check-ignore")
    root = tmp_path_factory.mktemp("gitrepo")
    subprocess.run([git, "init", "-q", str(root)], check=True)
    yield root, build_tree(root), git


def git_ignored(git: str, root: Path, pattern: str, paths: list[str]) -> set[str]:
    (root / ".gitignore").write_text(pattern + "\n")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}  # no user excludes file
    proc = subprocess.run([git, "-C", str(root), "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n"],
                          input="\0".join(paths) + "\0", capture_output=True, text=True, env=env, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    fields = proc.stdout.split("\0")
    # -z -v -n: source, line number, pattern, path (source empty when nothing matched)
    return {fields[i + 3] for i in range(0, len(fields) - 3, 4) if fields[i]}


patterns = st.builds(
    lambda lead, parts, trail: lead + "/".join(parts) + trail,
    st.sampled_from(["", "", "/", "**/"]),
    st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("".join), min_size=1, max_size=3),
    st.sampled_from(["", "", "/", "/**"]),
)


@settings(max_examples=GENERATED_PATTERNS, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=patterns)
def test_rule_matches_exactly_what_git_ignores(repo: tuple[Path, list[str], str], pattern: str) -> None:
    root, paths, git = repo
    assume(not pattern.startswith("./"))  # rule syntax: `./x` anchors at cwd (`/x` in a .gitignore)
    try:
        rule = PathPattern.parse(pattern)
    except ValueError:
        assume(False)  # `a**/b`: refused as ambiguous (test_ambiguous_double_star_is_refused)
        raise
    env = MatchEnv(cwd=root, home=root / "no-home")
    ours = {p for p in paths if rule.matches(p, env)}
    assert ours == git_ignored(git, root, pattern, paths), pattern


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("secrets/", "secrets", True), ("secrets/", "secrets/k", True), ("secrets/**", "secrets", False),
    ("*.env", "a/x.env", True), ("a/*.env", "b/a/x.env", False), ("**/a", "b/a", True), ("a", "b/a/c", True),
])
def test_known_gitignore_cases(tmp_path: Path, pattern: str, path: str, expected: bool) -> None:
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if pattern.endswith("/") and path.count("/") == 0:
        target.mkdir()
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x")
    env = MatchEnv(cwd=tmp_path, home=tmp_path / "h")
    assert PathPattern.parse(pattern).matches(path, env) is expected


@pytest.mark.parametrize("spec", ["a**/b", "src/***", "**.env"])
def test_ambiguous_double_star_is_refused(spec: str) -> None:
    # git lets a `**` inside a name cross folders, pathspec and the gitignore docs do not: refuse, never guess
    with pytest.raises(ConfigError) as info:
        parse_rule(f"Read({spec})", source="--disallowedTools")
    stars = "***" if "***" in spec else "**"
    assert str(info.value) == (f'--disallowedTools: invalid permission rule "Read({spec})": {stars!r} must be a '
                               "whole path segment (`a/**/b`); use `*` within a name")
