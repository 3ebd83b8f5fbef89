"""An MCP server living in the SDK's process, reached through `mcp_message` control requests: our real MCP client
over the peer's transport does the handshake, lists and calls the server's tools; a request the SDK never answers
fails as that request alone once the SDK's stdin ends."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mini_claude.cli.sdk_control.channel import ControlChannel, LineWriter
from mini_claude.cli.sdk_control.mcp_peer import SdkMcpPeer, sdk_server_names
from mini_claude.errors import McpError
from mini_claude.mcp.client import McpClient
from mini_claude.mcp.transports.inprocess import InProcessTransport
from tests.helpers import eventually
from tests.sdk_cli.test_channel import FakeStdin

pytestmark = pytest.mark.timeout(20)

TOOL = {"name": "add", "description": "adds", "inputSchema": {"type": "object", "properties": {}}}


class SdkSide:
    """What the SDK does with each `mcp_message`: hands it to its server (here: a tiny one) and answers."""

    def __init__(self, stdin: FakeStdin, *, silent: bool = False) -> None:
        self.stdin = stdin
        self.silent = silent
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def write(self, text: str) -> int:
        for line in text.splitlines():
            record = json.loads(line)
            request = record["request"]
            assert request["subtype"] == "mcp_message"
            self.seen.append((request["server_name"], request["message"]))
            if not self.silent:
                answer = {"mcp_response": self.serve(request["message"])}
                self.stdin.send({"type": "control_response", "response": {
                    "subtype": "success", "request_id": record["request_id"], "response": answer}})
        return len(text)

    def flush(self) -> None:
        pass

    @staticmethod
    def serve(message: dict[str, Any]) -> dict[str, Any]:
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            result: dict[str, Any] = {"protocolVersion": message["params"]["protocolVersion"],
                                      "capabilities": {"tools": {}}, "serverInfo": {"name": "calc", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            args = message["params"]["arguments"]
            result = {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}
        else:  # a notification: the SDK answers with an empty result
            return {"jsonrpc": "2.0", "result": {}}
        return {"jsonrpc": "2.0", "id": ident, "result": result}


async def test_the_mcp_client_lists_and_calls_a_server_in_the_sdk_process() -> None:
    stdin = FakeStdin()
    sdk = SdkSide(stdin)
    chan = ControlChannel(stdin, LineWriter(sdk), lambda body: asyncio.sleep(0, None))  # type: ignore[arg-type]
    chan.start()
    client = McpClient(InProcessTransport(SdkMcpPeer(chan, "calc"), server="calc"), name="calc")
    try:
        await client.connect(timeout_s=5)
        assert [t.name for t in await client.list_tools()] == ["add"]
        result = await client.call_tool("add", {"a": 40, "b": 2})
        assert result.content[0]["text"] == "42"
    finally:
        await client.close()
        await chan.aclose()
    methods = [message.get("method") for _, message in sdk.seen]
    assert {"initialize", "notifications/initialized", "tools/list", "tools/call"} <= set(methods)
    assert {server for server, _ in sdk.seen} == {"calc"}


async def test_a_request_left_unanswered_fails_when_the_sdk_input_ends() -> None:
    stdin = FakeStdin()
    sdk = SdkSide(stdin, silent=True)
    chan = ControlChannel(stdin, LineWriter(sdk), lambda body: asyncio.sleep(0, None))  # type: ignore[arg-type]
    chan.start()
    client = McpClient(InProcessTransport(SdkMcpPeer(chan, "calc"), server="calc"), name="calc")
    connecting = asyncio.create_task(client.connect(timeout_s=10))
    await eventually(lambda: sdk.seen, "the first mcp_message")
    stdin.end()
    with pytest.raises(McpError):
        await asyncio.wait_for(connecting, 5)
    await client.close()
    await chan.aclose()


def test_sdk_server_names() -> None:
    assert sdk_server_names({"calc": {"type": "sdk", "name": "calc"}, "fs": {"command": "x"}}) == ["calc"]
