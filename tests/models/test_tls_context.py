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
