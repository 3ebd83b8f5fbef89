"""Corrupt or huge state in every JSON store under the state folder (issue 22): a truncated file, a 1 GB file, a
store written by a newer version, a FIFO. Each costs one warning line and a fresh start of that store, the bad
file kept aside as `<name>.bad`; never a hang, a crash or a 1 GB parse. The stores: era memory, project-server
approvals, trusted folders, the OAuth store (the pin store's own cases are in test_pin_store.py)."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mini_claude.mcp.approval import ApprovalStore
from mini_claude.mcp.auth.store import TokenStore
from mini_claude.mcp.config import ServerConfig
from mini_claude.mcp.negotiation import EraMemory, EraRecord
from mini_claude.statefile import read_state
from mini_claude.trust import TrustStore

pytestmark = pytest.mark.timeout(60)

DB = ServerConfig(name="db", type="stdio", command="db-server", scope="project")


class Store:
    """One store: how to put something in it and whether it is there."""

    def __init__(self, name: str, put: Callable[[Path, Path], None], has: Callable[[Path, Path], bool]) -> None:
        self.name = name
        self.put = put
        self.has = has

    def __repr__(self) -> str:
        return self.name


def _era_put(path: Path, _project: Path) -> None:
    EraMemory(path).remember("srv node a.js", "legacy", "2025-11-25")


def _era_has(path: Path, _project: Path) -> bool:
    return EraMemory(path).recall("srv node a.js") == EraRecord("legacy", "2025-11-25")


def _approval_put(path: Path, project: Path) -> None:
    ApprovalStore(path).record(project, DB, "approved")


def _approval_has(path: Path, project: Path) -> bool:
    return ApprovalStore(path).lookup(project, DB) == "approved"


def _trust_put(path: Path, project: Path) -> None:
    TrustStore(path).record(project)


def _trust_has(path: Path, project: Path) -> bool:
    return str(project.resolve()) in TrustStore(path).folders()


def _oauth_put(path: Path, _project: Path) -> None:
    TokenStore(path).put("srv https://x", "tokens", "https://issuer", {"access_token": "t0k3n"})


def _oauth_has(path: Path, _project: Path) -> bool:
    return TokenStore(path).get("srv https://x", "tokens", "https://issuer") == {"access_token": "t0k3n"}


STORES = [Store("era memory", _era_put, _era_has), Store("approvals", _approval_put, _approval_has),
          Store("trusted folders", _trust_put, _trust_has), Store("oauth", _oauth_put, _oauth_has)]


def _truncated(path: Path) -> None:
    text = path.read_text()
    path.write_text(text[: len(text) // 2])


def _huge(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.truncate(1 << 30)  # sparse: no disk used


def _newer(path: Path) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), "version": 99}))


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


SPOILERS: list[tuple[Callable[[Path], None], str]] = [
    (_truncated, "not valid JSON"), (_huge, "over the"), (_newer, "newer mini-claude"), (_fifo, "not a regular file")]


@pytest.mark.parametrize("store", STORES, ids=repr)
@pytest.mark.parametrize(("spoil", "said"), SPOILERS, ids=[s.__name__.strip("_") for s, _ in SPOILERS])
def test_an_unusable_store_costs_a_warning_and_starts_afresh(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                             store: Store, spoil: Any, said: str) -> None:
    path, project = tmp_path / "state" / "store.json", tmp_path / "project"
    project.mkdir()
    store.put(path, project)
    assert store.has(path, project)
    spoil(path)
    began = time.monotonic()
    assert not store.has(path, project)  # read as empty ...
    assert time.monotonic() - began < 5.0  # ... at once: no hang on a FIFO, no 1 GB parse
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    assert said in warnings[0] and str(path) in warnings[0] and "store.json.bad" in warnings[0]
    assert "\n" not in warnings[0]
    assert os.path.lexists(path.with_name("store.json.bad"))  # kept aside, never lost
    store.put(path, project)  # a fresh start of that store works
    assert store.has(path, project)
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1


def test_read_state_reads_no_further_than_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "grows.json"
    path.write_text(json.dumps({"x": "y" * 100}))
    assert read_state(path, what="test", max_bytes=1000) == {"x": "y" * 100}
    assert read_state(path, what="test", max_bytes=50) is None and path.with_name("grows.json.bad").exists()
    assert read_state(tmp_path / "missing.json", what="test") is None  # missing: nothing said, nothing moved


def test_a_set_aside_file_replaces_the_previous_one(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    for n in range(3):
        path.write_text(f"{{broken {n}")
        assert read_state(path, what="test") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json.bad"]  # one bad copy per store: bounded
    assert (tmp_path / "s.json.bad").read_text() == "{broken 2"
