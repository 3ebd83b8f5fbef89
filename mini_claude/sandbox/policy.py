"""What a sandboxed command may touch, independent of how a platform enforces it.

- reads: the whole file system, except the user's secret places (`SECRET_HOME_PATHS` under the home folder, the
  agent's state folder), which look empty;
- writes: only the working folder, the added folders and a private temporary folder (the command's /tmp), minus
  the protected paths at the top of each writable folder (`PROTECTED_NAMES`, `.git/config`, `.git/hooks`, and a
  whole `.git` that does not exist yet), which stay read-only;
- network: none, or only through the agent's proxy (which admits the allowed domains).

The lists follow permissions/boundaries.py (what the gate asks about for the file tools), kept here because this
package sits below permissions/.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["PLACEHOLDER_NAMES", "PROTECTED_GIT", "PROTECTED_NAMES", "SECRET_HOME_PATHS", "Protected", "SandboxPolicy"]

# Under the home folder: credentials and logins, unreadable inside the sandbox.
SECRET_HOME_PATHS = (
    ".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker/config.json", ".config/gcloud", ".config/gh",
    ".config/hub", ".netrc", ".git-credentials", ".npmrc", ".pypirc", ".password-store", ".vault-token",
    ".claude.json", ".claude/.credentials.json", ".terraform.d/credentials.tfrc.json", ".cargo/credentials",
    ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml", ".config/mini-claude",
)
# At the top of every writable folder: what configures code execution or the agent. Read-only inside.
PROTECTED_NAMES = (
    ".claude", ".mcp.json", "CLAUDE.md", "CLAUDE.local.md", ".vscode", ".idea", ".husky", ".githooks",
    ".devcontainer", ".gitmodules", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook-local.yml",
    ".envrc",
)
# Of those, the ones a command could create to take effect later (the agent's own configuration and memory): when
# missing, a read-only placeholder stands there during the run. The others are protected only when they exist.
PLACEHOLDER_NAMES = frozenset({".claude", ".mcp.json", "CLAUDE.md", "CLAUDE.local.md"})
# Inside an existing `.git` folder (git runs what these name); a missing `.git` is protected whole.
PROTECTED_GIT = ("config", "hooks", "info")
_DIR_NAMES = frozenset({".claude", ".vscode", ".idea", ".husky", ".githooks", ".devcontainer", ".git", "hooks",
                        "info"})


@dataclass(frozen=True)
class Protected:
    """One read-only path inside a writable folder. `exists`: it is there now; else a placeholder (an empty file or
    folder, `is_dir`) is made for the command's run so nothing can be created there, and removed afterwards."""

    path: Path
    exists: bool
    is_dir: bool


@dataclass(frozen=True)
class SandboxPolicy:
    """One command's confinement. `tmp_dir` is the host folder seen as /tmp inside; `proxy_socket` the agent's
    proxy (None: no network at all)."""

    writable: tuple[Path, ...]
    home: Path
    state_dir: Path | None
    tmp_dir: Path
    proxy_socket: Path | None = None
    proxy_port: int = 3128

    def secrets(self) -> list[Path]:
        """The secret places that exist now (a missing one has nothing to hide)."""
        found = [self.home / rel for rel in SECRET_HOME_PATHS]
        if self.state_dir is not None:
            found.append(self.state_dir)
        return [path for path in found if path.exists() or path.is_symlink()]

    def protected(self) -> list[Protected]:
        """The protected paths of every writable folder, existing or not."""
        found: list[Protected] = []
        for root in self.writable:
            for name in PROTECTED_NAMES:
                item = _protected(root / name, name in _DIR_NAMES)
                if item.exists or name in PLACEHOLDER_NAMES:
                    found.append(item)
            git = root / ".git"
            if git.is_dir():
                found.extend(_protected(git / name, name in _DIR_NAMES) for name in PROTECTED_GIT)
            elif git.exists() or git.is_symlink():  # a worktree's `.git` file names the real repository
                found.append(Protected(git, True, False))
            else:
                found.append(Protected(git, False, True))
        return found


def _protected(path: Path, is_dir: bool) -> Protected:
    exists = path.exists() or path.is_symlink()
    return Protected(path, exists, path.is_dir() if exists else is_dir)
