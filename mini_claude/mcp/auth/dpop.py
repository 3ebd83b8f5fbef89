"""DPoP (RFC 9449): a per-client proof-of-possession key, the `DPoP` proof JWT for each HTTP request, the server
nonces (`DPoP-Nonce`, remembered per origin), and recognising a `use_dpop_nonce` challenge from an authorization
server (400 + JSON error) or a resource server (401 + `WWW-Authenticate: DPoP error="use_dpop_nonce"`)."""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from mini_claude.errors import AuthError
from mini_claude.mcp.auth.jwt import (
    PrivateKey,
    b64url,
    jwk_thumbprint,
    load_private_key,
    public_jwk,
    sign_jwt_with_key,
)
from mini_claude.net import urls

__all__ = [
    "DPOP_NONCE_HEADER",
    "DpopKey",
    "htu_for",
    "is_nonce_challenge",
    "parse_www_authenticate",
]

DPOP_NONCE_HEADER = "DPoP-Nonce"
_RSA_KEY_BITS = 2048
_EC_CURVES: dict[str, Callable[[], ec.EllipticCurve]] = {
    "ES256": ec.SECP256R1, "ES384": ec.SECP384R1, "ES512": ec.SECP521R1}
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_BARE = re.compile(r"[^,\s]*")


def htu_for(url: str) -> str:
    """The `htu` claim for a request to `url`: the URL without query and fragment (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", "", ""))


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    # Plain dicts are case-sensitive; httpx.Headers is not. Handle both.
    for key, val in headers.items():
        if key.lower() == lowered:
            return val
    return None


class DpopKey:
    """An asymmetric key pair that binds tokens to this client. Keep one per (server, issuer) for as long as its
    tokens live: a DPoP-bound token is useless without the key it was bound to (see `to_pem`/`from_pem`)."""

    def __init__(self, private_key: PrivateKey, alg: str) -> None:
        self._key = private_key
        self.alg = alg
        self.public_jwk: dict[str, str] = public_jwk(private_key)
        self.thumbprint: str = jwk_thumbprint(self.public_jwk)
        self._nonces: dict[str, str] = {}
        # Fail now, not at the first proof, if the key does not fit the alg.
        sign_jwt_with_key({}, private_key, alg)

    def __repr__(self) -> str:
        return f"DpopKey(alg={self.alg!r}, thumbprint={self.thumbprint!r})"

    @classmethod
    def generate(cls, alg: str = "ES256") -> DpopKey:
        """A fresh key for `alg` (ES256/384/512, RS256/384/512, PS256/384/512, EdDSA)."""
        key: PrivateKey
        if alg in _EC_CURVES:
            key = ec.generate_private_key(_EC_CURVES[alg]())
        elif alg[:2] in ("RS", "PS"):
            key = rsa.generate_private_key(public_exponent=65537, key_size=_RSA_KEY_BITS)
        elif alg == "EdDSA":
            key = ed25519.Ed25519PrivateKey.generate()
        else:
            raise AuthError(f"unsupported DPoP algorithm {alg!r}")
        return cls(key, alg)

    @classmethod
    def from_pem(cls, key_pem: str, alg: str) -> DpopKey:
        """A key stored earlier with `to_pem` (nonces are not stored: servers hand out fresh ones)."""
        return cls(load_private_key(key_pem), alg)

    def to_pem(self) -> str:
        """The private key as unencrypted PKCS#8 PEM, for the 0600 token store only."""
        return self._key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode("ascii")

    def proof(self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None) -> str:
        """A fresh DPoP proof JWT for one request. With `access_token`, adds `ath` (for resource requests).
        Without an explicit `nonce`, uses the one last remembered for the URL's origin, if any."""
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": htu_for(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is None:
            nonce = self.nonce_for(url)
        if nonce is not None:
            claims["nonce"] = nonce
        return sign_jwt_with_key(claims, self._key, self.alg, headers={"typ": "dpop+jwt", "jwk": self.public_jwk})

    def remember_nonce(self, url: str, headers: Mapping[str, str]) -> None:
        """Store the `DPoP-Nonce` a response from `url` carried (any response may carry a new one)."""
        nonce = _header(headers, DPOP_NONCE_HEADER)
        if nonce and nonce.strip():
            self._nonces[urls.origin(url)] = nonce.strip()

    def nonce_for(self, url: str) -> str | None:
        """The nonce last remembered for the origin of `url`, if any."""
        return self._nonces.get(urls.origin(url))


def parse_www_authenticate(value: str) -> list[tuple[str, dict[str, str]]]:
    """The challenges in a WWW-Authenticate value as (lower-case scheme, {lower-case param: value}), in order.
    Tolerant: a token68 credential or junk is skipped rather than rejected."""
    challenges: list[tuple[str, dict[str, str]]] = []
    pos, end = 0, len(value)
    while pos < end:
        if value[pos] in " \t,":
            pos += 1
            continue
        token = _TOKEN.match(value, pos)
        if token is None:
            pos += 1
            continue
        after = token.end()
        while after < end and value[after] in " \t":
            after += 1
        if after < end and value[after] == "=" and challenges and not value.startswith("=", after + 1):
            # name=value: a parameter of the current challenge.
            pos = after + 1
            while pos < end and value[pos] in " \t":
                pos += 1
            quoted = _QUOTED.match(value, pos)
            if quoted is not None:
                param = re.sub(r"\\(.)", r"\1", quoted.group(1))
                pos = quoted.end()
            else:
                bare = _BARE.match(value, pos)
                assert bare is not None  # matches the empty string at worst
                param, pos = bare.group(0), bare.end()
            challenges[-1][1][token.group(0).lower()] = param
        elif after < end and value[after] == "=":
            pos = after + 1  # a token68 credential ("abc==") or a stray '=': skip it
            while pos < end and value[pos] == "=":
                pos += 1
        else:
            challenges.append((token.group(0).lower(), {}))
            pos = after
    return challenges


def is_nonce_challenge(status: int, headers: Mapping[str, str], body: dict[str, Any] | None) -> bool:
    """True if a response asks the client to retry with the server's DPoP nonce: an authorization server's 400
    `{"error": "use_dpop_nonce"}` (RFC 9449 §8) or a resource server's 401 with
    `WWW-Authenticate: DPoP error="use_dpop_nonce"` (§9)."""
    if status in (400, 401) and isinstance(body, dict) and body.get("error") == "use_dpop_nonce":
        return True
    if status != 401:
        return False
    www = _header(headers, "WWW-Authenticate")
    if not www:
        return False
    return any(
        scheme == "dpop" and params.get("error") == "use_dpop_nonce" for scheme, params in parse_www_authenticate(www)
    )
