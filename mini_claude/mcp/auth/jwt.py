"""JWS compact signing (RFC 7515/7518) with `cryptography`: JWTs, RFC 7523 client assertions, public JWKs and
RFC 7638 thumbprints. Signs only; verifying tokens is the servers' business (`decode_unverified` is for
diagnostics). Key material never appears in an error message."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from mini_claude.errors import AuthError

__all__ = [
    "CLIENT_ASSERTION_LIFETIME_S",
    "SUPPORTED_ALGS",
    "PrivateKey",
    "b64url",
    "b64url_decode",
    "client_assertion",
    "decode_unverified",
    "jwk_thumbprint",
    "load_private_key",
    "public_jwk",
    "sign_jwt",
    "sign_jwt_with_key",
]

CLIENT_ASSERTION_LIFETIME_S = 300

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey

_RSA_PKCS1: dict[str, type[hashes.HashAlgorithm]] = {
    "RS256": hashes.SHA256,
    "RS384": hashes.SHA384,
    "RS512": hashes.SHA512,
}
_RSA_PSS: dict[str, type[hashes.HashAlgorithm]] = {
    "PS256": hashes.SHA256,
    "PS384": hashes.SHA384,
    "PS512": hashes.SHA512,
}
# alg -> (curve name, hash): RFC 7518 §3.4 ties each ES alg to exactly one curve.
_EC: dict[str, tuple[str, type[hashes.HashAlgorithm]]] = {
    "ES256": ("secp256r1", hashes.SHA256),
    "ES384": ("secp384r1", hashes.SHA384),
    "ES512": ("secp521r1", hashes.SHA512),
}
_JWK_CURVES = {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"}
SUPPORTED_ALGS = frozenset([*_RSA_PKCS1, *_RSA_PSS, *_EC, "EdDSA"])
# RFC 7638 §3.2: the required members of each key type, which alone enter the thumbprint.
_THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Inverse of `b64url`; raises ValueError on malformed input."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _json_b64(obj: dict[str, Any]) -> str:
    return b64url(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def load_private_key(key_pem: str) -> PrivateKey:
    """Parse an unencrypted PEM private key (PKCS#8, PKCS#1 or SEC1). AuthError if it cannot be read."""
    try:
        key = serialization.load_pem_private_key(key_pem.encode("utf-8"), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        # The library's message can quote the input; say only what kind of problem it is.
        raise AuthError("signing key is not a readable unencrypted PEM private key") from exc
    if not isinstance(key, PrivateKey):
        raise AuthError(f"signing key type {type(key).__name__} is not supported for JWS")
    return key


def _check_alg_name(alg: str) -> None:
    if alg not in SUPPORTED_ALGS:
        raise AuthError(f"unsupported JWS algorithm {alg!r} (supported: {', '.join(sorted(SUPPORTED_ALGS))})")


def _check_alg(key: PrivateKey, alg: str) -> None:
    _check_alg_name(alg)
    if alg in _RSA_PKCS1 or alg in _RSA_PSS:
        if not isinstance(key, rsa.RSAPrivateKey):
            raise AuthError(f"{alg} needs an RSA private key")
        if key.key_size < 2048:
            raise AuthError(f"{alg} needs an RSA key of at least 2048 bits")
    elif alg in _EC:
        curve, _ = _EC[alg]
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != curve:
            raise AuthError(f"{alg} needs an EC private key on curve {_JWK_CURVES[curve]}")
    elif not isinstance(key, ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey):
        raise AuthError("EdDSA needs an Ed25519 or Ed448 private key")


def _signature(key: PrivateKey, alg: str, signing_input: bytes) -> bytes:
    if isinstance(key, rsa.RSAPrivateKey):
        if alg in _RSA_PKCS1:
            return key.sign(signing_input, padding.PKCS1v15(), _RSA_PKCS1[alg]())
        digest = _RSA_PSS[alg]()
        # RFC 7518 §3.5: MGF1 with the same hash, salt as long as the hash output.
        return key.sign(signing_input, padding.PSS(padding.MGF1(digest), digest.digest_size), digest)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        der = key.sign(signing_input, ec.ECDSA(_EC[alg][1]()))
        r, s = decode_dss_signature(der)
        size = (key.curve.key_size + 7) // 8
        # JWS wants the fixed-width big-endian R || S, not the DER sequence cryptography returns.
        return r.to_bytes(size, "big") + s.to_bytes(size, "big")
    return key.sign(signing_input)


def sign_jwt_with_key(
    claims: dict[str, Any], key: PrivateKey, alg: str, *, headers: dict[str, Any] | None = None
) -> str:
    """Sign `claims` with an already-loaded key. `headers` adds to (or overrides `typ` in) {alg, typ: JWT}."""
    _check_alg(key, alg)
    header: dict[str, Any] = {"alg": alg, "typ": "JWT"}
    if headers:
        header.update({k: v for k, v in headers.items() if k != "alg"})
    signing_input = f"{_json_b64(header)}.{_json_b64(claims)}"
    signature = _signature(key, alg, signing_input.encode("ascii"))
    return f"{signing_input}.{b64url(signature)}"


def sign_jwt(claims: dict[str, Any], key_pem: str, alg: str, *, headers: dict[str, Any] | None = None) -> str:
    """JWS compact serialisation of `claims`, signed with the PEM private key under `alg`
    (RS256/384/512, PS256/384/512, ES256/384/512, EdDSA). AuthError on a bad key or an unsupported alg."""
    _check_alg_name(alg)  # before parsing, so a bad alg is reported as such
    return sign_jwt_with_key(claims, load_private_key(key_pem), alg, headers=headers)


def client_assertion(
    client_id: str, audience: str, key_pem: str, alg: str, *, lifetime_s: int = CLIENT_ASSERTION_LIFETIME_S
) -> str:
    """An RFC 7523 §3 client-authentication JWT: iss = sub = client_id, aud, iat, exp, a unique jti.
    For MCP (SEP-1046, rfc7523bis) `audience` should be the authorization server's issuer identifier."""
    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + lifetime_s,
        "jti": secrets.token_urlsafe(16),
    }
    return sign_jwt(claims, key_pem, alg)


def decode_unverified(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, claims) of a JWS compact token WITHOUT checking its signature. AuthError if malformed."""
    parts = token.split(".")
    if len(parts) != 3:
        raise AuthError("not a JWS compact token (expected three dot-separated parts)")
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
    except (ValueError, UnicodeDecodeError) as exc:
        raise AuthError("JWS token header or payload is not base64url JSON") from exc
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise AuthError("JWS token header or payload is not a JSON object")
    return header, claims


def _int_b64(value: int) -> str:
    return b64url(value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big"))


def public_jwk(key: PrivateKey) -> dict[str, str]:
    """The public half of `key` as a JWK (RFC 7517/7518/8037), with only the required members."""
    if isinstance(key, rsa.RSAPrivateKey):
        numbers = key.public_key().public_numbers()
        return {"kty": "RSA", "n": _int_b64(numbers.n), "e": _int_b64(numbers.e)}
    if isinstance(key, ec.EllipticCurvePrivateKey):
        point = key.public_key().public_numbers()
        size = (key.curve.key_size + 7) // 8
        return {
            "kty": "EC",
            "crv": _JWK_CURVES[key.curve.name],
            "x": b64url(point.x.to_bytes(size, "big")),
            "y": b64url(point.y.to_bytes(size, "big")),
        }
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    crv = "Ed25519" if isinstance(key, ed25519.Ed25519PrivateKey) else "Ed448"
    return {"kty": "OKP", "crv": crv, "x": b64url(raw)}


def jwk_thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 SHA-256 thumbprint (base64url) of a public JWK."""
    members = _THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None or any(m not in jwk for m in members):
        raise AuthError("JWK has an unknown key type or lacks a required member for its thumbprint")
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())
