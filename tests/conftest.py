"""Root test configuration. Shared helpers live in importable modules (`tests/peers.py`), not here:
several conftest.py files exist, so `import conftest` would be ambiguous."""
