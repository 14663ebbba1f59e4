"""`BearerAuth` remembers the Authorization header it verified (a request with the same bytes
skips the parsing and the verifier): the memory must keep every defence. A real protected
server on 127.0.0.1 with real RS256 tokens and a real introspection endpoint; time passes on
a `FakeClock` given to the verifier and to `BearerAuth` (`clock=`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx

from mcpkit.auth import BearerAuth, IntrospectionVerifier, JWTVerifier, TokenVerifier
from tests.auth.test_bearer import bearer, challenge, protected_server, session, tool_call
from tests.auth.test_tokens import ISSUER, RSA_KEY, Introspection, claims, token
from tests.clock import FakeClock
from tests.http.servers import serving, unused_port


@contextlib.asynccontextmanager
async def guarded(
    verifier: TokenVerifier, resource: str, port: int, clock: FakeClock
) -> AsyncIterator[httpx.AsyncClient]:
    auth = BearerAuth(verifier, resource=resource, required_scopes=frozenset({"mcp"}), clock=clock)
    async with (
        serving(protected_server().http_app(auth=auth), port) as base,
        httpx.AsyncClient(base_url=base) as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def introspected_server(
    cache_ttl: float, clock: FakeClock | None = None
) -> AsyncIterator[tuple[httpx.AsyncClient, Introspection]]:
    """A server asking an introspection endpoint (which knows the active "alice-opaque")."""
    clock = FakeClock() if clock is None else clock
    endpoint = Introspection()
    port = unused_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    endpoint.answers["alice-opaque"] = {"active": True, **claims(aud=resource)}
    async with serving(endpoint) as introspection:
        verifier = IntrospectionVerifier(
            f"{introspection}/introspect",
            client_id="rs",
            client_secret="rs-secret",
            audience=resource,
            issuer=ISSUER,
            cache_ttl=cache_ttl,
            clock=clock,
        )
        async with guarded(verifier, resource, port, clock) as client:
            yield client, endpoint


@contextlib.asynccontextmanager
async def jwt_server(
    clock: FakeClock | None = None,
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """A server checking RS256 tokens for its own URL; yields the client and that URL."""
    clock = FakeClock() if clock is None else clock
    port = unused_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    verifier = JWTVerifier(
        issuer=ISSUER, audience=resource, keys=[RSA_KEY.public_key()], clock=clock
    )
    async with guarded(verifier, resource, port, clock) as client:
        yield client, resource


def caller(answer: httpx.Response) -> str:
    """The subject the `whoami` tool saw."""
    text: str = answer.json()["result"]["content"][0]["text"]
    return text.partition(":")[0]


async def whoami(c: httpx.AsyncClient, headers: dict[str, str], request_id: int) -> httpx.Response:
    return await c.post("/mcp", headers=headers, json=tool_call(request_id, "whoami"))


async def test_a_remembered_token_is_refused_once_it_has_expired() -> None:
    clock = FakeClock()
    async with jwt_server(clock) as (c, resource):
        alice = await session(c, token(aud=resource, exp=int(clock()) + 600))
        for request_id in (2, 3):  # verified once, then answered from the memory
            assert (await whoami(c, alice, request_id)).status_code == 200
        clock.advance(600 + 29)  # past the expiry, within the verifier's 30 s leeway
        assert (await whoami(c, alice, 4)).status_code == 200
        clock.advance(2)  # past the leeway too
        answer = await whoami(c, alice, 5)
        assert answer.status_code == 401
        assert challenge(answer)["error"] == "invalid_token"
        assert "expired" in challenge(answer)["error_description"]


async def test_another_principals_remembered_token_on_a_bound_session_is_refused() -> None:
    async with jwt_server() as (c, resource):
        alice = await session(c, token(aud=resource, sub="alice"))
        bob_token = token(aud=resource, sub="bob")
        bob = await session(c, bob_token)
        assert caller(await whoami(c, alice, 2)) == "alice"
        assert (await whoami(c, bob, 2)).status_code == 200  # bob's header is remembered
        stolen = {**alice, "authorization": f"Bearer {bob_token}"}
        for request_id in (3, 4):  # refused when verified, and when remembered
            assert (await whoami(c, stolen, request_id)).status_code == 404
        assert (await c.delete("/mcp", headers=stolen)).status_code == 404
        assert (await whoami(c, alice, 5)).status_code == 200


async def test_a_new_token_for_the_same_principal_keeps_the_session() -> None:
    async with jwt_server() as (c, resource):
        alice = await session(c, token(aud=resource, scope="mcp"))
        assert caller(await whoami(c, alice, 2)) == "alice"
        renewed = {**alice, **bearer(token(aud=resource, scope="mcp files:read"))}
        for request_id in (3, 4):
            assert (await whoami(c, renewed, request_id)).status_code == 200
        # The same user through another client is another principal.
        other_client = {**alice, **bearer(token(aud=resource, client_id="other-app"))}
        assert (await whoami(c, other_client, 5)).status_code == 404


async def test_a_remembered_token_still_needs_the_required_scopes() -> None:
    async with jwt_server() as (c, resource):
        headers = bearer(token(aud=resource, scope="files:read"))
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        for _ in range(2):
            answer = await c.post("/mcp", headers=headers, json=body)
            assert answer.status_code == 403
            assert challenge(answer)["error"] == "insufficient_scope"


async def test_an_introspection_answer_is_not_reused_past_its_cache_ttl() -> None:
    clock = FakeClock()
    async with introspected_server(60, clock) as (c, endpoint):
        alice = await session(c, "alice-opaque")
        assert (await whoami(c, alice, 2)).status_code == 200
        assert endpoint.hits == 1  # one question, for the first request
        endpoint.answers["alice-opaque"] = {"active": False}  # revoked
        assert (await whoami(c, alice, 3)).status_code == 200  # within cache_ttl
        clock.advance(61)  # the token lives 600 s; the answer was good for 60
        assert (await whoami(c, alice, 4)).status_code == 401
        assert endpoint.hits == 2


async def test_a_verifier_that_keeps_nothing_is_asked_on_every_request() -> None:
    async with introspected_server(0) as (c, endpoint):
        alice = await session(c, "alice-opaque")  # initialize, initialized: 2 questions
        for request_id in (2, 3, 4):
            assert (await whoami(c, alice, request_id)).status_code == 200
        assert endpoint.hits == 5
        endpoint.answers["alice-opaque"] = {"active": False}
        assert (await whoami(c, alice, 5)).status_code == 401
