"""JWS signing: every supported alg verifies with `cryptography` (and with PyJWT as an independent reader), the
RFC 7523 client assertion's claims, and clear AuthErrors that never echo key material."""

from __future__ import annotations

import hashlib
import json
import time

import jwt as pyjwt  # an independent JWT implementation (pyproject [dev])
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from mini_claude.errors import AuthError
from mini_claude.mcp.auth.jwt import (
    b64url,
    b64url_decode,
    client_assertion,
    decode_unverified,
    jwk_thumbprint,
    load_private_key,
    public_jwk,
    sign_jwt,
)


def _pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


_HASHES = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}


@pytest.mark.parametrize("alg", ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"])
def test_rsa_signatures_verify(rsa_key: rsa.RSAPrivateKey, alg: str) -> None:
    token = sign_jwt({"sub": "x"}, _pem(rsa_key), alg)
    head, body, sig = token.split(".")
    digest = _HASHES[alg[2:]]()
    pad = (
        padding.PKCS1v15()
        if alg.startswith("RS")
        else padding.PSS(padding.MGF1(_HASHES[alg[2:]]()), digest.digest_size)
    )
    rsa_key.public_key().verify(b64url_decode(sig), f"{head}.{body}".encode(), pad, digest)
    assert decode_unverified(token) == ({"alg": alg, "typ": "JWT"}, {"sub": "x"})


@pytest.mark.parametrize(
    ("alg", "curve", "size"),
    [("ES256", ec.SECP256R1, 32), ("ES384", ec.SECP384R1, 48), ("ES512", ec.SECP521R1, 66)],
)
def test_ec_signatures_are_raw_r_s_and_verify(alg: str, curve: type[ec.EllipticCurve], size: int) -> None:
    key = ec.generate_private_key(curve())
    token = sign_jwt({"n": 1}, _pem(key), alg)
    head, body, sig = token.split(".")
    raw = b64url_decode(sig)
    assert len(raw) == 2 * size  # fixed-width R || S, not DER
    der = encode_dss_signature(int.from_bytes(raw[:size], "big"), int.from_bytes(raw[size:], "big"))
    key.public_key().verify(der, f"{head}.{body}".encode(), ec.ECDSA(_HASHES[alg[2:]]()))


def test_eddsa_signature_verifies() -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    token = sign_jwt({"a": "b"}, _pem(key), "EdDSA")
    head, body, sig = token.split(".")
    key.public_key().verify(b64url_decode(sig), f"{head}.{body}".encode())


@pytest.mark.parametrize("alg", ["RS256", "PS256", "ES256", "ES384", "ES512", "EdDSA"])
def test_pyjwt_reads_our_tokens(rsa_key: rsa.RSAPrivateKey, alg: str) -> None:
    if alg.startswith(("RS", "PS")):
        key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey = rsa_key
    elif alg == "EdDSA":
        key = ed25519.Ed25519PrivateKey.generate()
    else:
        key = ec.generate_private_key({"256": ec.SECP256R1, "384": ec.SECP384R1, "512": ec.SECP521R1}[alg[2:]]())
    token = client_assertion("client-1", "https://as.example", _pem(key), alg)
    claims = pyjwt.decode(token, key.public_key(), algorithms=[alg], audience="https://as.example")
    assert claims["iss"] == claims["sub"] == "client-1"


def test_client_assertion_claims(rsa_key: rsa.RSAPrivateKey) -> None:
    pem = _pem(rsa_key)
    before = int(time.time())
    first = client_assertion("cid", "https://issuer.example", pem, "RS256", lifetime_s=120)
    second = client_assertion("cid", "https://issuer.example", pem, "RS256")
    header, claims = decode_unverified(first)
    assert header == {"alg": "RS256", "typ": "JWT"}
    assert claims["iss"] == claims["sub"] == "cid"
    assert claims["aud"] == "https://issuer.example"
    assert before <= claims["iat"] <= int(time.time())
    assert claims["exp"] - claims["iat"] == 120
    assert decode_unverified(second)[1]["exp"] - decode_unverified(second)[1]["iat"] == 300
    assert claims["jti"] != decode_unverified(second)[1]["jti"]


def test_extra_headers_override_typ_but_never_alg(rsa_key: rsa.RSAPrivateKey) -> None:
    token = sign_jwt({}, _pem(rsa_key), "RS256", headers={"typ": "dpop+jwt", "kid": "k1", "alg": "none"})
    assert decode_unverified(token)[0] == {"alg": "RS256", "typ": "dpop+jwt", "kid": "k1"}


def test_bad_key_errors_never_echo_the_key(rsa_key: rsa.RSAPrivateKey) -> None:
    garbage = "-----BEGIN PRIVATE KEY-----\nSECRETSECRETSECRET\n-----END PRIVATE KEY-----\n"
    with pytest.raises(AuthError) as info:
        sign_jwt({}, garbage, "RS256")
    assert "SECRET" not in str(info.value)
    assert "PEM" in str(info.value)
    with pytest.raises(AuthError, match="unsupported JWS algorithm 'HS256'"):
        sign_jwt({}, _pem(rsa_key), "HS256")
    with pytest.raises(AuthError, match="unsupported JWS algorithm 'none'"):
        sign_jwt({}, garbage, "none")  # the alg is checked before the key is parsed
    with pytest.raises(AuthError, match="ES256 needs an EC private key on curve P-256"):
        sign_jwt({}, _pem(rsa_key), "ES256")
    with pytest.raises(AuthError, match="ES256 needs an EC private key on curve P-256"):
        sign_jwt({}, _pem(ec.generate_private_key(ec.SECP384R1())), "ES256")
    with pytest.raises(AuthError, match="RS256 needs an RSA private key"):
        sign_jwt({}, _pem(ec.generate_private_key(ec.SECP256R1())), "RS256")
    encrypted = rsa_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"),
    ).decode()
    with pytest.raises(AuthError, match="unencrypted PEM"):
        load_private_key(encrypted)


@pytest.mark.parametrize("token", ["a.b", "!!!.e30.x", "e30.bm90IGpzb24.x", "W10.e30.x"])
def test_decode_unverified_rejects_malformed(token: str) -> None:
    with pytest.raises(AuthError):
        decode_unverified(token)


def test_public_jwk_and_thumbprint_shapes(rsa_key: rsa.RSAPrivateKey) -> None:
    jwk = public_jwk(rsa_key)
    assert set(jwk) == {"kty", "n", "e"} and jwk["e"] == "AQAB"
    ec_jwk = public_jwk(ec.generate_private_key(ec.SECP256R1()))
    assert ec_jwk["crv"] == "P-256" and len(b64url_decode(ec_jwk["x"])) == 32
    canonical = json.dumps({k: ec_jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
    assert jwk_thumbprint(ec_jwk) == b64url(hashlib.sha256(canonical.encode()).digest())
    okp = public_jwk(ed25519.Ed25519PrivateKey.generate())
    assert okp["kty"] == "OKP" and okp["crv"] == "Ed25519"
    with pytest.raises(AuthError):
        jwk_thumbprint({"kty": "oct", "k": "x"})
