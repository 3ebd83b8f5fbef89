#!/usr/bin/env python3
"""A minimal stdio MCP-ish server (stdlib only) that misbehaves on demand, for transport and session tests.

    python faulty_server.py --mode MODE [--pidfile PATH]

It answers `initialize`, `ping`, `tools/list` and `tools/call` (one tool, "echo"), and -32601 to anything else.
Notifications are ignored. It exits on stdin EOF (unless the mode says otherwise).

The "echo" tool's arguments (every mode):
    text: str            returned as the text content
    size: int            return a text of `size` bytes ("x" * size) instead
    delay: float         sleep this long before answering
    progress_every: float  while delaying, send notifications/progress (token = the request's progressToken)
    server_requests: [{"method": str, "params"?: dict}]  send these requests to the client first (ids: see
                         `collide`), wait for every reply, and return the replies as JSON text
    collide: bool        give those server requests the *same id* as the client's pending tools/call
    burst: int           first send this many notifications/message lines in one write
    burst_pad: int       pad each of those notifications with this many bytes
    exit: int            exit with this code right after the reply

Modes:
    normal            behave
    crash_at_start    write "fatal: cannot load config" to stderr, exit 3 before reading anything
    crash_mid_call    on tools/call: write "fatal: tool exploded" to stderr, exit 5 without answering
    hang              never answer tools/call (everything else works)
    deaf              on tools/call: stop reading stdin and sleep (a client's writes fill the pipe)
    garbage           log lines, blank lines, CRLF and a 100000-deep JSON array around valid replies
    stderr_flood      on tools/call: write 50 MB to stderr first, then answer
    half_line_exit    on tools/call: write half of the reply (no newline), exit 4
    no_newline_exit   on tools/call: write the whole reply without its newline, exit 0
    ignore_sigterm    ignore SIGTERM and stdin EOF (only SIGKILL ends it)
    grandchild        spawn `sleep 300` inheriting stdout (pid to --pidfile), answer initialize, then exit 0
    escaped_grandchild  like grandchild, but the child calls setsid() first (leaves our process group)
    grandchild_daemon spawn `sleep 300` with stdio on /dev/null (pid to --pidfile), then serve normally
    invalid_utf8      tools/call replies contain invalid UTF-8 bytes inside the text string
    odd_json          before each tools/call reply: a number, a string, a batch array (a notification and a
                      response with an unknown id), a non-string method; after it: a duplicate of the reply
                      and a reply with an unknown id
    stdin_closer      on tools/call: close stdin and stdout, write to stderr, then exit 2 after 0.2 s
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

OUT = sys.stdout.buffer
IN = sys.stdin.buffer


def write_raw(data: bytes) -> None:
    OUT.write(data)
    OUT.flush()


def send(message: dict[str, Any]) -> None:
    write_raw(json.dumps(message, separators=(",", ":")).encode() + b"\n")


def reply_bytes(request_id: Any, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, separators=(",", ":")).encode()


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def read_message() -> dict[str, Any] | None:
    """The next JSON object from stdin; None at EOF."""
    while True:
        line = IN.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            sys.stderr.write(f"server: bad JSON from client: {line[:100]!r}\n")
            continue
        if isinstance(value, dict):
            return value


class Server:
    def __init__(self, mode: str, pidfile: str | None) -> None:
        self.mode = mode
        self.pidfile = pidfile
        self.next_own_id = 1000

    def serve(self) -> int:
        while True:
            message = read_message()
            if message is None:
                if self.mode == "ignore_sigterm":
                    while True:
                        time.sleep(3600)
                return 0
            if "method" not in message:
                continue  # a stray response
            if "id" not in message:
                continue  # notification
            code = self.handle(message)
            if code is not None:
                return code

    def handle(self, message: dict[str, Any]) -> int | None:
        method = message["method"]
        request_id = message["id"]
        params = message.get("params") or {}
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "faulty", "version": "1.0"},
            }})
            if self.mode in ("grandchild", "escaped_grandchild"):
                self.spawn_sleeper(escaped=self.mode == "escaped_grandchild", quiet=False)
                return 0
            return None
        if method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
            return None
        if method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [{
                "name": "echo", "description": "Echo text back.",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            }]}})
            return None
        if method == "tools/call":
            return self.call_tool(request_id, params)
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no method {method}"}})
        return None

    def call_tool(self, request_id: Any, params: dict[str, Any]) -> int | None:
        args = params.get("arguments") or {}
        mode = self.mode
        if mode == "crash_mid_call":
            sys.stderr.write("fatal: tool exploded\n")
            sys.stderr.flush()
            os._exit(5)
        if mode == "hang":
            return None
        if mode == "deaf":
            time.sleep(300)
        if mode == "stdin_closer":
            os.close(0)
            os.close(1)
            sys.stderr.write("closing my pipes\n")
            sys.stderr.flush()
            time.sleep(0.2)
            os._exit(2)
        burst = int(args.get("burst", 0))
        if burst:
            data = "burst" + "." * int(args.get("burst_pad", 0))
            note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                               "params": {"level": "info", "data": data}}, separators=(",", ":")).encode()
            write_raw((note + b"\n") * burst)
        delay = float(args.get("delay", 0))
        if delay:
            self.wait(delay, float(args.get("progress_every", 0)), params)
        if args.get("server_requests"):
            text = json.dumps(self.ask_client(request_id, args["server_requests"], bool(args.get("collide"))))
        elif "size" in args:
            text = "x" * int(args["size"])
        else:
            text = str(args.get("text", ""))
        if mode == "stderr_flood":
            chunk = b"E" * 65535 + b"\n"
            for _ in range(800):  # 50 MB
                sys.stderr.buffer.write(chunk)
            sys.stderr.buffer.write(b"flood done\n")
            sys.stderr.flush()
        if mode == "invalid_utf8":
            line = reply_bytes(request_id, text_result("@@"))
            write_raw(line.replace(b"@@", text.encode() + b" \xff\xfe\xc3 end") + b"\n")
            return None
        line = reply_bytes(request_id, text_result(text))
        if mode == "half_line_exit":
            write_raw(line[: len(line) // 2])
            os._exit(4)
        if mode == "no_newline_exit":
            write_raw(line)
            os._exit(0)
        if mode == "garbage":
            write_raw(b"INFO server: handling tools/call\n\n   \n" + b"DEBUG {not json\r\n" + b"[" * 100000 + b"\n")
            write_raw(line + b"\r\n")
            write_raw(b"WARN done\n")
            return None
        if mode == "odd_json":
            write_raw(b'42\n"just a string"\nnull\n')
            write_raw(b'[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"b"}},'
                      b'{"jsonrpc":"2.0","id":987654,"result":{}}, 7]\n')
            write_raw(b'{"jsonrpc":"2.0","method":17,"params":{}}\n')
            write_raw(b'{"jsonrpc":"2.0","id":true,"result":{"wrong":"bool id"}}\n')
            write_raw(line + b"\n" + line + b"\n")
            send({"jsonrpc": "2.0", "id": 424242, "result": {}})
            return None
        write_raw(line + b"\n")
        if "exit" in args:
            os._exit(int(args["exit"]))
        return None

    def wait(self, delay: float, progress_every: float, params: dict[str, Any]) -> None:
        token = (params.get("_meta") or {}).get("progressToken")
        end = time.monotonic() + delay
        step = 0
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            if progress_every and token is not None:
                time.sleep(min(progress_every, left))
                step += 1
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": step}})
            else:
                time.sleep(left)

    def ask_client(self, client_id: Any, requests: list[dict[str, Any]], collide: bool) -> list[Any]:
        """Send requests to the client (maybe reusing its pending id) and collect the replies in order."""
        ids = []
        for request in requests:
            own_id = client_id if collide else self.next_own_id
            self.next_own_id += 1
            message = {"jsonrpc": "2.0", "id": own_id, "method": request["method"]}
            if "params" in request:
                message["params"] = request["params"]
            send(message)
            ids.append(own_id)
            # with colliding ids several requests would share one id: ask one at a time
            while True:
                reply = read_message()
                if reply is None:
                    os._exit(9)
                if "method" not in reply and reply.get("id") == own_id:
                    ids[-1] = reply
                    break
        return ids

    def spawn_sleeper(self, *, escaped: bool, quiet: bool) -> None:
        kwargs: dict[str, Any] = {"start_new_session": escaped}
        if quiet:
            kwargs.update(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        child = subprocess.Popen(["sleep", "300"], **kwargs)
        if self.pidfile:
            with open(self.pidfile + ".tmp", "w") as fh:
                fh.write(str(child.pid))
            os.replace(self.pidfile + ".tmp", self.pidfile)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="normal")
    parser.add_argument("--pidfile")
    args = parser.parse_args()
    if args.mode == "crash_at_start":
        sys.stderr.write("fatal: cannot load config\n")
        return 3
    if args.mode == "ignore_sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    server = Server(args.mode, args.pidfile)
    if args.mode == "grandchild_daemon":
        server.spawn_sleeper(escaped=False, quiet=True)
    return server.serve()


if __name__ == "__main__":
    sys.exit(main())
