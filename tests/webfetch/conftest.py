"""A loopback HTTP server for the WebFetch tests: HTML pages, redirects (same host, other host, other scheme), a
large body, a slow body, a cookie-setting hop and an echo of the request headers. `SiteServer.hits` lists each path
requested (host:path), so a test can prove a page was never fetched."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

PAGE = ("<html><head><title>T</title><script>steal()</script><style>p{color:red}</style></head><body>"
        "<h1>Hello</h1><p>A <a href=\"/docs\">link</a> and <b>bold</b> text.</p><ul><li>one</li><li>two</li></ul>"
        "</body></html>")
BIG_SIZE = 3_000_000


class SiteServer:
    def __init__(self) -> None:
        self.hits: list[str] = []
        self.release = threading.Event()  # the slow page waits for this (set at teardown): no thread left behind
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                site.hits.append(f"{self.headers.get('Host', '')}{self.path}")
                port = site.port
                if self.path == "/page":
                    self._send(200, PAGE.encode(), "text/html; charset=utf-8")
                elif self.path == "/same":
                    self._redirect("/page")
                elif self.path == "/other":
                    self._redirect(f"http://localhost:{port}/page")
                elif self.path == "/ftp":
                    self._redirect("ftp://127.0.0.1/file")
                elif self.path == "/loop":
                    self._redirect("/loop")
                elif self.path == "/cookie":
                    self.send_response(302)
                    self.send_header("Location", "/echo")
                    self.send_header("Set-Cookie", "session=s3cret; Path=/")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path == "/echo":
                    text = "".join(f"{k}: {v}\n" for k, v in self.headers.items())
                    self._send(200, text.encode(), "text/plain")
                elif self.path == "/big":
                    self._send(200, b"x" * BIG_SIZE, "text/plain")
                elif self.path == "/slow":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", "100")
                    self.end_headers()
                    self.wfile.write(b"start ")
                    self.wfile.flush()
                    site.release.wait(30)
                elif self.path == "/binary":
                    self._send(200, b"\x89PNG....", "image/png")
                else:
                    self._send(404, b"<html><body><p>not here</p></body></html>", "text/html")

            def _redirect(self, where: str) -> None:
                self.send_response(302)
                self.send_header("Location", where)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _send(self, code: int, body: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (the size cap): expected

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)


@pytest.fixture
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    yield server
    server.close()
