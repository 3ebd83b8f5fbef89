"""The lists of the user's secret places and of the names that configure code execution, in one place for the two
walls that use them: the permission gate (permissions/boundaries.py: which paths a file tool needs consent for) and
the OS sandbox (sandbox/policy.py: what a confined command cannot read or write). It sits in the sandbox package,
the lower of the two (the gate imports the sandbox, never the other way); it imports nothing.
"""

from __future__ import annotations

__all__ = ["HOME_PROTECTED", "HOME_PROTECTED_DIRS", "HOME_SECRETS", "PROTECTED_DIRS", "PROTECTED_FILES",
           "RUNS_BY_ITSELF", "SECRET_NAMES", "SECRET_SUFFIXES"]

# Under the user's home: credentials, logins, keys and the histories that hold typed passwords (read or written only
# with consent; hidden inside the sandbox).
HOME_SECRETS = (
    ".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker/config.json", ".config/gcloud", ".config/gh",
    ".config/hub", ".netrc", ".git-credentials", ".npmrc", ".pypirc", ".password-store", ".vault-token",
    ".claude.json", ".claude/.credentials.json", ".terraform.d/credentials.tfrc.json", ".cargo/credentials",
    ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml",
    ".pgpass", ".my.cnf", ".s3cfg", ".env", ".boto", ".config/git/credentials", ".huggingface/token",
    ".cache/huggingface/token", ".pulumi/credentials.json", ".config/sops/age/keys.txt", ".oci/config",
    ".databrickscfg", ".config/rclone", ".config/doctl", ".config/vercel", ".netlify", ".config/netlify",
    ".config/hcloud", ".config/op", ".config/heroku", ".mozilla/firefox", ".bash_history", ".zsh_history",
    ".python_history", ".psql_history", ".mysql_history", ".sqlite_history", ".node_repl_history",
    ".local/share/fish/fish_history",
)
# Under the user's home: what runs at shell or agent start-up.
HOME_PROTECTED = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
    ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc", ".config/fish", ".inputrc", ".gitconfig",
    ".config/git", ".claude", ".config/autostart", ".config/systemd", ".local/bin", ".pythonrc", ".pythonstartup",
)
# Of those, the folders.
HOME_PROTECTED_DIRS = frozenset({".config/fish", ".config/git", ".claude", ".config/autostart", ".config/systemd",
                                 ".local/bin"})
# A path component with one of these names makes the path protected (anywhere: in the project or elsewhere).
PROTECTED_DIRS = frozenset({".git", ".claude", ".vscode", ".idea", ".husky", ".githooks", ".devcontainer"})
PROTECTED_FILES = frozenset({
    ".mcp.json", "CLAUDE.md", "CLAUDE.local.md", ".gitmodules", ".pre-commit-config.yaml", "lefthook.yml",
    ".lefthook.yml", "lefthook-local.yml", ".bashrc", ".bash_profile", ".profile", ".zshrc", ".zshenv",
    ".zprofile", ".gitconfig", "HEAD",
})
# Secret wherever they lie.
SECRET_NAMES = frozenset({
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", ".envrc", ".netrc", ".pgpass",
    ".my.cnf", ".s3cfg", ".git-credentials", ".npmrc", ".pypirc", ".vault-token",
})
SECRET_SUFFIXES = (".env", ".pem", ".key", ".p12", ".pfx")
# At the top of a folder, the names that take effect by merely existing — run by a tool the user runs there next
# (direnv, git and its hook managers) or read by the agent — so the sandbox keeps them from being created: `HEAD`
# makes the folder a bare repository for git.
RUNS_BY_ITSELF = frozenset({".envrc", ".husky", ".githooks", ".gitmodules", ".pre-commit-config.yaml", "lefthook.yml",
                            ".lefthook.yml", "lefthook-local.yml", "HEAD", ".claude", ".mcp.json", "CLAUDE.md",
                            "CLAUDE.local.md", ".vscode", ".idea", ".devcontainer"})
