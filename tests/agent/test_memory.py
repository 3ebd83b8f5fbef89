"""Project memory (CLAUDE.md): which files, in which order, imports (relative, ~, absolute; depth; cycles), the
repository's imports kept inside the project (tests/integration/test_memory_cli.py: through `-p`)."""

from __future__ import annotations

from pathlib import Path

from mini_claude.agent.memory import MAX_IMPORT_DEPTH, append_memory_line, load_memory, project_root
from mini_claude.agent.system_prompt import build_system_prompt, git_branch


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, repo = tmp_path / "home", tmp_path / "repo"
    work = repo / "pkg" / "sub"
    work.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    (home / ".claude").mkdir(parents=True)
    return home, repo, work


def test_files_in_order_with_imports(tmp_path: Path) -> None:
    home, repo, work = _tree(tmp_path)
    (home / ".claude" / "CLAUDE.md").write_text("user prefs @~/notes/extra.md\n")
    (home / "notes").mkdir()
    (home / "notes" / "extra.md").write_text("user extra")
    (repo / "CLAUDE.md").write_text("root rules, see @docs/style.md and `@not/this.md`\n```\n@nor/this.md\n```\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "style.md").write_text("style: @../CLAUDE.md (a cycle) and @./deeper.md")
    (repo / "docs" / "deeper.md").write_text("deeper")
    (repo / "pkg" / "CLAUDE.local.md").write_text("my local notes")
    (work / ".claude").mkdir()
    (work / ".claude" / "CLAUDE.md").write_text("sub rules")
    (repo / ".claude" / "rules").mkdir(parents=True)
    (repo / ".claude" / "rules" / "b.md").write_text("rule b")
    (repo / ".claude" / "rules" / "a.md").write_text("rule a")
    memory = load_memory(work, home)
    assert [(f.path.relative_to(tmp_path).as_posix(), f.kind) for f in memory.files] == [
        ("home/.claude/CLAUDE.md", "user"), ("home/notes/extra.md", "import"),
        ("repo/CLAUDE.md", "project"), ("repo/docs/style.md", "import"), ("repo/docs/deeper.md", "import"),
        ("repo/pkg/CLAUDE.local.md", "local"), ("repo/pkg/sub/.claude/CLAUDE.md", "project"),
        ("repo/.claude/rules/a.md", "rule"), ("repo/.claude/rules/b.md", "rule")]
    assert memory.warnings == []
    assert project_root(work) == repo.resolve() and git_branch(work) == "feature/x"
    assert "- Git repository: yes (branch feature/x)" in build_system_prompt(work, branch=git_branch(work))
    reminder = memory.reminder()
    assert reminder.startswith("<system-reminder>\n") and reminder.endswith("\n</system-reminder>")
    assert "root rules" in reminder and "rule b" in reminder
    assert reminder.index("user prefs") < reminder.index("root rules") < reminder.index("sub rules")
    assert f"Contents of {repo / 'docs' / 'style.md'} (imported by {repo / 'CLAUDE.md'}):" in reminder
    assert f"Contents of {repo / 'pkg' / 'CLAUDE.local.md'} (the user's private instructions for this project):" \
        in reminder


def test_a_repository_cannot_import_files_outside_the_project(tmp_path: Path) -> None:
    home, repo, work = _tree(tmp_path)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    (tmp_path / "outside.md").write_text("outside text")
    (repo / "link.md").symlink_to(tmp_path / "outside.md")
    (repo / "CLAUDE.md").write_text("@~/.ssh/id_rsa @../outside.md @/etc/hostname @link.md")
    memory = load_memory(work, home)
    texts = " ".join(f.text for f in memory.files)
    assert "PRIVATE KEY" not in texts and "outside text" not in texts
    assert len(memory.warnings) == 4 and all("may import only files inside the project" in w
                                             for w in memory.warnings)


def test_imports_stop_at_the_depth_limit(tmp_path: Path) -> None:
    home, repo, work = _tree(tmp_path)
    for i in range(MAX_IMPORT_DEPTH + 2):
        (repo / f"m{i}.md").write_text(f"level {i} @m{i + 1}.md")
    (repo / "CLAUDE.md").write_text("@m0.md")
    memory = load_memory(work, home)
    assert len(memory.files) == 1 + MAX_IMPORT_DEPTH
    assert memory.warnings and "5 deep at most" in memory.warnings[0]


def test_hash_lines_are_appended_to_the_project_memory(tmp_path: Path) -> None:
    assert append_memory_line(tmp_path, "  use tabs ") == tmp_path / "CLAUDE.md"
    append_memory_line(tmp_path, "run make test")
    assert (tmp_path / "CLAUDE.md").read_text() == "- use tabs\n- run make test\n"


def test_a_repository_file_that_leads_outside_is_not_loaded(tmp_path: Path) -> None:
    home, repo, work = _tree(tmp_path)
    (tmp_path / "environ").write_text("ANTHROPIC_API_KEY=sk-secret")
    (repo / ".claude" / "rules").mkdir(parents=True)
    (repo / ".claude" / "rules" / "env.md").symlink_to(tmp_path / "environ")
    (repo / "CLAUDE.md").symlink_to(tmp_path / "environ")
    memory = load_memory(work, home)
    assert not memory.files and memory.reminder() == ""
    assert len(memory.warnings) == 2 and all("leads outside the project" in w for w in memory.warnings)
