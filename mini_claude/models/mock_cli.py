"""`mini-claude mock-model --scenario FILE [--port N] [--log FILE]`: the offline mock model (mock_server.py) served
from the command line until SIGINT or SIGTERM. Stdlib only, so it starts fast.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from mini_claude.errors import ConfigError
from mini_claude.models.mock_server import HOST, MockModelServer
from mini_claude.models.scenario import load_scenario

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """`mini-claude mock-model --scenario FILE [--port N] [--log FILE]`: serve until SIGINT/SIGTERM."""
    parser = argparse.ArgumentParser(prog="mini-claude mock-model",
                                     description="Serve a scripted model on 127.0.0.1 (Anthropic Messages and "
                                                 "OpenAI chat completions), for offline runs and tests.")
    parser.add_argument("--scenario", required=True, type=Path, help="scenario JSON file ({\"turns\": [...]})")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free port)")
    parser.add_argument("--log", type=Path, default=None, help="append each request as one JSON line here")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    try:
        scenario = load_scenario(args.scenario)
    except ConfigError as exc:
        sys.stderr.write(f"mock-model: {exc}\n")
        return 2
    if args.log is not None:
        try:
            args.log.open("a", encoding="utf-8").close()
        except OSError as exc:
            sys.stderr.write(f"mock-model: {args.log}: cannot write the log: {exc.strerror or exc}\n")
            return 2
    server = MockModelServer(scenario, port=args.port, log_path=args.log)
    try:
        url = server.start()
    except OSError as exc:
        sys.stderr.write(f"mock-model: cannot listen on {HOST}:{args.port}: {exc.strerror or exc}\n")
        return 1
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        print(f"mock-model listening on {url}", flush=True)
        while not stop.wait(0.2):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.stop()
    return 0
