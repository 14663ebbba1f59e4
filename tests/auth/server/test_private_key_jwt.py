"""private_key_jwt (RFC 7523) client authentication: a machine client proves itself with a
JWT signed by its own key; a replayed, misdirected, long-lived, wrongly signed or symmetric
assertion is refused with 401 invalid_client."""

from __future__ import annotations

import time
import uuid
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from mcpkit.auth.server import ClientConfig

from .support import Running, clients, running

KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_KEY = ec.generate_private_key(ec.SECP256R1())
JWK = {**ECAlgorithm.to_jwk(KEY.public_key(), as_dict=True), "kid": "k1"}
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def assertion(audience: str, key: Any = KEY, lifetime: int = 60, **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": "signer", "sub": "signer", "aud": audience, "exp": now + lifetime}
    body.update(iat=now, jti=str(uuid.uuid4()), **claims)
    return jwt.encode(body, key, algorithm="ES256", headers={"kid": "k1"})


async def token_with(run: Running, signed: str) -> Any:
    form = {
        "grant_type": "client_credentials",
        "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": signed,
        "scope": "mcp",
    }
    return await run.http.post("/token", data=form)


async def test_a_signed_assertion_authenticates_once() -> None:
    signer = ClientConfig("signer", grant_types=("client_credentials",), jwks={"keys": [JWK]})
    async with running(clients=(*clients(), signer)) as run:
        signed = assertion(run.url)  # aud: the issuer
        accepted = await token_with(run, signed)
        assert accepted.status_code == 200, accepted.text
        claims = jwt.decode(accepted.json()["access_token"], options={"verify_signature": False})
        assert claims["sub"] == "signer" and claims["client_id"] == "signer"
        assert (await token_with(run, assertion(f"{run.url}/token"))).status_code == 200

        refused = [
            signed,  # replayed
            assertion("https://elsewhere.example"),  # another audience
            assertion(run.url, key=OTHER_KEY),  # someone else's key
            assertion(run.url, lifetime=3600),  # lives too long
            assertion(run.url, lifetime=-120),  # expired
            assertion(run.url, sub="machine"),  # claims to be another client
            jwt.encode({"iss": "signer", "sub": "signer", "aud": run.url}, "k" * 32),  # HS256
        ]
        for bad in refused:
            response = await token_with(run, bad)
            assert response.status_code == 401, (bad, response.text)
            assert response.json()["error"] == "invalid_client"
