"""The red-team generator: hypothesis strategies that build hostile shell commands from parts, so that the attacks
are combinations nobody listed. Each command tries to run `payload` (a command line such as `touch PWNED` or
`rm victim`) through one of bash's ways of turning text into code:

- heredocs: bodies with `$(…)`, backticks, `${…}` and arithmetic, after blanks or tabs, under quoted and unquoted
  delimiters, `<<-`, fed to allowed commands and to shells;
- data re-read as code: a quoted string put in `$_`, a variable, a positional parameter or an array, then reached
  through `${x@P}`, arithmetic (`$((x))`, `((x))`, `$[x]`, `${s:x}`, `${a[x]}`, `[[ x -eq 0 ]]`, `let`,
  `declare -i`, C-style for), indirection (`${!x}`, `declare -n`), name-taking builtins (`printf -v`, `read`,
  `test -v`, `unset`);
- programs that run code from their arguments: interpreters, awk, sed, find, tar, git -c / --config-env / aliases,
  env -S, xargs, hash -p, PS4 / BASH_ENV, compgen -C, mapfile -C, source, trap, make, ssh -o ProxyCommand;
- wrappers around those (time, nice, timeout, nohup, env, command, builtin, exec), quoted program names, and the
  structures around everything (lists, pipelines, groups, subshells, if, functions, comments).
"""

from __future__ import annotations

import base64
import shlex

from hypothesis import strategies as st

__all__ = ["commands"]

q = shlex.quote


def _spellings(word: str) -> list[str]:
    """Ways to write a program name that bash reads as `word`."""
    octal = "".join(f"\\{ord(c):o}" for c in word)
    return [word, word, f"'{word}'", f'"{word}"', f"{word[0]}''{word[1:]}", f"\\{word}", f"$'{octal}'",
            f"{word[0]}\\{word[1:]}"]


def _payloads(bad: str, target: str) -> st.SearchStrategy[str]:
    """Command lines that run `bad target`, spelled several ways (one is the real program by absolute path)."""
    return st.sampled_from([f"{s} {target}" for s in _spellings(bad)] + [
        f"/bin/{bad} {target}", f"command {bad} {target}", f"/bin/{bad[:-1]}? {target}", f"/???/{bad} {target}",
        f"/bin/{bad[0]}[{bad[1]}]{bad[2:]} {target}"])


def _heredocs(payload: st.SearchStrategy[str], feeders: list[str]) -> st.SearchStrategy[str]:
    delimiters = [("<<EOF", "EOF"), ("<<'EOF'", "EOF"), ('<<"EOF"', "EOF"), ("<<\\EOF", "EOF"), ("<<-EOF", "\tEOF"),
                  ("<< EOF", "EOF"), ("<<E_1", "E_1"), ("<<-'X'", "X")]
    expansions = ["$({0})", "`{0}`", "${{u:-$({0})}}", "$(( $({0}) ))", "$( {0} )", "\\$({0})", "x$({0})y",
                  "${{u:=`{0}`}}", "\"$({0})\"", "'$({0})'", "$[ $({0}) ]"]
    blanks = ["", " ", "\t", "  ", " \t"]
    return st.builds(
        lambda feeder, delim, exp, blank, before, after, p: (
            f"{feeder} {delim[0]}\n{before}{blank}{exp.format(p)}\n{after}{delim[1]}"),
        st.sampled_from(feeders), st.sampled_from(delimiters), st.sampled_from(expansions), st.sampled_from(blanks),
        st.sampled_from(["", "line\n", "a $HOME b\n", "\\\n", "# c\n"]), st.sampled_from(["", "tail\n", " x\n"]),
        payload)


def _data_as_code(payload: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A string that is only data when written, then made code by a later expansion."""
    data = st.builds(lambda shape, p: shape.format(p), st.sampled_from(["$({0})", "a[$({0})]", "`{0}`",
                                                                         "x[`{0}`]", "u[$({0})]"]), payload)
    quoted = st.builds(lambda quote, d: quote(d), st.sampled_from([q, lambda d: '"' + d.replace("$", "\\$")
                                                                  .replace("`", "\\`") + '"']), data)
    # (setter, the name it sets): `$_` after a simple command, a variable, a positional parameter
    setters = [("echo {0}", "_"), (": {0}", "_"), ("true {0}", "_"), ("git status {0}", "_"), ("x={0}", "x"),
               ("read -r x <<< {0}", "x"), ("printf -v x %s {0}", "x"), ("set -- {0}", "1"), ("declare x={0}", "x"),
               ("export x={0}", "x"), ("IFS= read -r x <<< {0}", "x"), ("local x={0}", "x"), ("x=({0})", "x")]
    references = ["echo ${{{0}@P}}", "echo \"${{{0}@P}}\"", "echo $(( {0} ))", "echo $(( ${0} ))", "echo $[{0}]",
                  "(( {0} ))", "s=abc; echo ${{s:{0}}}", "s=abc; echo ${{s:0:{0}}}", "u=(1); echo ${{u[{0}]}}",
                  "u[{0}]=1", "[[ {0} -eq 0 ]]", "[[ ${0} -lt 1 ]]", "[[ -v ${0} ]]", "test -v \"${0}\"",
                  "[ -v \"${0}\" ]", "let {0}", "declare -i i={0}", "echo ${{!{0}}}", "declare -n r=${0}; echo $r",
                  "printf -v \"${0}\" x", "read \"${0}\" <<< 1", "u=(1); unset \"${0}\"", "case 1 in $(({0}))) ;; esac",
                  "for ((i={0};0;)); do :; done", "set -- a b; echo ${{@:{0}}}", "echo ${{{0}@E}}", "echo ${{{0}@Q}}",
                  "git status ${{{0}@P}}", "echo $(({0}+1))", "echo ${{#{0}}}", "echo ${0}", "eval \"${0}\"",
                  "a=(1 2); echo ${{a[@]:{0}}}", "echo $(( {0} ? 1 : 0 ))", "getopts a \"${0}\"",
                  "declare \"${0}=1\"", "read -a \"${0}\" <<< 1", "mapfile \"${0}\" <<< 1", "wait -p \"${0}\"",
                  "printf -v\"${0}\" x", "[[ ${0} -ge 1 || 1 -eq 1 ]]", "echo $(( ${{{0}}} ))", "echo ${{x[${0}]}}",
                  "i={0}; echo $((i))", "echo ${{!{0}@}}", "((${0}))"]
    glue = st.sampled_from(["; ", " && ", "\n", " ; ", " || true; "])
    return st.builds(
        lambda setter, value, sep, ref: (
            f"f() {{ {setter[0].format(value)}{sep}{ref.format(setter[1])}; }}; f" if setter[0].startswith("local")
            else f"{setter[0].format(value)}{sep}{ref.format(setter[1])}"),
        st.sampled_from(setters), quoted, glue, st.sampled_from(references))


def _code_runners(payload: st.SearchStrategy[str], bad: str, target: str) -> st.SearchStrategy[str]:
    """Programs that run code from their arguments, given the payload in the form each one takes."""
    templates = [
        "awk {awk_system}", "awk {awk_pipe}", "awk {awk_getline}", "awk -v x=1 {awk_system} /dev/null",
        "sed -n {sed_e} <<< x", "sed {sed_flag} <<< x", "sed -e p -e {sed_e} <<< x", "echo x | sed {sed_e}",
        "sed --expression={sed_e} <<< x", "sed -n -e {sed_e} /dev/null <<< x",
        "find . -maxdepth 0 -exec {words} \\;", "find . -maxdepth 0 -exec sh -c {pq} \\;",
        "find . -maxdepth 0 -execdir bash -c {pq} \\;", "find . -maxdepth 0 -exec {{}} \\;",
        "tar cf /dev/null --checkpoint=1 --checkpoint-action=exec={pq} /dev/null",
        "tar -c -f /dev/null --checkpoint=1 --checkpoint-action exec={pq} /dev/null",
        "perl -e {perl}", "perl -we {perl}", "python3 -c {python}", "python3 - <<'EOF'\n{python_raw}\nEOF",
        "python3 <<< {python}", "git -c alias.x={alias} x", "git -c alias.x={alias} -C . x",
        "V={alias} git --config-env=alias.x=V x",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0={alias} git x",
        "sh -c {pq}", "bash -c {pq}", "echo {pq} | sh", "sh <<< {pq}", "bash <<EOF\n{p}\nEOF",
        "sh -s <<< {pq}", "printf %s {pq} | bash", "echo {b64} | base64 -d | sh", "bash -c \"$(echo {pq})\"",
        "env -S {pq}", "env sh -c {pq}", "xargs -I{{}} sh -c {{}} <<< {pq}", "echo {target} | xargs {bad}",
        "hash -p /bin/{bad} f; f {target}", "PS4={ps4} bash -xc :", "BASH_ENV=/dev/stdin bash -c : <<< {pq}",
        "compgen -C {pq_hash} x", "mapfile -c 1 -C {pq_hash} a <<< x", "source /dev/stdin <<< {pq}",
        ". /dev/stdin <<< {pq}", "trap {pq} EXIT", "builtin eval {pq}", "(exec {p})", "command -p {bad} {target}",
        "make -s -f /dev/stdin <<< {make}", "make -s --eval={make} -f /dev/null",
        "ssh -o ProxyCommand={pq} -o BatchMode=yes -o ConnectTimeout=1 h", "x={pq}; eval \"$x\"",
        "set -- {pq}; eval \"$1\"", "f={bad}; $f {target}", "\"${{u:-{bad}}}\" {target}",
        "sed {sed_cluster} <<< x", "sed -n -e{sed_attached} <<< x", "env {bash_func} bash -c 'git status'",
        "echo {pq} > ~/.bashrc; bash -ic :", "echo {pq} > ~/.bash_profile; bash -lc :", "echo {pq} > x.sh; bash x.sh",
        "echo {pq} > x.sh; . ./x.sh", "printf {printf_v} x", "tar -cI {pq} -f /dev/null /dev/null",
        "ssh-agent {p}", "prlimit {p}", "setpriv {p}", "sg root -c {pq}", "declare \"x[$({p})]=1\"",
        "x=1; declare -n r=x; r={pq}; eval \"$x\"", "mapfile -t {mapfile_name} <<< x",
        "command -v awk >/dev/null && awk {awk_system}", "exec -a x awk {awk_system}",
    ]
    wrappers = ["", "", "", "time ", "nice ", "nice -n 5 ", "timeout 5 ", "nohup ", "env ", "command ", "exec ",
                "builtin ", "env A=1 ", "sudo "]

    def fill(template: str, wrapper: str, p: str, plain: str) -> str:
        # `p` is a shell command line; `plain` the same without shell quoting, for another language's string
        pieces = {
            "p": p, "pq": q(p), "pq_hash": q(p + " #"), "words": p, "target": target, "bad": bad,
            "awk_system": q(f'BEGIN{{system("{plain}")}}'), "awk_pipe": q(f'BEGIN{{print "{plain}" | "sh"}}'),
            "awk_getline": q(f'BEGIN{{"{plain}" | getline}}'), "sed_e": q(f"1e {plain}"),
            "sed_flag": q(f"s/.*/{plain}/e"), "perl": q(f'system("{plain}")'),
            "python": q(f'import os; os.system("{plain}")'), "python_raw": f'import os; os.system("{plain}")',
            "alias": q(f"!{plain}"), "ps4": q(f"$({plain})"), "make": q(f"all:\n\t{plain}\n"),
            "b64": base64.b64encode(plain.encode()).decode(), "sed_cluster": q(f"-ne1e {plain}"),
            "sed_attached": q(f"1e {plain}"), "bash_func": q(f"BASH_FUNC_git%%=() {{ {p}; }}"),
            "printf_v": q(f"-va[$({p})]"), "mapfile_name": q(f"a[$({p})]"),
        }
        command = template.format(**pieces)
        return wrapper + command if wrapper and not command.startswith(("(", "V=", "GIT_", "PS4", "BASH_", "x=",
                                                                          "set ", "f=", "echo ", "printf ")) \
            else command

    plain = st.sampled_from([f"{bad} {target}", f"/bin/{bad} {target}", f"command {bad} {target}"])
    return st.builds(fill, st.sampled_from(templates), st.sampled_from(wrappers), payload, plain)


def _benign(bad: str) -> st.SearchStrategy[str]:
    """Commands the everyday rules allow (or that only look hostile), so the gate is seen to let things through."""
    return st.sampled_from([
        "git status", "git status --short", "echo hi", "true", f"echo {bad}", f"echo '$({bad} x)'",
        f"git status <<'EOF'\n$({bad} x)\nEOF", "git status <<EOF\nplain text\nEOF", "echo $((1 + 2))",
        f"echo '{bad} x'; echo $_", "echo ${#HOME}", "git status -- \"$HOME\"", "echo a; true", "echo \"${x:-y}\"",
        f"echo \"a[$({bad} x)]\" 2>/dev/null", "git status 2>&1", "echo x | git status", "echo ${x/a/b}",
        f"echo '{bad}' # $({bad} x)", "echo $(( 7 * 6 ))", "echo ${s:1:2}", "echo \"$@\"", "echo ${a[1]}",
        "git status <<< 'x'", "echo ${x@U}",
    ])


def commands(bad: str, target: str, *, hostile_weight: int = 3) -> st.SearchStrategy[str]:
    """Generated attacks trying to run `bad target`, mixed with benign commands, inside bash structures."""
    payload = _payloads(bad, target)
    feeders = ["git status", "git status --short", "echo", "true", "cat", "bash", "sh", "source /dev/stdin",
               "python3 -", "git status -- x"]
    attack = st.one_of(_heredocs(payload, feeders), _data_as_code(payload), _code_runners(payload, bad, target))
    leaf = st.one_of(*([attack] * hostile_weight), _benign(bad))
    unary = ["git status; {0}", "{0} && true", "echo a && {0}", "{{ {0}; }}", "( {0} )", "if true; then {0}; fi",
             "true | {0}", "{0} # it's", "f() {{ {0}; }}; f", "! {0}", "while true; do {0}; break; done",
             "case a in a) {0};; esac", "{0} 2>/dev/null", "git() {{ {0}; }}; git status", "echo() {{ {0}; }}; echo x",
             "if {0}; then true; fi", "{0} < /dev/null", "echo x | {0}"]
    binary = ["{0}; {1}", "{0} && {1}", "{0} || {1}", "{0} | {1}", "{0}\n{1}", "if {0}; then {1}; fi"]

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(st.builds(lambda s, c: s.format(c), st.sampled_from(unary), inner),
                         st.builds(lambda s, a, b: s.format(a, b), st.sampled_from(binary), inner, inner))

    return st.recursive(leaf, extend, max_leaves=3)
