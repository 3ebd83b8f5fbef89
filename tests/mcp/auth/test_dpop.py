"""DPoP proofs (RFC 9449): header and claims, signature verified against the embedded JWK, `ath`, the RFC 7638
thumbprint vector, per-origin nonce memory and recognising nonce challenges."""

from __future__ import annotations

import hashlib
import time

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from mini_claude.errors import AuthError
from mini_claude.mcp.auth.dpop import DpopKey, htu_for, is_nonce_challenge, parse_www_authenticate
from mini_claude.mcp.auth.jwt import b64url, b64url_decode, decode_unverified, jwk_thumbprint

_CURVES = {"P-256": (ec.SECP256R1, hashes.SHA256), "P-384": (ec.SECP384R1, hashes.SHA384),
           "P-521": (ec.SECP521R1, hashes.SHA512)}


def _verify_with_header_jwk(token: str) -> None:
    """Verify a proof the way a server does: with the public key from its own `jwk` header."""
    header, _ = decode_unverified(token)
    jwk = header["jwk"]
    head, body, sig = token.split(".")
    signing_input = f"{head}.{body}".encode()
    raw = b64url_decode(sig)
    if jwk["kty"] == "EC":
        curve, digest = _CURVES[jwk["crv"]]
        pub = ec.EllipticCurvePublicNumbers(
            int.from_bytes(b64url_decode(jwk["x"]), "big"), int.from_bytes(b64url_decode(jwk["y"]), "big"), curve()
        ).public_key()
        half = len(raw) // 2
        der = encode_dss_signature(int.from_bytes(raw[:half], "big"), int.from_bytes(raw[half:], "big"))
        pub.verify(der, signing_input, ec.ECDSA(digest()))
    elif jwk["kty"] == "RSA":
        rsa_pub = rsa.RSAPublicNumbers(
            int.from_bytes(b64url_decode(jwk["e"]), "big"), int.from_bytes(b64url_decode(jwk["n"]), "big")
        ).public_key()
        pad = padding.PKCS1v15() if header["alg"] == "RS256" else padding.PSS(padding.MGF1(hashes.SHA256()), 32)
        rsa_pub.verify(raw, signing_input, pad, hashes.SHA256())
    else:
        ed25519.Ed25519PublicKey.from_public_bytes(b64url_decode(jwk["x"])).verify(raw, signing_input)


def test_rfc7638_thumbprint_example_vector() -> None:
    jwk = {
        "kty": "RSA",
        "n": (
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJE"
            "CPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2Q"
            "vzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6"
            "WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        ),
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29",
    }
    assert jwk_thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


def test_rfc9449_ath_example() -> None:
    # RFC 9449 §7.1: the proof for this access token carries exactly this ath.
    token = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
    proof = DpopKey.generate().proof("GET", "https://resource.example.org/protectedresource", access_token=token)
    assert decode_unverified(proof)[1]["ath"] == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"


@pytest.mark.parametrize("alg", ["ES256", "ES384", "ES512", "RS256", "PS256", "EdDSA"])
def test_proof_header_claims_and_signature(alg: str) -> None:
    key = DpopKey.generate(alg)
    before = int(time.time())
    proof = key.proof("post", "https://AS.example:8443/oauth/token?x=1#frag")
    header, claims = decode_unverified(proof)
    assert header["typ"] == "dpop+jwt" and header["alg"] == alg == key.alg
    assert header["jwk"] == key.public_jwk and "d" not in header["jwk"]
    assert jwk_thumbprint(header["jwk"]) == key.thumbprint
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://as.example:8443/oauth/token"
    assert before <= claims["iat"] <= int(time.time())
    assert "ath" not in claims and "nonce" not in claims
    assert isinstance(claims["jti"], str) and len(claims["jti"]) >= 16
    _verify_with_header_jwk(proof)


def test_each_proof_is_fresh_and_binds_the_access_token() -> None:
    key = DpopKey.generate()
    first = decode_unverified(key.proof("GET", "http://127.0.0.1:1/mcp", access_token="tok-123"))[1]
    second = decode_unverified(key.proof("GET", "http://127.0.0.1:1/mcp", access_token="tok-123"))[1]
    assert first["jti"] != second["jti"]
    assert first["ath"] == b64url(hashlib.sha256(b"tok-123").digest())


def test_nonce_memory_is_per_origin() -> None:
    key = DpopKey.generate()
    assert key.nonce_for("http://127.0.0.1:9000/token") is None
    key.remember_nonce("http://127.0.0.1:9000/token", {"dpop-nonce": "n-as"})  # any header-name case
    key.remember_nonce("http://127.0.0.1:9001/mcp", {"DPoP-Nonce": "n-rs"})
    key.remember_nonce("http://127.0.0.1:9001/mcp", {"Content-Type": "x"})  # no nonce: keep the old one
    assert key.nonce_for("HTTP://127.0.0.1:9000/other?q") == "n-as"
    assert key.nonce_for("http://127.0.0.1:9001/mcp") == "n-rs"
    assert key.nonce_for("http://127.0.0.1:9002/mcp") is None
    assert decode_unverified(key.proof("POST", "http://127.0.0.1:9000/token"))[1]["nonce"] == "n-as"
    assert decode_unverified(key.proof("POST", "http://127.0.0.1:9000/token", nonce="explicit"))[1]["nonce"] == (
        "explicit"
    )
    assert "nonce" not in decode_unverified(key.proof("POST", "http://127.0.0.1:9002/token"))[1]


def test_pem_round_trip_keeps_the_binding() -> None:
    key = DpopKey.generate("ES256")
    again = DpopKey.from_pem(key.to_pem(), "ES256")
    assert again.thumbprint == key.thumbprint
    assert "PRIVATE" not in repr(key)
    with pytest.raises(AuthError, match="RS256 needs an RSA private key"):
        DpopKey.from_pem(key.to_pem(), "RS256")
    with pytest.raises(AuthError, match="unsupported DPoP algorithm"):
        DpopKey.generate("HS256")


def test_htu_strips_query_and_fragment() -> None:
    assert htu_for("https://Example.COM/a/b?c=d#e") == "https://example.com/a/b"
    assert htu_for("http://127.0.0.1:8080") == "http://127.0.0.1:8080/"


@pytest.mark.parametrize(
    ("status", "headers", "body", "expected"),
    [
        (400, {}, {"error": "use_dpop_nonce", "error_description": "x"}, True),
        (400, {}, {"error": "invalid_dpop_proof"}, False),
        (400, {}, None, False),
        (401, {"WWW-Authenticate": 'DPoP error="use_dpop_nonce", resource_metadata="http://h/x"'}, None, True),
        (401, {"www-authenticate": 'Bearer realm="r", DPoP algs="ES256", error=use_dpop_nonce'}, None, True),
        (401, {"WWW-Authenticate": 'Bearer error="use_dpop_nonce"'}, None, False),
        (401, {"WWW-Authenticate": 'DPoP error="invalid_token"'}, None, False),
        (401, {"WWW-Authenticate": 'DPoP resource_metadata="http://h/.well-known/x"'}, None, False),
        (403, {"WWW-Authenticate": 'DPoP error="use_dpop_nonce"'}, None, False),
        (200, {}, {"error": "use_dpop_nonce"}, False),
    ],
)
def test_is_nonce_challenge(status: int, headers: dict[str, str], body: dict[str, str] | None, expected: bool) -> None:
    assert is_nonce_challenge(status, headers, body) is expected


def test_parse_www_authenticate() -> None:
    value = 'Basic abc==, DPoP error="use_dpop_nonce", error_description="say \\"hi\\"", Bearer scope="a b",' \
        " resource_metadata=http://h:1/.well-known/oauth-protected-resource/mcp"
    assert parse_www_authenticate(value) == [
        ("basic", {}),
        ("dpop", {"error": "use_dpop_nonce", "error_description": 'say "hi"'}),
        ("bearer", {"scope": "a b", "resource_metadata": "http://h:1/.well-known/oauth-protected-resource/mcp"}),
    ]
