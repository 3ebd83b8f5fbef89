"""The process's one TLS context (net/tls.py): a warm-up build in a thread is the context every client then gets,
and a build that fails (an unreadable SSL_CERT_FILE) fails every user of it with the cause. Run in a fresh
interpreter each: the context is per process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT

WARM_THEN_USE = """
import threading
from mini_claude.net.tls import tls_context, warm_tls_context
warm_tls_context()
warm_tls_context()  # once per process
builders = [t for t in threading.enumerate() if t.name == "tls-context"]
first = tls_context()
assert tls_context() is first
from mini_claude.models.anthropic_http import AnthropicHttpModel
model = AnthropicHttpModel("m", api_key="k", base_url="https://api.example.invalid")
print("ok", len(builders) <= 1, first.verify_mode.name)
"""

BAD_BUNDLE = """
from mini_claude.net.tls import tls_context, warm_tls_context
warm_tls_context()
for _ in range(2):
    try:
        tls_context()
    except Exception as exc:
        print(type(exc).__name__)
"""


def _run(code: str, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **env}, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_warmed_context_is_the_one_every_client_gets() -> None:
    assert _run(WARM_THEN_USE) == "ok True CERT_REQUIRED"


def test_an_unreadable_bundle_fails_every_user(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.pem"
    bundle.write_text("not a certificate\n")
    assert _run(BAD_BUNDLE, SSL_CERT_FILE=str(bundle)).split() == ["SSLError", "SSLError"]


PLAIN_HTTP_ONLY = """
import ssl
from mini_claude.net import tls
from mini_claude.models.anthropic_http import AnthropicHttpModel
model = AnthropicHttpModel("m", api_key="k", base_url="http://127.0.0.1:9")
plain = tls.tls_context_for("HTTP://127.0.0.1:9/mcp")
stats = plain.cert_store_stats()
print(tls._context is None, plain.verify_mode.name, plain.check_hostname, stats["x509_ca"], stats["x509"])
secure = tls.tls_context_for("https://api.example.invalid")
print(tls._context is not None, secure.verify_mode.name, secure.cert_store_stats()["x509_ca"] > 0)
"""


def test_a_plain_http_client_loads_no_bundle_and_trusts_no_certificate() -> None:
    # a local model or MCP server over http: no CA bundle is loaded for it (nor the shared context built), and a
    # redirect or a mistake that took such a client to https would find nothing trusted: it fails closed
    plain, secure = _run(PLAIN_HTTP_ONLY).splitlines()
    assert plain.split() == ["True", "CERT_REQUIRED", "True", "0", "0"]
    assert secure.split() == ["True", "CERT_REQUIRED", "True"]
