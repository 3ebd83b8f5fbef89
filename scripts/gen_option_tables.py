"""Print the option list of installed programs, from their `--help`, in the notation of
mini_claude/permissions/options/tables_*.py (run by hand; the result is reviewed, classified and committed).

Usage: .venv/bin/python scripts/gen_option_tables.py sort split tar ...

Each option is printed as its spellings joined by `|`; a trailing `=` means it takes a value (`--opt=v`,
`--opt v`), `?` an optional one (only attached). getopt/argp help lists the value once per entry
(`-f, --file=ARCHIVE`), so every spelling of the entry gets it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

_HELP = {"curl": ["curl", "--help", "all"]}
_ITEM = re.compile(r"^(-{1,2}[A-Za-z0-9?#@][\w\-.#?@]*)(\[=[^\]]*\]|=\S+|\s+<[^>]+>|\s+[A-Z][A-Z_\-]*\b)?")


def options(program: str) -> list[str]:
    cmd = _HELP.get(program, [program, "--help"])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        text = line.strip()
        if not text.startswith("-") or not re.match(r"^\s{1,12}-", line):
            continue
        spec = re.split(r"(?<!,)\s{2,}", text)[0]
        names: list[str] = []
        arg = ""
        for item in re.split(r",\s*", spec):
            m = _ITEM.match(item.strip())
            if not m:
                continue
            names.append(m.group(1))
            value = m.group(2) or ""
            if value.startswith("[="):
                arg = arg or "?"
            elif value:
                arg = "="
        if names:
            key = "|".join(dict.fromkeys(names))
            found[key] = arg
    return [k + a for k, a in found.items()]


def main() -> None:
    for program in sys.argv[1:]:
        text = " ".join(options(program))
        print(f"# {program}")
        print(textwrap.fill(text, 112, break_long_words=False, break_on_hyphens=False))


if __name__ == "__main__":
    main()
