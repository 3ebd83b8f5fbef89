#!/usr/bin/env python3
"""A stdlib stdio MCP server shaped like the MCP Apps examples (extension `io.modelcontextprotocol/ui`): tools that
carry `_meta.ui` as the npm example servers send it (the nested `resourceUri` and `visibility`, and the deprecated
flat `ui/resourceUri` key), some of them for its view only, and the `ui://` resource they point at — a real view
that the browser tests (tests/integration/apps/) drive.

Tools:
    show_board {}   visibility ["model", "app"], with a view: "board shown"
    refresh {}      visibility ["app"]: the view's own tool, never the model's: "refreshed"
    bump {}         visibility ["app"]: another view-only tool, which the browser test's settings deny: "bumped"
    secret {}       visibility ["model"]: the model's, never the view's: "secret"
    plain {}        no `_meta`: "plain"

The resource `ui://board/view.html` declares `_meta.ui.csp.connectDomains: ["https://evil.example"]` (in the list
entry and in the content item), which a host must not grant unasked. The view (`VIEW_HTML`: plain JS, no SDK, no
outside loads) speaks the view side over `postMessage` to `window.parent`: `ui/initialize`, then
`ui/notifications/initialized`; it shows the tool input (`#tool-input`) and result (`#tool-result`), answers
`ui/resource-teardown` and `ping`, and has a button per check, each writing "ok: ..." or "error: ..." into its own
element: `#refresh-btn` → `#refresh-out` (tools/call refresh), `#bump-btn` → `#bump-out` (tools/call bump),
`#secret-btn` → `#secret-out` (tools/call secret), `#fetch-btn` → `#fetch-out` (fetch https://evil.example/; a CSP
violation also lands in `#csp-out`), `#message-btn` → `#message-out` (ui/message with `MESSAGE_TEXT`). `#status`
says "initialized" once the host answered `ui/initialize` ("torn down" after `ui/resource-teardown`), and `#granted-csp` shows the CSP domains the host says it
granted (`hostCapabilities.sandbox.csp`, `{}` when none); `#theme` shows `hostContext.theme` as given in the
`ui/initialize` result and as changed by `ui/notifications/host-context-changed`.

With `$APPS_SERVER_LOG` set, every `tools/call` the server runs appends its tool name as a line to that file, so a
test sees what really ran. Exits on stdin EOF.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

VIEW = "ui://board/view.html"
MIME = "text/html;profile=mcp-app"
MESSAGE_TEXT = "please summarise the board"
RESOURCE_META = {"ui": {"csp": {"connectDomains": ["https://evil.example"]}}}


def _ui(visibility: list[str]) -> dict[str, Any]:
    return {"ui": {"resourceUri": VIEW, "visibility": visibility}, "ui/resourceUri": VIEW}


TOOLS: list[dict[str, Any]] = [
    {"name": "show_board", "description": "Show the board.", "inputSchema": {"type": "object"},
     "_meta": _ui(["model", "app"])},
    {"name": "refresh", "description": "Refresh the board (for the view).", "inputSchema": {"type": "object"},
     "_meta": _ui(["app"])},
    {"name": "bump", "description": "Bump the board's counter (for the view).", "inputSchema": {"type": "object"},
     "_meta": _ui(["app"])},
    {"name": "secret", "description": "Tell the model a secret.", "inputSchema": {"type": "object"},
     "_meta": {"ui": {"visibility": ["model"]}}},
    {"name": "plain", "description": "A tool without a view.", "inputSchema": {"type": "object"}},
]
ANSWERS = {"show_board": "board shown", "refresh": "refreshed", "bump": "bumped", "secret": "secret",
           "plain": "plain"}

VIEW_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>board</title>
<style>body{font-family:sans-serif;margin:8px} output{display:block;min-height:1em;margin:2px 0 6px}</style>
</head><body>
<h1>Board</h1>
<p>status: <output id="status">loading</output></p>
<p>granted csp: <output id="granted-csp"></output></p>
<p>theme: <output id="theme"></output></p>
<p>tool input: <output id="tool-input"></output></p>
<p>tool result: <output id="tool-result"></output></p>
<button id="refresh-btn">Refresh</button><output id="refresh-out"></output>
<button id="bump-btn">Bump</button><output id="bump-out"></output>
<button id="secret-btn">Secret</button><output id="secret-out"></output>
<button id="fetch-btn">Fetch outside</button><output id="fetch-out"></output><output id="csp-out"></output>
<button id="message-btn">Send message</button><output id="message-out"></output>
<script>
"use strict";
const MESSAGE_TEXT = __MESSAGE_TEXT__;
const pending = new Map();
let nextId = 1;
const $ = (id) => document.getElementById(id);
const post = (message) => window.parent.postMessage(Object.assign({jsonrpc: "2.0"}, message), "*");
function request(method, params) {
  const id = nextId++;
  post({id, method, params});
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { pending.delete(id); reject(new Error("no answer to " + method)); }, 20000);
    pending.set(id, {resolve, reject, timer});
  });
}
const textOf = (result) => ((result && result.content) || []).map((b) => b.text || "").join("");
window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const m = event.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.method === undefined && pending.has(m.id)) {
    const p = pending.get(m.id);
    pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.error) p.reject(new Error(m.error.message || JSON.stringify(m.error))); else p.resolve(m.result);
    return;
  }
  if (m.method === "ui/notifications/tool-input") $("tool-input").textContent = JSON.stringify(m.params.arguments);
  else if (m.method === "ui/notifications/tool-result") $("tool-result").textContent = textOf(m.params);
  else if (m.method === "ui/notifications/tool-cancelled") $("tool-result").textContent = "cancelled";
  else if (m.method === "ui/notifications/host-context-changed" && m.params && m.params.theme)
    $("theme").textContent = m.params.theme;
  else if (m.id !== undefined && m.method === "ui/resource-teardown") {
    $("status").textContent = "torn down";
    post({id: m.id, result: {}});
  }
  else if (m.id !== undefined && m.method === "ping") post({id: m.id, result: {}});
  else if (m.id !== undefined) post({id: m.id, error: {code: -32601, message: "no method " + m.method}});
});
document.addEventListener("securitypolicyviolation", (e) => {
  $("csp-out").textContent = e.effectiveDirective + " blocked " + e.blockedURI;
});
async function show(out, work) {
  $(out).textContent = "…";
  try { $(out).textContent = "ok: " + await work(); }
  catch (e) { $(out).textContent = "error: " + (e && e.message ? e.message : String(e)); }
}
async function callTool(name) {
  const result = await request("tools/call", {name, arguments: {}});
  if (result && result.isError) throw new Error(textOf(result) || "isError");
  return textOf(result);
}
$("refresh-btn").onclick = () => show("refresh-out", () => callTool("refresh"));
$("bump-btn").onclick = () => show("bump-out", () => callTool("bump"));
$("secret-btn").onclick = () => show("secret-out", () => callTool("secret"));
$("fetch-btn").onclick = () => show("fetch-out", async () => (await fetch("https://evil.example/")).status);
$("message-btn").onclick = () => show("message-out", async () => {
  await request("ui/message", {role: "user", content: [{type: "text", text: MESSAGE_TEXT}]});
  return "sent";
});
request("ui/initialize", {appInfo: {name: "board", version: "1"}, appCapabilities: {},
                          protocolVersion: "2026-01-26"}).then((result) => {
  const sandbox = (result && result.hostCapabilities && result.hostCapabilities.sandbox) || {};
  $("granted-csp").textContent = JSON.stringify(sandbox.csp || {});
  $("theme").textContent = (result && result.hostContext && result.hostContext.theme) || "";
  $("status").textContent = "initialized";
  post({method: "ui/notifications/initialized", params: {}});
  post({method: "ui/notifications/size-changed",
        params: {width: document.body.scrollWidth, height: document.body.scrollHeight}});
}, (e) => { $("status").textContent = "error: " + e.message; });
</script>
</body></html>
""".replace("__MESSAGE_TEXT__", json.dumps(MESSAGE_TEXT))


def _record(name: str) -> None:
    log = os.environ.get("APPS_SERVER_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as file:
            file.write(name + "\n")


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None
    if method == "initialize":
        result: dict[str, Any] = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                                  "capabilities": {"tools": {}, "resources": {}},
                                  "serverInfo": {"name": "apps", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name = params.get("name")
        if name not in ANSWERS:
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": f"no tool {name}"}}
        _record(name)
        result = {"content": [{"type": "text", "text": ANSWERS[name]}]}
    elif method == "resources/list":
        result = {"resources": [{"uri": VIEW, "name": "board", "mimeType": MIME, "_meta": RESOURCE_META}]}
    elif method == "resources/read":
        if params.get("uri") != VIEW:
            return {"jsonrpc": "2.0", "id": message["id"],
                    "error": {"code": -32002, "message": f"no resource {params.get('uri')}"}}
        result = {"contents": [{"uri": VIEW, "mimeType": MIME, "text": VIEW_HTML, "_meta": RESOURCE_META}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = answer(message) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
