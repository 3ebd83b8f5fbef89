"""How some programs read their arguments, far enough to tell whether they run code: git (options/git.py reads
its options), awk and sed scripts (script_langs.py), find -exec, ssh options, and the builtins that
take variable names (a subscript there is arithmetic that can run code). Also which variable assignments change
what runs. code_runners.py holds the table that sends each program here, and what it all means for rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mini_claude.permissions.options.git import git_findings
from mini_claude.permissions.options.spec import Effect
from mini_claude.permissions.script_langs import awk_runs_code, awk_writes, sed_effects

__all__ = [
    "Argv",
    "Risk",
    "awk_risks",
    "builtin_risks",
    "env_risk",
    "find_risks",
    "git_risks",
    "name_arg_risks",
    "opt",
    "sed_risks",
    "ssh_risks",
]

Argv = Sequence[str | None]


@dataclass(frozen=True)
class Risk:
    """One way a command runs code. `index`: the argv word that makes it so (`len(argv)` when the code comes from
    stdin). `hidden`: deny rules cannot see what runs (False: the command it runs is a visible word list, which deny
    rules look through, or it only writes files). `stdin`: the code is read from stdin (shell.py knows whether that
    is a heredoc it can read)."""

    index: int
    why: str
    hidden: bool = True
    stdin: bool = False


_SSH_CODE_OPTIONS = re.compile(r"^(?:proxycommand|localcommand|permitlocalcommand|knownhostscommand|match"
                               r"|remotecommand|include|pkcs11provider|securitykeyprovider|sshaskpass)", re.I)
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITES = frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
# Variables whose value is code (or names the program that runs): assigning them changes what runs.
_CODE_VARS = frozenset({
    "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "PATH", "SHELLOPTS", "BASHOPTS",
    "BASH_LOADABLES_PATH", "EXECIGNORE", "HOME", "XDG_CONFIG_HOME", "PAGER", "MANPAGER", "EDITOR", "VISUAL",
    "BROWSER", "SHELL", "LESSOPEN", "LESSCLOSE", "LESSKEY", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
    "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "TAR_OPTIONS",
    "SSH_ASKPASS", "SUDO_ASKPASS", "CC", "CXX", "LDFLAGS", "CFLAGS", "MAKEFLAGS", "MAKEFILES", "TERMINFO",
    "TMPDIR", "IFS", "GLOBIGNORE", "CDPATH", "BASH_XTRACEFD", "FUNCNEST", "PROMPT_DIRTRIM", "INPUTRC",
    "HISTFILE", "HOSTALIASES", "GCONV_PATH", "LOCPATH", "NLSPATH", "RESOLV_HOST_CONF", "MANOPT", "GROFF_COMMAND",
    "PIP_CONFIG_FILE", "NPM_CONFIG_SCRIPT_SHELL", "npm_config_script_shell", "COMP_WORDBREAKS",
    # option files and variables of programs with option tables: they can hold a code-running option
    "RIPGREP_CONFIG_PATH", "WGETRC", "SYSTEM_WGETRC", "CURL_HOME", "ZIPOPT", "ZIP", "UNZIP", "UNZIPOPT",
    "ZIPINFO", "ZIPINFOOPT",
    "SIMPLE_BACKUP_SUFFIX",  # names the backups cp / mv / ln / install -b write (`.md`: CLAUDE -> CLAUDE.md)
})
_CODE_VAR_PREFIXES = ("GIT_", "LD_", "DYLD_", "BASH_FUNC_", "PS", "NPM_CONFIG_", "npm_config_", "PIP_", "CARGO_",
                      "RUSTC", "GOFLAGS", "PYTHON", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")


def env_risk(name: str) -> str | None:
    """Why assigning the variable `name` (for a command, or exported) may change what runs, else None."""
    if name in _CODE_VARS or name.startswith(_CODE_VAR_PREFIXES):
        return f"an assignment to {name} can make bash or a program run code from it"
    return None


def opt(word: str | None) -> str:
    return "<unknown>" if word is None else word.split("=", 1)[0]


def find_risks(argv: Argv, i: int) -> tuple[list[Risk], list[int]]:
    """The risks of `find`'s own options, and where each command it runs (`-exec cmd ... ;`) starts."""
    risks: list[Risk] = []
    tails: list[int] = []
    for k in range(i + 1, len(argv)):
        a = argv[k]
        if a is None:
            risks.append(Risk(k, "find gets an argument the gate cannot know (it may be -exec)"))
        elif a in _FIND_EXEC:
            nxt = argv[k + 1] if k + 1 < len(argv) else None
            hidden = nxt is None or "{}" in nxt
            why = f"find {a} runs a command" if not hidden else \
                f"find {a} runs a command whose name the gate cannot know" if nxt is None else \
                f"find {a} runs a command named by a file it found"
            risks.append(Risk(k, why, hidden=hidden))
            tails.append(k + 1)
        elif a in _FIND_WRITES:
            risks.append(Risk(k, f"find {a} writes or deletes files", hidden=False))
    return risks, tails


def git_risks(argv: Argv, i: int) -> list[Risk]:
    """git's options read the way git reads them (options/git.py): an option that runs code, or one the gate
    cannot resolve (unknown, ambiguous, not known when the gate reads it), is a hidden risk. An option that writes
    a file is no risk here: writes.py hands its path to the gate's judging of writes (options.option_writes), as
    for every other program, and a path it cannot know makes the command opaque."""
    return [Risk(f.index, f.why) for f in git_findings(argv, i) if f.effect in (Effect.CODE, Effect.UNKNOWN)]


def awk_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    args = argv[i + 1:]
    program: str | None = None
    k = 0
    while k < len(args):
        a = args[k]
        if a is None:
            return [Risk(i + 1 + k, f"{name} gets an argument the gate cannot know (it may be the program)")]
        if a in ("-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load", "-W") or \
                a.startswith(("-f", "--file=", "-E", "--exec=", "-i", "--include=", "-l", "--load=", "-W")):
            return [Risk(i + 1 + k, f"{name} {opt(a)} runs a program from a file")]
        if a in ("-e", "--source"):
            program = (program or "") + "\n" + (args[k + 1] or "") if k + 1 < len(args) and args[k + 1] else None
            if program is None:
                return [Risk(i + 1 + k, f"{name} gets a program the gate cannot know")]
            k += 2
            continue
        if a.startswith("--source=") or (a.startswith("-e") and len(a) > 2):  # the program text attached
            program = (program or "") + "\n" + a.split("=", 1)[1] if a.startswith("--") else (program or "") + \
                "\n" + a[2:]
            k += 1
            continue
        if a in ("-v", "-F", "--assign", "--field-separator"):
            k += 2
            continue
        if a == "--":
            k += 1
            if program is None and k < len(args):
                program = args[k]
            break
        if a.startswith("-"):
            k += 1
            continue
        if program is None:
            program = a
        break
    if program is not None and awk_runs_code(program):
        return [Risk(i + 1 + min(k, len(args) - 1), f"{name} runs a program that can start commands "
                                                    "(system, pipes, getline)")]
    if program is not None and awk_writes(program):  # the file's name is in the program: no rule can judge it
        return [Risk(i + 1 + min(k, len(args) - 1), f"{name} runs a program that writes files (print > file)",
                     hidden=False)]
    return []


def sed_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    args = argv[i + 1:]
    scripts: list[tuple[int, str]] = []
    risks: list[Risk] = []
    k = 0
    sandbox = "--sandbox" in args
    operands_only = False
    while k < len(args):
        a, j = args[k], i + 1 + k
        k += 1
        if a is None:
            return [*risks, Risk(j, f"{name} gets an argument the gate cannot know (it may be a script)")]
        if operands_only or not a.startswith("-") or a == "-":
            if not scripts and not any(r.why.endswith("from a file") for r in risks):
                scripts.append((j, a))
        elif a == "--":
            operands_only = True
        elif a.startswith("--"):
            option, _, value = a.partition("=")
            if option == "--expression":
                if not value and k < len(args):
                    value, k = args[k] or "", k + 1
                scripts.append((j, value))
            elif option == "--file":
                risks.append(Risk(j, f"{name} --file runs a script from a file"))
            elif option == "--in-place":
                risks.append(Risk(j, f"{name} {a} edits files in place", hidden=False))
            elif option == "--line-length" and not value:
                k += 1
        else:
            # a cluster of short options: `-ne script`, `-e'1e cmd'`, `-i.bak`, `-l 80`
            for c, letter in enumerate(a[1:], start=1):
                rest = a[c + 1:]
                if letter in "ef":
                    script: str | None = rest
                    if not rest and k < len(args):
                        script, k = args[k], k + 1
                    if letter == "f" or script is None:
                        risks.append(Risk(j, f"{name} -{letter} runs a script from a file" if letter == "f"
                                          else f"{name} gets a script the gate cannot know"))
                    else:
                        scripts.append((j, script))
                    break
                if letter == "i":
                    risks.append(Risk(j, f"{name} {a} edits files in place", hidden=False))
                    break
                if letter == "l":
                    if not rest:
                        k += 1
                    break
                if letter not in "nrEsuz":
                    risks.append(Risk(j, f"{name} {a}: an option the gate does not know"))
                    break
    for index, script in scripts:
        effects = sed_effects(script)
        if effects is None or "code" in effects:
            if not sandbox:
                risks.append(Risk(index, f"{name} runs a script that can start commands (the e command or flag)"))
        elif "write" in effects and not sandbox:
            risks.append(Risk(index, f"{name} runs a script that writes files (the w command or flag)",
                              hidden=False))
    return risks


def ssh_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    args = argv[i + 1:]
    risks: list[Risk] = []
    k = 0
    while k < len(args):
        a = args[k]
        j = i + 1 + k
        if a is None:
            return [*risks, Risk(j, f"{name} gets an argument the gate cannot know")]
        if a in ("-o", "-F", "-S", "-D", "-L", "-R", "-W", "-J", "-i", "-l", "-p", "-P", "-b", "-c", "-E", "-e",
                 "-I", "-m", "-O", "-Q", "-w", "-B") and k + 1 < len(args):
            value = args[k + 1]
            if a == "-o" and (value is None or _SSH_CODE_OPTIONS.match(value)):
                risks.append(Risk(j, f"{name} -o can set a command to run (ProxyCommand, ...)"))
            elif a in ("-F", "-S") or (a == "-b" and name == "sftp"):
                risks.append(Risk(j, f"{name} {a} names a file or program that can run commands"))
            k += 2
            continue
        if a.startswith("-o") and _SSH_CODE_OPTIONS.match(a[2:]):
            risks.append(Risk(j, f"{name} -o can set a command to run (ProxyCommand, ...)"))
        elif a.startswith(("-F", "-S")) and len(a) > 2:
            risks.append(Risk(j, f"{name} {a[:2]} names a file or program that can run commands"))
        elif not a.startswith("-"):
            if name in ("ssh", "slogin") and k + 1 < len(args):
                risks.append(Risk(j + 1, f"{name} runs a command on {a}"))
            break
        k += 1
    return risks


def builtin_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    args = argv[i + 1:]
    if name == "let":
        return [Risk(i + 1, "let evaluates arithmetic: a variable's value can run code")] if args else []
    if name == "enable":
        return [Risk(i + 1, "enable loads or hides builtins")] if any(a is None or a not in ("-a", "-p", "-s")
                                                                      for a in args) else []
    if name == "fc":
        return [Risk(i, "fc re-runs history or runs an editor")]
    flags = {"bind": "x", "complete": "C", "compgen": "C", "mapfile": "C", "readarray": "C"}[name]
    risks = [Risk(i + 1 + k, f"{name} -{flags} runs a command") for k, a in enumerate(args)
             if a is None or (a.startswith("-") and not a.startswith("--") and flags in a[1:])]
    if name in ("mapfile", "readarray"):
        risks += name_arg_risks(name, argv, i)
    return risks


def name_arg_risks(name: str, argv: Argv, i: int) -> list[Risk]:
    """Builtins that take variable names: a name with a subscript (`a[$(cmd)]`) is arithmetic that runs the
    substitution; so does `declare -i`/`-n` with a value from data, and `test -v`. Every word of these builtins
    (but printf's and test's operands) is read as a possible name: bash's option parser takes `-va[…]` too."""
    risks: list[Risk] = []
    args = list(argv[i + 1:])
    names: list[tuple[int, str | None]] = []
    if name in ("test", "["):
        names = [(k + 1, args[k + 1] if k + 1 < len(args) else None) for k, a in enumerate(args) if a == "-v"]
    elif name in ("printf", "wait"):
        flag = "-v" if name == "printf" else "-p"
        for k, a in enumerate(args):
            if a is None:  # an option word the gate cannot know may be `-v<name>`
                names.append((k, None))
                break
            if not a.startswith("-") or a == "--":
                break
            if a.startswith(flag) or (name == "wait" and a.startswith("-") and "p" in a):
                names.append((k, a[2:]) if len(a) > 2 and a.startswith(flag)
                             else (k + 1, args[k + 1] if k + 1 < len(args) else None))
    else:
        for k, a in enumerate(args):
            if a is not None and re.match(r"^[-+][a-zA-Z]*[ni]", a) and name in ("declare", "typeset", "local"):
                risks.append(Risk(i + 1 + k, f"{name} {a} evaluates values as names or arithmetic"))
            names.append((k, a))
    for k, word in names:
        target = word.split("=", 1)[0] if word is not None else None
        if target is None or "[" in target:
            risks.append(Risk(i + 1 + k, f"{name} gets a variable name with a subscript, or one the gate cannot "
                                         "know: a subscript is arithmetic that can run code"))
        elif name in ("declare", "typeset", "local", "readonly", "export"):
            why = env_risk(target)
            if why and (name == "export" or "=" in (word or "")):
                risks.append(Risk(i + 1 + k, why))
    return risks
