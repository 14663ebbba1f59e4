"""Token verification against real peers on 127.0.0.1: a JWKS server and an introspection
endpoint served by uvicorn, tokens signed with real RSA and EC keys. Every attack the issue
names gets a test that fails without its defence."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import time
from collections.abc import AsyncIterator
from typing import Any

import jwt
import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from mcpkit.auth import IntrospectionVerifier, InvalidToken, JWTVerifier, StaticTokenVerifier
from mcpkit.auth.jwks import JWKSCache
from mcpkit.auth.tokens import VerifiedTokens
from mcpkit.runtime.principal import Principal
from tests.clock import FakeClock
from tests.http.servers import serving

ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def jwk(key: Any, kid: str) -> dict[str, Any]:
    if isinstance(key, rsa.RSAPrivateKey):
        entry = orjson.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    else:
        entry = orjson.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    return {**entry, "kid": kid, "use": "sig"}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    base = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": RESOURCE,
        "client_id": "app",
        "scope": "mcp files:read",
        "iat": now,
        "nbf": now,
        "exp": now + 600,
        "jti": f"j{time.monotonic_ns()}",
    }
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def token(key: Any = RSA_KEY, kid: str = "rsa-1", alg: str = "RS256", **overrides: Any) -> str:
    return jwt.encode(
        claims(**overrides), key, algorithm=alg, headers={"kid": kid, "typ": "at+jwt"}
    )


class JWKSServer:
    """Serves a JWK Set, counting the fetches; `delay` and `padding` make it slow or huge."""

    def __init__(self, *keys: dict[str, Any]) -> None:
        self.keys = list(keys)
        self.hits = 0
        self.delay = 0.0
        self.padding = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.hits += 1
        await asyncio.sleep(self.delay)
        body = orjson.dumps({"keys": self.keys, "pad": "x" * self.padding})
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture
async def jwks() -> AsyncIterator[tuple[JWKSServer, str]]:
    server = JWKSServer(jwk(RSA_KEY, "rsa-1"), jwk(EC_KEY, "ec-1"))
    async with serving(server) as base:
        yield server, f"{base}/jwks"


def verifier(url: str, **options: Any) -> JWTVerifier:
    return JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks_url=url, **options)


async def refused(check: Any, token_value: str) -> str:
    with pytest.raises(InvalidToken) as caught:
        await check.verify(token_value)
    assert token_value not in str(caught.value)  # the token never appears in an error
    return caught.value.description


async def test_a_good_token_gives_its_principal(jwks: tuple[JWKSServer, str]) -> None:
    server, url = jwks
    check = verifier(url)
    for signed in (token(), token(EC_KEY, "ec-1", "ES256")):
        principal = await check.verify(signed)
        assert (principal.subject, principal.client_id) == ("alice", "app")
        assert principal.scopes == {"mcp", "files:read"}
        assert principal.expires_at is not None and principal.claims["iss"] == ISSUER
    assert server.hits == 1  # one fetch serves every key


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"aud": "https://other.example.com/mcp"}, "not issued for this resource"),
        ({"aud": ["https://other.example.com/mcp", "https://mcp.example.com/"]}, "not issued"),
        ({"aud": None}, "not issued for this resource"),
        ({"iss": "https://evil.example"}, "issued by another server"),
        ({"exp": int(time.time()) - 120}, "expired"),
        ({"exp": None}, "no expiry"),
        ({"nbf": int(time.time()) + 600}, "not valid yet"),
        ({"iat": int(time.time()) + 600}, "in the future"),
        ({"sub": None, "client_id": None}, "no subject"),
    ],
)
async def test_claims_that_do_not_hold_are_refused(
    jwks: tuple[JWKSServer, str], overrides: dict[str, Any], reason: str
) -> None:
    assert reason in await refused(verifier(jwks[1]), token(**overrides))


async def test_the_audience_is_compared_in_canonical_form(jwks: tuple[JWKSServer, str]) -> None:
    principal = await verifier(jwks[1]).verify(token(aud="HTTPS://MCP.example.com:443/mcp/"))
    assert principal.subject == "alice"


async def test_a_little_clock_skew_is_forgiven(jwks: tuple[JWKSServer, str]) -> None:
    late = token(exp=int(time.time()) - 10)
    assert (await verifier(jwks[1], leeway=30).verify(late)).subject == "alice"


async def test_a_wrong_signature_is_refused(jwks: tuple[JWKSServer, str]) -> None:
    forged = token(OTHER_KEY, "rsa-1")  # a key we do not publish, under our key id
    assert "signature is invalid" in await refused(verifier(jwks[1]), forged)
    tampered = token()
    head, payload, signature = tampered.split(".")
    changed = orjson.loads(base64.urlsafe_b64decode(payload + "=="))
    changed["sub"] = "mallory"
    payload = base64.urlsafe_b64encode(orjson.dumps(changed)).rstrip(b"=").decode()
    changed_claims = f"{head}.{payload}.{signature}"
    assert "signature is invalid" in await refused(verifier(jwks[1]), changed_claims)


async def test_alg_none_is_refused(jwks: tuple[JWKSServer, str]) -> None:
    unsigned = jwt.encode(claims(), None, algorithm="none", headers={"kid": "rsa-1"})
    assert "algorithm is not accepted" in await refused(verifier(jwks[1]), unsigned)


async def test_hmac_keyed_with_the_public_key_is_refused(jwks: tuple[JWKSServer, str]) -> None:
    # Algorithm confusion: the public key (which anyone has) used as an HMAC secret.
    pem = RSA_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = {"kid": "rsa-1", "alg": "HS256", "typ": "at+jwt"}
    signing_input = f"{b64(orjson.dumps(header))}.{b64(orjson.dumps(claims()))}"
    mac = hmac.new(pem, signing_input.encode(), hashlib.sha256).digest()  # PyJWT won't
    confused = f"{signing_input}.{b64(mac)}"
    assert "algorithm is not accepted" in await refused(verifier(jwks[1]), confused)
    with pytest.raises(ValueError, match="asymmetric"):
        JWTVerifier(issuer=ISSUER, audience=RESOURCE, keys=[pem], algorithms=["HS256"])


async def test_an_rsa_key_cannot_verify_an_ec_algorithm(jwks: tuple[JWKSServer, str]) -> None:
    mixed = token(EC_KEY, "rsa-1", "ES256")  # our RSA key's id on an ES256 token
    assert "does not publish" in await refused(verifier(jwks[1]), mixed)  # no key fits ES256


async def test_not_an_access_token_type_is_refused(jwks: tuple[JWKSServer, str]) -> None:
    id_token = jwt.encode(
        claims(), RSA_KEY, algorithm="RS256", headers={"kid": "rsa-1", "typ": "id+jwt"}
    )
    assert "not an access token" in await refused(verifier(jwks[1]), id_token)
    plain = jwt.encode(claims(), RSA_KEY, algorithm="RS256", headers={"kid": "rsa-1"})
    accepted = await verifier(jwks[1]).verify(plain)  # typ JWT or none: accepted unless strict
    assert accepted.subject == "alice"
    assert "not an access token" in await refused(verifier(jwks[1], require_typ=True), plain)


async def test_an_unknown_key_id_fetches_again_once_then_is_refused(
    jwks: tuple[JWKSServer, str],
) -> None:
    server, url = jwks
    clock = FakeClock()
    check = verifier(url, jwks=JWKSCache(url, refetch_interval=30, clock=clock))
    await check.verify(token())
    assert server.hits == 1
    rotated = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    server.keys.append(jwk(rotated, "rsa-2"))
    clock.advance(29)  # within the refetch interval: the new key id is not looked for yet
    assert "does not publish" in await refused(check, token(rotated, "rsa-2"))
    assert server.hits == 1
    clock.advance(1)  # the interval has passed: a refetch is allowed
    assert (await check.verify(token(rotated, "rsa-2"))).subject == "alice"
    assert server.hits == 2
    burst = [token(OTHER_KEY, f"made-up-{i}") for i in range(20)]
    outcomes = await asyncio.gather(*(check.verify(t) for t in burst), return_exceptions=True)
    assert all(isinstance(o, InvalidToken) for o in outcomes)
    assert server.hits == 2  # a flood of unknown key ids: no refetch within the interval


async def test_a_slow_jwks_fails_closed_in_time(jwks: tuple[JWKSServer, str]) -> None:
    server, url = jwks
    server.delay = 2.0
    check = JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks=JWKSCache(url, timeout=0.3))
    started = time.monotonic()
    assert "took longer" in await refused(check, token())
    assert time.monotonic() - started < 1.5


async def test_a_huge_jwks_is_refused(jwks: tuple[JWKSServer, str]) -> None:
    server, url = jwks
    server.padding = 10 * 1024 * 1024
    assert "larger than" in await refused(verifier(url), token())


async def test_static_keys_need_no_jwks() -> None:
    pem = RSA_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    check = JWTVerifier(issuer=ISSUER, audience=RESOURCE, keys=[pem.decode()])
    assert (await check.verify(token())).subject == "alice"
    assert "signature is invalid" in await refused(check, token(OTHER_KEY))


def test_verified_tokens_are_bounded_and_never_outlive_the_token() -> None:
    cache = VerifiedTokens(size=2)
    now = 1000.0
    for name in ("a", "b", "c"):
        cache.put(name, Principal(name, expires_at=now + 10), now)
    assert cache.entry("a", now) is None  # the oldest went
    assert cache.entry("c", now) is not None
    assert cache.entry("c", now + 11) is None  # past the token's expiry
    short = VerifiedTokens(ttl=5)
    short.put("d", Principal("d", expires_at=now + 100), now)
    assert short.entry("d", now + 4) is not None and short.entry("d", now + 6) is None


class Introspection:
    """An RFC 7662 endpoint: answers from `answers` by token, checks the caller's Basic auth."""

    def __init__(self) -> None:
        self.answers: dict[str, dict[str, Any]] = {}
        self.hits = 0
        self.authorizations: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.hits += 1
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        from urllib.parse import parse_qs

        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        self.authorizations.append(dict(scope["headers"]).get(b"authorization", b"").decode())
        answer = self.answers.get(form.get("token", ""), {"active": False})
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": orjson.dumps(answer)})


async def test_introspection_active_inactive_and_cached() -> None:
    endpoint = Introspection()
    now = int(time.time())
    endpoint.answers["good"] = {"active": True, **claims(exp=now + 600)}
    endpoint.answers["elsewhere"] = {"active": True, **claims(aud="https://other.example/mcp")}
    clock = FakeClock(now)
    async with serving(endpoint) as base:
        check = IntrospectionVerifier(
            f"{base}/introspect",
            client_id="rs",
            client_secret="rs-secret",
            audience=RESOURCE,
            issuer=ISSUER,
            cache_ttl=60,
            clock=clock,
        )
        assert (await check.verify("good")).scopes == {"mcp", "files:read"}
        clock.advance(59)
        await check.verify("good")
        assert endpoint.hits == 1  # cached
        clock.advance(1)
        await check.verify("good")
        assert endpoint.hits == 2  # the cache entry expired
        assert "not active" in await refused(check, "revoked")
        assert "not issued for this resource" in await refused(check, "elsewhere")
        expected = base64.b64encode(b"rs:rs-secret").decode()
        assert endpoint.authorizations[0] == f"Basic {expected}"


async def test_static_tokens() -> None:
    check = StaticTokenVerifier({"s3cret-token": Principal("svc", scopes=frozenset({"mcp"}))})
    assert (await check.verify("s3cret-token")).subject == "svc"
    assert "not valid" in await refused(check, "s3cret-tokeN")


async def test_verify_until_says_how_long_the_verifier_keeps_its_answer() -> None:
    pem = RSA_KEY.public_key()
    expiry = int(time.time()) + 600
    signed = token(exp=expiry)
    remembering = JWTVerifier(issuer=ISSUER, audience=RESOURCE, keys=[pem])
    principal, until = await remembering.verify_until(signed)
    assert principal.subject == "alice" and until == expiry
    assert await remembering.verify_until(signed) == (principal, until)  # from its memory
    forgetful = JWTVerifier(issuer=ISSUER, audience=RESOURCE, keys=[pem], cache_size=0)
    assert (await forgetful.verify_until(signed))[1] == 0.0
    assert VerifiedTokens(size=0).put("t", principal, time.time()) == 0.0
