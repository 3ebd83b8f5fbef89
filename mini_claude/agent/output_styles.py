"""Output styles: how the agent answers and which role it takes, as Claude Code's `outputStyle` setting names them.

A style is the built-in `default` (the brief as it is: agent/brief.py), one of the other built-ins (Proactive,
Concise, Explanatory, Learning — Claude Code 2.1.328's set, instructions written here in our own words; each keeps
the coding instructions), or a Markdown file: `~/.claude/output-styles/*.md` (the user's) and
`.claude/output-styles/*.md` (the project's, which wins over the user's of the same name). Front matter: `name`
(else the file's name without `.md`), `description`, `keep-coding-instructions` (false when absent: the style
replaces the software-engineering part of the system prompt); the body is the style's instructions, added at the
end of the system prompt (agent/system_prompt.py).

Trust: a project's style is a repository's text that becomes system prompt, so `.claude/output-styles` is read only
in a trusted folder (`trusted=True`); otherwise its files are counted in `skipped` and named by `/output-style`. No
file may take a built-in's name, and a project file that leads outside the project (symlinks resolved) is not read,
trusted or not, as memory files and commands are not (a link to `~/.ssh/id_rsa` would be a style whose text is the
key). Files are read through jsonfile's bounded door and frontmatter's one YAML door; a
bad file is a warning, never a stop.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.claude_folders import markdown_files
from mini_claude.errors import ConfigError
from mini_claude.frontmatter import parse_frontmatter, split_frontmatter
from mini_claude.jsonfile import read_regular_text

__all__ = ["BUILTIN_STYLES", "DEFAULT_STYLE", "MAX_STYLE_FILE_BYTES", "OutputStyle", "StyleChoice",
           "find_style", "is_default", "load_output_styles"]

DEFAULT_STYLE = "default"
MAX_STYLE_FILE_BYTES = 64 * 1024
MAX_NAME_CHARS = 64


@dataclass(frozen=True)
class OutputStyle:
    """One style: its name, what the picker says of it, the instructions it adds, whether the coding part of the
    brief stays, and where it came from (`built-in`, `user`, `project`; `path` for a file)."""

    name: str
    description: str
    prompt: str
    keep_coding_instructions: bool = False
    source: str = "built-in"
    path: Path | None = None

    def origin(self) -> str:
        return f"{self.source}: {self.path}" if self.path is not None else self.source


_INSIGHT = ("Now and then, when a choice you make or a pattern in the code is worth understanding, add a short "
            "passage headed `Insight:` (two or three points) explaining it: why this approach, what the codebase "
            "does elsewhere, what to watch for. Keep insights about this code, not general programming lessons, "
            "and put them next to the work, not in place of it.")
BUILTIN_STYLES: tuple[OutputStyle, ...] = (
    OutputStyle("Proactive", "Acts at once on reasonable assumptions; asks only when a choice really matters",
                "Act rather than plan aloud. When a detail is unspecified but has an obvious sensible answer, take "
                "it, say in one line what you assumed, and carry on; stop to ask only when the choice is costly to "
                "undo or the readings lead to very different work. The permission rules still decide what runs "
                "without asking.", keep_coding_instructions=True),
    OutputStyle("Concise", "Short answers that lead with the result, without preamble or narration",
                "Lead with the result. Leave out preamble, narration of each step and closing summaries; a "
                "finished task gets one or two sentences on what changed. Use full sentences only where a list "
                "or a code block would not do.", keep_coding_instructions=True),
    OutputStyle("Explanatory", "Explains the choices it makes and the patterns of the codebase as it works",
                "The user wants to learn how this codebase works while you help. " + _INSIGHT,
                keep_coding_instructions=True),
    OutputStyle("Learning", "Learn by doing: it leaves small, meaningful pieces of code for you to write",
                "The user wants to learn by writing code themselves. " + _INSIGHT + " When a task contains a small "
                "piece that decides behaviour (a condition, a formula, a choice between designs, 2 to 10 lines), "
                "do not write it: leave a `TODO(human)` marker where it goes, then stop and ask the user to write "
                "it, saying what it must do and which trade-offs to weigh. Write the routine parts yourself.",
                keep_coding_instructions=True),
)
_BUILTIN_NAMES = frozenset(s.name.lower() for s in BUILTIN_STYLES) | {DEFAULT_STYLE}


@dataclass
class StyleChoice:
    """The styles a session knows and the one in force (`current`; None: default), which the system prompt reads
    before every request; `skipped`: project style files not loaded because the folder is not trusted."""

    styles: dict[str, OutputStyle] = field(default_factory=lambda: {s.name: s for s in BUILTIN_STYLES})
    current: OutputStyle | None = None
    skipped: list[Path] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.current.name if self.current is not None else DEFAULT_STYLE


def find_style(styles: Mapping[str, OutputStyle], wanted: str) -> OutputStyle | None:
    """The style named `wanted` (exactly, else ignoring case, as `/output-style explanatory` works in Claude Code);
    None for `default` and for a name not known (the caller tells the two apart with `is_default`)."""
    if wanted in styles:
        return styles[wanted]
    matches = [style for name, style in styles.items() if name.lower() == wanted.lower()]
    return matches[0] if matches else None


def is_default(name: str) -> bool:
    return name.strip().lower() == DEFAULT_STYLE


def load_output_styles(cwd: Path, home: Path, *, trusted: bool, sources: Collection[str] | None = None
                       ) -> tuple[StyleChoice, list[str]]:
    """The built-ins, then the user's style files, then the project's (in a trusted folder only), and one warning
    per file that could not be used. `sources`: the scopes read (`--setting-sources`; None: user and project)."""
    choice = StyleChoice()
    folders, warnings = markdown_files("output-styles", cwd, home, sources=sources)
    for source, paths in folders:
        if source == "project" and not trusted:
            choice.skipped.extend(paths)
            continue
        for path in paths:
            try:
                style = _read(path, source)
            except (OSError, ConfigError) as exc:
                warnings.append(f"{path}: {exc}" if not isinstance(exc, ConfigError) or not exc.file else str(exc))
                continue
            if style is None:
                continue
            if style.name.lower() in _BUILTIN_NAMES:
                warnings.append(f"{path}: an output style file may not take the built-in name {style.name!r}; "
                                "ignored (name it differently)")
                continue
            choice.styles[style.name] = style
    return choice, warnings


def _read(path: Path, source: str) -> OutputStyle | None:
    text = read_regular_text(path, str(path), max_bytes=MAX_STYLE_FILE_BYTES)
    if text is None:
        return None
    if text.lstrip("\ufeff").startswith("---"):
        meta = parse_frontmatter(text)
        _, body = split_frontmatter(text)
    else:  # no front matter: the file's name, and all of it is the instructions
        meta, body = {}, text
    name = meta.get("name", path.stem)
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_NAME_CHARS \
            or not name.strip().isprintable():
        raise ConfigError(f"front matter `name` must be a line of at most {MAX_NAME_CHARS} characters",
                          file=str(path), key="name")
    description = meta.get("description", "")
    if not isinstance(description, str):
        raise ConfigError("front matter `description` must be text", file=str(path), key="description")
    keep = meta.get("keep-coding-instructions", False)
    if isinstance(keep, str) and keep.strip().lower() in ("true", "false"):
        keep = keep.strip().lower() == "true"
    if not isinstance(keep, bool):
        raise ConfigError("front matter `keep-coding-instructions` must be true or false", file=str(path),
                          key="keep-coding-instructions")
    if not body.strip():
        raise ConfigError("the style has no instructions (the text after the front matter is empty)", file=str(path))
    return OutputStyle(name.strip(), " ".join(description.split()), body.strip(), keep, source, path)


