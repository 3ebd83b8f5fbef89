"""The questions the terminal asks the user, and what it shows to ask them: permission.py (may this tool call
run? ExitPlanMode's plan), approval.py (start this project MCP server?), pin_review.py (accept a server's changed
tools and instructions?), host_ui.py (an MCP server's sampling, forms and URLs: the REPL asks, `-p` declines in one
line), memory_note.py (which memory file takes a `# note`?). Nothing is imported here: each front end imports the
module it uses."""
