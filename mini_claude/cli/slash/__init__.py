"""The REPL's built-in slash commands: commands.py holds the table and one handler each; context.py (`/context`),
permissions.py (`/permissions`), sandbox.py (`/sandbox`) and status.py (`/status`) are the larger ones. Only the
REPL imports them; nothing is imported here."""
