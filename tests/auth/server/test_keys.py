"""Signing keys rotate: the newest signs, the previous stays in the JWKS while tokens it
signed may live, and then leaves. ES256 works as well as RS256."""

from __future__ import annotations

import time

import jwt

from .support import Flow, introspect, running, tokens_for

ROTATION = 3600


async def test_keys_rotate_and_the_previous_one_stays_published() -> None:
    now = [time.time()]
    async with running(clock=lambda: now[0], key_rotation=ROTATION) as run:

        async def token() -> tuple[str, str]:
            access = (await tokens_for(run, Flow()))["access_token"]
            return access, jwt.get_unverified_header(access)["kid"]

        async def published() -> list[str]:
            return [key["kid"] for key in (await run.http.get("/jwks")).json()["keys"]]

        first, first_kid = await token()
        assert await published() == [first_kid]
        now[0] += ROTATION - 100  # near the end of the first key's turn
        late, late_kid = await token()
        assert late_kid == first_kid
        now[0] += 200  # the second key's turn; `late` is still valid
        _, second_kid = await token()
        assert second_kid != first_kid
        assert await published() == [first_kid, second_kid]
        assert (await introspect(run, late))["active"] is True
        assert (await introspect(run, first))["active"] is False  # expired by now
        now[0] += ROTATION + 100  # the first key has retired
        await run.http.get("/jwks")
        third, third_kid = await token()
        assert first_kid not in await published()
        assert (await introspect(run, third))["active"] is True
        await run.server.rotate_keys()  # by hand: a new key signs at once
        _, fourth_kid = await token()
        assert fourth_kid not in (second_kid, third_kid)
        assert fourth_kid in await published()


async def test_es256_keys() -> None:
    async with running(key_algorithm="ES256") as run:
        access = (await tokens_for(run, Flow()))["access_token"]
        assert jwt.get_unverified_header(access)["alg"] == "ES256"
        jwks = (await run.http.get("/jwks")).json()
        assert jwks["keys"][0]["kty"] == "EC" and jwks["keys"][0]["alg"] == "ES256"
        assert "d" not in jwks["keys"][0]  # never the private part
        key = jwt.PyJWK(jwks["keys"][0]).key
        claims = jwt.decode(access, key, algorithms=["ES256"], audience=Flow().resource)
        assert claims["iss"] == run.url
        assert (await introspect(run, access))["active"] is True
