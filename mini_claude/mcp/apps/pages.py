"""The two documents the loopback server writes itself: the session page and a view's sandbox proxy. No framework,
no outside load; each page's script and style are constants, so their CSP names them by hash (`'sha256-…'`) and no
other inline code can run. Per-page values go in a `<script type="application/json">` data block (never executed,
escaped so it cannot close its element); the scripts build every element with DOM calls, never from markup.

Session page (`http://127.0.0.1:P/<token>/`): listens to `events` (SSE) and shows each view, newest first, as a
titled sandbox iframe holding that view's proxy (`http://localhost:Pv/<token>/v/<id>/sandbox`, each view on its own
port, so its own origin). Envelopes:
`{"view", "added": {title, sandbox, allow, prefersBorder, mode}}`, `{"view", "message"}`, `{"view", "removed": true}`,
`{"view", "mode": "inline" | "fullscreen"}` (the session set it: a full-screen view covers the page, one at a time),
`{"live": [ids]}` (after a reconnect: drop any other frame), `{"superseded": true}` (another tab took the session:
stop and clear), `{"closed": true}` (the session ended). Host→view messages wait in the page until the proxy says
`ui/notifications/sandbox-proxy-ready`; `ui/notifications/sandbox-*` methods are never passed to a proxy. Every
message a proxy relays (checked: `event.source` is that view's frame and `event.origin` that view's origin) is POSTed
to `rpc` as `{"page", "view", "message"}`, one after another; a view's `ui/notifications/size-changed` also sets its
frame's height (50..4000 px). On each connect and whenever the browser's colour scheme changes, the page POSTs
`{"page", "theme": "light" | "dark"}` in the same queue (so before any view message that follows). Each view's
title bar has a button that switches it between inline and full screen (Esc leaves full screen too while the page
has the keyboard: a view that has it keeps Esc to itself, and the button stays on top, outside every view's frame);
each change the page makes is POSTed as `{"page", "view", "mode"}`, and so is a view the page had to take out of
full screen for another.

Proxy page (one per view, same origin as its view): creates the view's iframe (`sandbox="allow-scripts
allow-same-origin allow-forms"`, the view's `allow`, `src="view"`), relays JSON-RPC objects both ways (from the
parent only if it is the host origin, from the view only if it is the view's own window and origin; always posting
to an explicit origin), drops every `ui/notifications/sandbox-*` method in both directions, holds host→view
messages until the view has loaded or spoken, and announces itself with `ui/notifications/sandbox-proxy-ready`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

__all__ = ["PROXY_SCRIPT_HASH", "PROXY_STYLE_HASH", "SESSION_SCRIPT_HASH", "SESSION_STYLE_HASH", "proxy_page",
           "session_page"]

_SESSION_STYLE = """
:root{color-scheme:light dark;font-family:system-ui,sans-serif}
body{margin:0 auto;max-width:72rem;padding:0 1rem 2rem}
header{display:flex;align-items:baseline;gap:1rem;border-bottom:1px solid #8884}
h1{font-size:1.1rem;margin:.8rem 0}
#status{font-size:.85rem;opacity:.7}
#views:empty::before{content:"No views yet.";display:block;margin:2rem 0;opacity:.7}
.view{margin:1.2rem 0}
.view:target .title{font-weight:bold}
.bar{display:flex;align-items:baseline;gap:.6rem;margin:0 0 .3rem}
.title{font-size:.9rem;overflow-wrap:anywhere}
.mode{margin-left:auto;font-size:.75rem}
.view.full{position:fixed;inset:0;z-index:1;margin:0;padding:.4rem .6rem;display:flex;flex-direction:column;background:Canvas}
.view.full iframe{flex:1;height:auto!important}
iframe{display:block;width:100%;height:400px;border:1px solid #8886;border-radius:4px;box-sizing:border-box}
iframe.plain{border:0}
"""

_SESSION_SCRIPT = """
(() => {
  "use strict";
  const cfg = JSON.parse(document.getElementById("config").textContent);
  const RESERVED = "ui/notifications/sandbox-", MAX_HELD = 1000;
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const pageId = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const list = document.getElementById("views"), status = document.getElementById("status");
  const views = new Map();
  let chain = Promise.resolve();
  const isMessage = (m) => m !== null && typeof m === "object" && !Array.isArray(m) && m.jsonrpc === "2.0";
  const reserved = (m) => typeof m.method === "string" && m.method.startsWith(RESERVED);

  function viewOrigin(url) {
    try {
      const parsed = new URL(url);
      return parsed.protocol === "http:" && parsed.hostname === "localhost" ? parsed.origin : null;
    } catch { return null; }
  }

  function addView(id, info) {
    const origin = viewOrigin(info.sandbox);
    if (views.has(id) || origin === null) return;
    const section = document.createElement("section");
    section.className = "view";
    section.id = "view-" + id;
    const bar = document.createElement("div");
    bar.className = "bar";
    const title = document.createElement("div");
    title.className = "title";
    title.textContent = String(info.title);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "mode";
    button.onclick = () => switchMode(id, section.classList.contains("full") ? "inline" : "fullscreen");
    bar.append(title, button);
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    if (info.allow) frame.setAttribute("allow", String(info.allow));
    frame.setAttribute("title", String(info.title));
    frame.dataset.view = id;
    if (info.prefersBorder === false) frame.className = "plain";
    frame.src = info.sandbox;
    section.append(bar, frame);
    list.prepend(section);
    views.set(id, {section, frame, button, origin, ready: false, held: []});
    setMode(id, info.mode === "fullscreen" ? "fullscreen" : "inline");
    if (location.hash === "#view-" + id) section.scrollIntoView();
  }

  function setMode(id, mode) {
    const view = views.get(id);
    if (!view || (mode !== "inline" && mode !== "fullscreen")) return;
    if (mode === "fullscreen") {
      for (const [other, v] of views) {
        if (other !== id && v.section.classList.contains("full")) { v.section.classList.remove("full"); mark(v); send({view: other, mode: "inline"}); }
      }
    }
    view.section.classList.toggle("full", mode === "fullscreen");
    mark(view);
  }
  function mark(view) {
    view.button.textContent = view.section.classList.contains("full") ? "Exit full screen" : "Full screen";
  }
  function switchMode(id, mode) {
    setMode(id, mode);
    send({view: id, mode});
  }
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    for (const [id, view] of views) if (view.section.classList.contains("full")) switchMode(id, "inline");
  });

  function removeView(id) {
    const view = views.get(id);
    if (view) { view.section.remove(); views.delete(id); }
  }

  function toView(id, message) {
    const view = views.get(id);
    if (!view || !isMessage(message) || reserved(message)) return;
    if (view.ready) view.frame.contentWindow.postMessage(message, view.origin);
    else if (view.held.length < MAX_HELD) view.held.push(message);
  }

  function send(fields) {
    let body;
    try { body = JSON.stringify({page: pageId, ...fields}); } catch { return; }
    chain = chain.then(() => fetch(cfg.base + "rpc", {method: "POST", body, cache: "no-store",
      credentials: "omit", headers: {"Content-Type": "application/json"}})).catch(() => {});
  }
  const post = (id, message) => send({view: id, message});
  const dark = window.matchMedia("(prefers-color-scheme: dark)");
  const sendTheme = () => send({theme: dark.matches ? "dark" : "light"});
  dark.addEventListener("change", sendTheme);

  function fromView(id, message) {
    const view = views.get(id);
    if (message.method === "ui/notifications/sandbox-proxy-ready") {
      view.ready = true;
      for (const held of view.held.splice(0)) view.frame.contentWindow.postMessage(held, view.origin);
    } else if (message.method === "ui/notifications/size-changed" && message.params) {
      const height = Number(message.params.height);
      if (Number.isFinite(height)) view.frame.style.height = Math.min(4000, Math.max(50, Math.ceil(height))) + "px";
    }
    post(id, message);
  }

  window.addEventListener("message", (event) => {
    if (!isMessage(event.data)) return;
    for (const [id, view] of views) {
      if (event.source === view.frame.contentWindow && event.origin === view.origin) {
        fromView(id, event.data);
        return;
      }
    }
  });

  function clear() { for (const id of [...views.keys()]) removeView(id); }
  const events = new EventSource(cfg.base + "events?page=" + pageId);
  events.onopen = () => { status.textContent = "connected"; sendTheme(); };
  events.onerror = () => { status.textContent = "disconnected, retrying"; };
  events.onmessage = (event) => {
    let env;
    try { env = JSON.parse(event.data); } catch { return; }
    if (env === null || typeof env !== "object") return;
    if (env.added) addView(String(env.view), env.added);
    else if (env.message) toView(String(env.view), env.message);
    else if (env.removed) removeView(String(env.view));
    else if (env.mode) setMode(String(env.view), String(env.mode));
    else if (Array.isArray(env.live)) { for (const id of [...views.keys()]) if (!env.live.includes(id)) removeView(id); }
    else if (env.superseded) { events.close(); clear(); status.textContent = "open in another tab (reload to show the views here)"; }
    else if (env.closed) { events.close(); status.textContent = "the session has ended"; }
  };
})();
"""

_PROXY_STYLE = """
html,body{margin:0;height:100%;overflow:hidden;background:transparent}
iframe{display:block;border:0;width:100%;height:100%}
"""

_PROXY_SCRIPT = """
(() => {
  "use strict";
  const cfg = JSON.parse(document.getElementById("config").textContent);
  const HOST = cfg.hostOrigin, SELF = location.origin, RESERVED = "ui/notifications/sandbox-", MAX_HELD = 1000;
  const inner = document.createElement("iframe");
  inner.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  if (cfg.allow) inner.setAttribute("allow", cfg.allow);
  let live = false;
  const held = [];
  const isMessage = (m) => m !== null && typeof m === "object" && !Array.isArray(m) && m.jsonrpc === "2.0";
  const reserved = (m) => typeof m.method === "string" && m.method.startsWith(RESERVED);
  function open() {
    live = true;
    for (const message of held.splice(0)) inner.contentWindow.postMessage(message, SELF);
  }
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!isMessage(message) || reserved(message)) return;
    if (event.source === window.parent && event.origin === HOST) {
      if (live) inner.contentWindow.postMessage(message, SELF);
      else if (held.length < MAX_HELD) held.push(message);
    } else if (event.source === inner.contentWindow && event.origin === SELF) {
      if (!live) open();
      window.parent.postMessage(message, HOST);
    }
  });
  inner.addEventListener("load", () => { if (!live) open(); });
  inner.src = "view";
  document.body.appendChild(inner);
  window.parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {}}, HOST);
})();
"""


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


SESSION_SCRIPT_HASH = _hash(_SESSION_SCRIPT)
SESSION_STYLE_HASH = _hash(_SESSION_STYLE)
PROXY_SCRIPT_HASH = _hash(_PROXY_SCRIPT)
PROXY_STYLE_HASH = _hash(_PROXY_STYLE)


def _data_block(config: dict[str, Any]) -> str:
    """JSON that cannot end its `<script>` element or open a comment inside it."""
    text = json.dumps(config, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def session_page(*, base_path: str) -> bytes:
    """The session page. `base_path` is `/<token>/`."""
    config = _data_block({"base": base_path})
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1"><title>mini-claude views</title>'
        f"<style>{_SESSION_STYLE}</style>"
        f'<script type="application/json" id="config">{config}</script></head>\n'
        '<body><header><h1>mini-claude views</h1><span id="status">connecting</span></header>'
        f'<main id="views"></main><script>{_SESSION_SCRIPT}</script></body></html>\n'
    ).encode()


def proxy_page(*, host_origin: str, allow: str) -> bytes:
    """One view's sandbox proxy; it frames `view` beside it. `allow` is the view iframe's `allow` attribute."""
    config = _data_block({"hostOrigin": host_origin, "allow": allow})
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<style>{_PROXY_STYLE}</style>"
        f'<script type="application/json" id="config">{config}</script></head>\n'
        f"<body><script>{_PROXY_SCRIPT}</script></body></html>\n"
    ).encode()
