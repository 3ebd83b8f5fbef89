"""A loopback OAuth authorization server + protected MCP endpoint in one stdlib HTTP server (its own thread),
for the auth tests. Behaviour is set through `MockOAuth.options`; every request is recorded in `requests`.

Routes: /.well-known/oauth-protected-resource/mcp (PRM), /.well-known/oauth-authorization-server{prefix}
(AS metadata), {prefix}/authorize (302 back with code/state/iss), {prefix}/token (PKCE-checked),
{prefix}/register (DCR), POST /mcp (JSON-RPC: initialize, tools/list, tools/call; Bearer required)."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx

__all__ = ["HeadlessAuthorizer", "MockOAuth"]


@dataclass
class Grant:
    scope: list[str]
    expires_at: float


@dataclass
class MockOAuth:
    options: dict[str, Any] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, Grant] = field(default_factory=dict)
    refresh_tokens: dict[str, list[str]] = field(default_factory=dict)
    clients: dict[str, str | None] = field(default_factory=dict)
    challenges: dict[str, str] = field(default_factory=dict)
    counter: int = 0

    def __post_init__(self) -> None:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                mock._handle(self, "GET")

            def do_POST(self) -> None:
                mock._handle(self, "POST")

            def do_DELETE(self) -> None:
                mock._handle(self, "DELETE")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    # ---- lifecycle ----
    def start(self) -> MockOAuth:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def issuer(self) -> str:
        return self.base + self.options.get("prefix", "")

    def opt(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]

    def of(self, path_end: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith(path_end)]

    # ---- dispatch ----
    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("content-length") or 0)
        body = h.rfile.read(length) if length else b""
        record = {"method": method, "path": parts.path, "query": dict(parse_qsl(parts.query)),
                  "headers": {k.lower(): v for k, v in h.headers.items()}, "body": body.decode("utf-8", "replace")}
        self.requests.append(record)
        prefix = self.opt("prefix", "")
        routes = {
            ("GET", "/.well-known/oauth-protected-resource/mcp"): self._prm,
            ("GET", f"/.well-known/oauth-authorization-server{prefix}"): self._as_metadata,
            ("GET", f"{prefix}/authorize"): self._authorize,
            ("POST", f"{prefix}/token"): self._token,
            ("POST", f"{prefix}/register"): self._register,
            ("POST", "/mcp"): self._mcp,
        }
        route = routes.get((method, parts.path))
        if route is None:
            self._send(h, 404, {"error": "not_found"})
            return
        route(h, record)

    def _send(self, h: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    # ---- metadata ----
    def _prm(self, h: BaseHTTPRequestHandler, record: dict[str, Any]) -> None:
        prm: dict[str, Any] = {"resource": self.opt("prm_resource", self.mcp_url),
                               "authorization_servers": self.opt("prm_servers", [self.issuer])}
        if self.opt("prm_scopes") is not None:
            prm["scopes_supported"] = self.opt("prm_scopes")
        self._send(h, 200, prm)

    def _as_metadata(self, h: BaseHTTPRequestHandler, record: dict[str, Any]) -> None:
        meta: dict[str, Any] = {
            "issuer": self.opt("metadata_issuer", self.issuer),
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": self.opt("token_endpoint", f"{self.issuer}/token"),
            "response_types_supported": ["code"],
            "grant_types_supported": self.opt("grant_types", ["authorization_code", "refresh_token"]),
            "code_challenge_methods_supported": self.opt("pkce_methods", ["S256"]),
            "token_endpoint_auth_methods_supported": self.opt("auth_methods", ["none"]),
        }
        if self.opt("registration", True):
            meta["registration_endpoint"] = f"{self.issuer}/register"
        if self.opt("as_scopes") is not None:
            meta["scopes_supported"] = self.opt("as_scopes")
        if self.opt("cimd"):
            meta["client_id_metadata_document_supported"] = True
        if self.opt("iss_supported") is not None:
            meta["authorization_response_iss_parameter_supported"] = self.opt("iss_supported")
        self._send(h, 200, meta)

    # ---- the AS ----
    def _authorize(self, h: BaseHTTPRequestHandler, record: dict[str, Any]) -> None:
        q = record["query"]
        self.counter += 1
        code = f"code-{self.counter}"
        self.challenges[code] = q.get("code_challenge", "")
        self.options.setdefault("_scopes_by_code", {})[code] = (q.get("scope") or "").split()
        params = {"code": code, "state": q.get("state", "")}
        iss_mode = self.opt("iss_mode", "correct")
        if iss_mode == "correct":
            params["iss"] = self.issuer
        elif iss_mode == "wrong":
            params["iss"] = "https://evil.example.com"
        h.send_response(302)
        h.send_header("Location", q["redirect_uri"] + "?" + urlencode(params))
        h.send_header("Content-Length", "0")
        h.end_headers()

    def _issue(self, scope: list[str]) -> dict[str, Any]:
        self.counter += 1
        token = f"at-{self.counter}-secretvalue"
        expires_in = self.opt("expires_in", 3600)
        self.tokens[token] = Grant(scope, time.time() + expires_in)
        reply: dict[str, Any] = {"access_token": token, "token_type": "Bearer", "expires_in": expires_in,
                                 "scope": " ".join(scope)}
        if self.opt("refresh", True):
            refresh = f"rt-{self.counter}-secretvalue"
            self.refresh_tokens[refresh] = scope
            reply["refresh_token"] = refresh
        return reply

    def _token(self, h: BaseHTTPRequestHandler, record: dict[str, Any]) -> None:
        form = dict(parse_qsl(record["body"]))
        record["form"] = form
        grant = form.get("grant_type")
        if grant == "authorization_code":
            code = form.get("code", "")
            expected = self.challenges.pop(code, None)
            verifier = form.get("code_verifier", "")
            computed = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if expected is None or computed != expected:
                self._send(h, 400, {"error": "invalid_grant", "error_description": "PKCE mismatch"})
                return
            self._send(h, 200, self._issue(self.options["_scopes_by_code"][code]), {"Cache-Control": "no-store"})
        elif grant == "refresh_token":
            scope = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if scope is None or self.opt("refresh_fails"):
                self._send(h, 400, {"error": "invalid_grant"})
                return
            self._send(h, 200, self._issue(scope))
        elif grant == "client_credentials":
            self._send(h, 200, self._issue((form.get("scope") or "").split()))
        else:
            self._send(h, 400, {"error": "unsupported_grant_type"})

    def _register(self, h: BaseHTTPRequestHandler, record: dict[str, Any]) -> None:
        body = json.loads(record["body"])
        record["json"] = body
        self.counter += 1
        client_id = f"client-{self.counter}"
        secret = self.opt("dcr_secret")
        self.clients[client_id] = secret
        reply = {"client_id": client_id, "redirect_uris": body.get("redirect_uris", [])}
        if secret:
            reply["client_secret"] = secret
            reply["token_endpoint_auth_method"] = "client_secret_basic"
        self._send(h, 201, reply)

    # ---- the MCP endpoint ----
    def _mcp(self, h: BaseHTTPRequestHandler, record: dict[str, Any]) -> None:
        msg = json.loads(record["body"] or "{}")
        method = msg.get("method")
        prm_url = f"{self.base}/.well-known/oauth-protected-resource/mcp"
        challenge = f'Bearer resource_metadata="{prm_url}"'
        if self.opt("www_scope"):
            challenge += f', scope="{self.opt("www_scope")}"'
        auth = record["headers"].get("authorization", "")
        grant = self.tokens.get(auth[7:]) if auth.startswith("Bearer ") else None
        if grant is None or grant.expires_at < time.time():
            self._send(h, 401, {"error": "invalid_token"}, {"WWW-Authenticate": challenge})
            return
        needed = self.opt("call_scope") if method == "tools/call" else None
        if needed and (self.opt("always_403") or needed not in grant.scope):
            self._send(h, 403, {"error": "insufficient_scope"}, {
                "WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{needed}", '
                                    f'resource_metadata="{prm_url}"'})
            return
        if "id" not in msg:
            h.send_response(202)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        if method == "initialize":
            result: Any = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "mock-oauth", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "ok"}]}
        else:
            self._send(h, 200, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "nope"}})
            return
        self._send(h, 200, {"jsonrpc": "2.0", "id": msg["id"], "result": result})


class HeadlessAuthorizer:
    """Completes a login without a browser: GET the authorization URL, read the redirect's `Location`."""

    def __init__(self, redirect_uri: str = "http://localhost:3000/callback") -> None:
        self._redirect_uri = redirect_uri
        self.urls: list[str] = []

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def authorize(self, authorization_url: str) -> dict[str, str]:
        self.urls.append(authorization_url)
        async with httpx.AsyncClient() as http:
            response = await http.get(authorization_url, follow_redirects=False, timeout=10)
        location = response.headers["location"]
        return dict(parse_qsl(urlsplit(location).query, keep_blank_values=True))
