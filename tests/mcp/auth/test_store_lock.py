"""Two processes writing the token store at once lose nothing (review finding 15: a lock around every
read-modify-write)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mini_claude.mcp.auth import TokenStore

ROOT = Path(__file__).resolve().parents[3]
WRITER = """
import sys
from pathlib import Path
from mini_claude.mcp.auth.store import TokenStore
store = TokenStore(Path(sys.argv[1]))
for i in range(int(sys.argv[3])):
    store.put("srv http://x", "tokens", f"{sys.argv[2]}-{i}", {"access_token": "t"})
"""
PROCESSES = 4
WRITES = 40


def test_concurrent_writers_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "mcp-oauth.json"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"p{n}", str(WRITES)], cwd=ROOT)
             for n in range(PROCESSES)]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    tokens = TokenStore(path).entry("srv http://x")["tokens"]
    assert len(tokens) == PROCESSES * WRITES
    assert (tmp_path / "mcp-oauth.json.lock").stat().st_mode & 0o077 == 0


def test_set_field_once_keeps_the_first(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "s.json")
    assert store.set_field_once("k", "bound_issuer", "https://a") == "https://a"
    assert TokenStore(tmp_path / "s.json").set_field_once("k", "bound_issuer", "https://b") == "https://a"
    assert store.field("k", "bound_issuer") == "https://a"
