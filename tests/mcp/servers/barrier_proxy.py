#!/usr/bin/env python3
"""Runs a stdio MCP server behind a barrier, to prove without a clock that a host starts its servers side by side.

    python barrier_proxy.py FOLDER NAME COUNT -- COMMAND [ARG]...

The proxy waits for the host's first message (whatever it is: `initialize` or an era probe), marks FOLDER/NAME, then
waits until COUNT proxies have marked FOLDER before it starts COMMAND and hands it that message and the rest of
stdin. COMMAND's stdout and stderr are the proxy's own, so the host talks to the real server. A host that waits for
one server's answer before it writes to the next never fills the barrier: its first server stays silent until the
host's timeout fails it. The wait ends after WAIT_S (exit 3, saying why on stderr), so nothing hangs. The server is
in the proxy's process group, so the host's group signals reach it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

WAIT_S = 60.0


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        sys.stderr.write("usage: barrier_proxy.py FOLDER NAME COUNT -- COMMAND [ARG]...\n")
        return 2
    folder, name, count, command = Path(argv[0]), argv[1], int(argv[2]), argv[4:]
    first = b""
    while b"\n" not in first:
        chunk = os.read(0, 65536)
        if not chunk:
            return 0  # the host went away before it said anything
        first += chunk
    (folder / name).touch()
    deadline = time.monotonic() + WAIT_S
    while len(list(folder.iterdir())) < count:
        if time.monotonic() > deadline:
            marked = sorted(p.name for p in folder.iterdir())
            sys.stderr.write(f"barrier: after {WAIT_S:.0f} s only {marked} of {count} servers were written to\n")
            return 3
        time.sleep(0.01)
    peer = subprocess.Popen(command, stdin=subprocess.PIPE)
    assert peer.stdin is not None
    try:
        peer.stdin.write(first)
        peer.stdin.flush()
        while chunk := os.read(0, 65536):
            peer.stdin.write(chunk)
            peer.stdin.flush()
    except BrokenPipeError:
        pass  # the server ended; its exit code says how
    finally:
        try:
            peer.stdin.close()
        except BrokenPipeError:
            pass
    return peer.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
