"""Option tables of the text tools (GNU coreutils 9.1, diffutils 3.8, file 5.44 on Debian 12; getopt_long).

`sort --compress-program=CMD` runs CMD on its temporary files and `split --filter=CMD` pipes each piece into CMD:
both are code; `sort -o F` writes F. head and tail take `-NUM` (`head -5`): the digits are listed as flags.
"""

from __future__ import annotations

from mini_claude.permissions.options.notation import CODE, READS, WRITES, program

__all__ = ["TABLES"]

_DIGITS = " ".join(f"-{d}" for d in range(10))
_NAMES_FROM = (READS, "reads the names of its files from a file")

SORT = program("sort", """
-b|--ignore-leading-blanks -d|--dictionary-order -f|--ignore-case -g|--general-numeric-sort
-i|--ignore-nonprinting -M|--month-sort -h|--human-numeric-sort -n|--numeric-sort -R|--random-sort
--random-source= -r|--reverse --sort= -V|--version-sort --batch-size= -c --check? -C
--compress-program= --debug --files0-from= -k|--key= -m|--merge -o|--output= -s|--stable -S|--buffer-size=
-t|--field-separator= -T|--temporary-directory= --parallel= -u|--unique -z|--zero-terminated --help --version
""", {"--compress-program": (CODE, "runs a command to compress its temporary files"),
      "-o": (WRITES, "writes its output to a file"), "-T": (WRITES, "writes temporary files in a folder"),
      "--files0-from": _NAMES_FROM, "--random-source": (READS, "reads random bytes from a file")})

SPLIT = program("split", """
-a|--suffix-length= --additional-suffix= -b|--bytes= -C|--line-bytes= -d --numeric-suffixes? -x --hex-suffixes?
-e|--elide-empty-files --filter= -l|--lines= -n|--number= -t|--separator= -u|--unbuffered --verbose --help
--version
""", {"--filter": (CODE, "pipes each piece into a shell command")})

CAT = program("cat", """
-A|--show-all -b|--number-nonblank -e -E|--show-ends -n|--number -s|--squeeze-blank -t -T|--show-tabs -u
-v|--show-nonprinting --help --version
""")
HEAD = program("head", f"""
-c|--bytes= -n|--lines= -q|--quiet|--silent -v|--verbose -z|--zero-terminated --help --version {_DIGITS}
""")
TAIL = program("tail", f"""
-c|--bytes= -f|--follow? -F -n|--lines= --max-unchanged-stats= --pid= -q|--quiet|--silent --retry
-s|--sleep-interval= -v|--verbose -z|--zero-terminated --help --version {_DIGITS}
""")
WC = program("wc", """
-c|--bytes -m|--chars -l|--lines --files0-from= -L|--max-line-length -w|--words --total= --help --version
""", {"--files0-from": _NAMES_FROM})
CUT = program("cut", """
-b|--bytes= -c|--characters= -d|--delimiter= -f|--fields= -n --complement -s|--only-delimited
--output-delimiter= -z|--zero-terminated --help --version
""")
TR = program("tr", "-c|-C|--complement -d|--delete -s|--squeeze-repeats -t|--truncate-set1 --help --version")
UNIQ = program("uniq", """
-c|--count -d|--repeated -D --all-repeated? -f|--skip-fields= --group? -i|--ignore-case -s|--skip-chars=
-u|--unique -z|--zero-terminated -w|--check-chars= --help --version
""")
NL = program("nl", """
-b|--body-numbering= -d|--section-delimiter= -f|--footer-numbering= -h|--header-numbering= -i|--line-increment=
-l|--join-blank-lines= -n|--number-format= -p|--no-renumber -s|--number-separator= -v|--starting-line-number=
-w|--number-width= --help --version
""")
DIFF = program("diff", """
--normal -q|--brief -s|--report-identical-files -c -C= --context? -u -U= --unified? -e|--ed -n|--rcs
-y|--side-by-side -W|--width= --left-column --suppress-common-lines -p|--show-c-function
-F|--show-function-line= --label= -t|--expand-tabs -T|--initial-tab --tabsize= --suppress-blank-empty
-l|--paginate -r|--recursive --no-dereference -N|--new-file --unidirectional-new-file --ignore-file-name-case
--no-ignore-file-name-case -x|--exclude= -X|--exclude-from= -S|--starting-file= --from-file= --to-file=
-i|--ignore-case -E|--ignore-tab-expansion -Z|--ignore-trailing-space -b|--ignore-space-change
-w|--ignore-all-space -B|--ignore-blank-lines -I|--ignore-matching-lines= -a|--text --strip-trailing-cr
-D|--ifdef= --old-group-format= --new-group-format= --unchanged-group-format= --changed-group-format=
--line-format= --old-line-format= --new-line-format= --unchanged-line-format= -d|--minimal --horizon-lines=
--speed-large-files --color? --palette= --help -v|--version
""", {"-X": (READS, "reads patterns from a file")})
CMP = program("cmp", """
-b|--print-bytes -i|--ignore-initial= -l|--verbose -n|--bytes= -s|--quiet|--silent --help -v|--version
""")
COMM = program("comm", """
-1 -2 -3 --check-order --nocheck-order --output-delimiter= --total -z|--zero-terminated --help --version
""")
OD = program("od", """
-A|--address-radix= --endian= -j|--skip-bytes= -N|--read-bytes= -S= --strings? -t|--format=
-v|--output-duplicates -w|--width? --traditional --help --version -a -b -c -d -f -i -l -o -s -x -D -e -F -H -I -L
-O -X -B
""")
FILE = program("file", """
--help -v|--version -m|--magic-file= -z|--uncompress -Z|--uncompress-noreport -b|--brief -c|--checking-printout
-e|--exclude= --exclude-quiet= -f|--files-from= -F|--separator= -i|--mime --apple --extension --mime-type
--mime-encoding -k|--keep-going -l|--list -L|--dereference -h|--no-dereference -n|--no-buffer -N|--no-pad
-0|--print0 -p|--preserve-date -P|--parameter= -r|--raw -s|--special-files -S|--no-sandbox -C|--compile
-d|--debug
""", {"-f": _NAMES_FROM, "-m": (READS, "reads magic files")})

TABLES = {"sort": SORT, "split": SPLIT, "cat": CAT, "head": HEAD, "tail": TAIL, "wc": WC, "cut": CUT, "tr": TR,
          "uniq": UNIQ, "nl": NL, "diff": DIFF, "cmp": CMP, "comm": COMM, "od": OD, "file": FILE}
