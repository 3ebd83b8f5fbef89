"""Fixtures for the trust-boundary tests: the real CLI against the mock model (`cli`, from tests/integration) and
`listener`: loopback sockets that only record who connected (a hostile endpoint must never be reached)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import Cli

ACCEPT_POLL_S = 0.05
READ_TIMEOUT_S = 2.0
MAX_RECORDED_BYTES = 64 * 1024


class Listener:
    """A TCP listener on 127.0.0.1 that records the first bytes of every connection, answers `502` and closes.

    As a stand-in HTTPS proxy it shows where a client meant to go (`CONNECT host:443`) without any network."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(ACCEPT_POLL_S)
        self.port = int(self._sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.received: list[bytes] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"listener-{self.port}", daemon=True)
        self._thread.start()

    @property
    def connections(self) -> list[bytes]:
        with self._lock:
            return list(self.received)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(READ_TIMEOUT_S)
                try:
                    data = conn.recv(MAX_RECORDED_BYTES)
                except OSError:
                    data = b""
                with self._lock:
                    self.received.append(data)
                try:
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._sock.close()
        self._thread.join(timeout=5)


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    c = Cli(tmp_path)
    c.env["MINI_CLAUDE_RETRY_BASE_S"] = "0.001"
    yield c
    c.close()


@pytest.fixture
def listener() -> Iterator[Callable[[], Listener]]:
    """`listener()` starts one more recording listener; all are closed at the end of the test."""
    started: list[Listener] = []

    def start() -> Listener:
        started.append(Listener())
        return started[-1]

    yield start
    for item in started:
        item.close()
