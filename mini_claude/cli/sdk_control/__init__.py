"""The Claude Agent SDK's control protocol over `-p --input-format stream-json --output-format stream-json`, so the
SDK's own `query()` / `ClaudeSDKClient` can drive this CLI (`ClaudeAgentOptions(cli_path=...)`).

channel.py   stdin demultiplexed into turns and control lines; whole-line stdout; our own requests with futures
driver.py    the SDK's requests answered over a session (initialize, interrupt, set_model, ...), turns run as tasks
adapters.py  the gate's questions as `can_use_tool`, the SDK's hook callbacks as async callables
mcp_peer.py  an SDK-process MCP server reached through `mcp_message` requests
"""
