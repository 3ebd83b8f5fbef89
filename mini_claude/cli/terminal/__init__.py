"""What every part of the command line shares, below all of them: the one way to the screen (render.py: `clean`,
the one neutralising path for untrusted text; `TerminalUI`; logging), the server status lines (status.py), the
argument types (arg_types.py) and the exit codes (exit_codes.py). It imports nothing of the rest of `cli/`, so the
front ends (main, run, repl) and the feature folders (doctor/, mcp/, slash/, questions/) all stand on it. Nothing
is imported here."""
