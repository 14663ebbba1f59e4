"""The compact JWS parser under JWTVerifier: what it refuses, and that a signature is checked
with the right key family (tokens made with PyJWT, the way issuers make them)."""

from __future__ import annotations

import base64
from typing import Any

import jwt
import orjson
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from mcpkit.auth.jws import MAX_TOKEN_LENGTH, MalformedJWS, parse, signature_valid

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())


def b64(value: Any) -> str:
    raw = value if isinstance(value, bytes) else orjson.dumps(value)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def test_a_token_parses_once_into_header_payload_and_signature() -> None:
    token = jwt.encode({"sub": "u", "n": 2**40}, RSA_KEY, algorithm="RS256", headers={"kid": "k"})
    jws = parse(token)
    assert jws.header == {"alg": "RS256", "kid": "k", "typ": "JWT"}
    assert jws.payload == {"sub": "u", "n": 2**40}
    assert jws.signing_input == token.rsplit(".", 1)[0].encode()
    assert signature_valid(jws, "RS256", RSA_KEY.public_key())


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        ("a.b", "three base64url segments"),
        ("a.b.c.d", "three base64url segments"),
        (f"{b64({'alg': 'RS256'})}=.{b64({})}.", "three base64url segments"),  # padding
        (f"{b64({'alg': 'RS256'})}.{b64({})}.a+b/", "three base64url segments"),  # not url-safe
        (f"{b64({'alg': 'RS256'})}.é.", "three base64url segments"),
        (f"{b64(b'not json')}.{b64({})}.", "header is not JSON"),
        (f"{b64([1, 2])}.{b64({})}.", "header is not a JSON object"),
        (f"{b64({'alg': 'RS256'})}.{b64('text')}.", "payload is not a JSON object"),
        (f"{b64({'alg': 'RS256'})}.a.", "not base64url"),  # one char: no whole byte
        (f"{b64({'alg': 'RS256', 'crit': ['exp']})}.{b64({})}.", "extension"),
        (f"{b64({'alg': 'RS256', 'b64': False})}.{b64({})}.", "extension"),
        ("a" * (MAX_TOKEN_LENGTH + 1), "too long"),
    ],
)
def test_what_is_refused(token: str, reason: str) -> None:
    with pytest.raises(MalformedJWS, match=reason):
        parse(token)


def test_a_signature_needs_the_signers_key_of_the_named_family() -> None:
    rsa_token = parse(jwt.encode({"sub": "u"}, RSA_KEY, algorithm="RS256"))
    ec_token = parse(jwt.encode({"sub": "u"}, EC_KEY, algorithm="ES256"))
    assert signature_valid(ec_token, "ES256", EC_KEY.public_key())
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert not signature_valid(rsa_token, "RS256", other.public_key())  # another signer
    assert not signature_valid(rsa_token, "RS256", EC_KEY.public_key())  # another family
    assert not signature_valid(ec_token, "ES256", RSA_KEY.public_key())
    assert not signature_valid(rsa_token, "PS256", RSA_KEY.public_key())  # another algorithm


def test_a_changed_payload_breaks_the_signature() -> None:
    token = jwt.encode({"sub": "user", "scope": "read"}, RSA_KEY, algorithm="RS256")
    header, _, signature = token.split(".")
    forged = parse(f"{header}.{b64({'sub': 'user', 'scope': 'admin'})}.{signature}")
    assert not signature_valid(forged, "RS256", RSA_KEY.public_key())
