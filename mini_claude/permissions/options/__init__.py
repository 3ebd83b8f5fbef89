"""Option tables of the programs the shell gate knows (spec.py: the format)."""
