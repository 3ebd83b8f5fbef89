"""The command line: the front ends (main.py: flags and subcommands; run.py: `-p`; repl.py: the REPL; demo.py) and,
by what they serve, terminal/ (rendering, status lines, argument types, exit codes: what all of cli/ stands on),
questions/ (what the terminal asks the user), slash/ (the REPL's built-in commands), mcp/ (the `mcp` subcommands and
`/mcp`) and doctor/ (`mini-claude doctor`). A folder never imports the front ends."""
