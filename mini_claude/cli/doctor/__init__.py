"""`mini-claude doctor` and the REPL's `/doctor`: report.py assembles and prints the report; setup.py (install,
keys), files.py (settings, memory and MCP config files), sandbox.py and servers.py are its sections, rows.py their
shape. Nothing is imported here: `-p` never loads the doctor."""
