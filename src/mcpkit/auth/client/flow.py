"""`OAuth`: an `httpx.Auth` that gets, keeps, refreshes and upgrades tokens for one MCP server.

How this works: every request to the server's origin carries the stored access token (first
refreshed when it is about to expire). A 401 answer starts recovery, one at a time under a
lock (concurrent requests wait, then reuse what it got): read the challenge, discover the
authorization server again (`discovery.py`: it may have changed), refresh the token when it
can, else authorize anew (authorization code with PKCE and the user's approval, or
client_credentials), and resend the request. A refresh whose token is then refused again is
followed by one full authorization; a refused refresh token (revoked, expired) is dropped and
a new authorization follows: never a loop. A 403 `insufficient_scope` answer re-authorizes
with the union of the scopes held and the scopes challenged, then resends once; a challenge
that asks for nothing new is answered as it is (re-authorizing would not help).

Requests to other origins pass untouched: a token never leaves its server. One `OAuth` serves
one MCP server (the first URL it sees, or the one given to `login`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from typing import Any, Literal

import httpx

from mcpkit.auth.client.approval import Approver, Browser
from mcpkit.auth.client.assertions import JWT_BEARER, AssertionSource, assertion_for
from mcpkit.auth.client.authorize import AuthorizationRequest
from mcpkit.auth.client.challenge import Challenge
from mcpkit.auth.client.config import ClientCredentials, ClientMetadata
from mcpkit.auth.client.discovery import AuthServer, discover, probe_challenge
from mcpkit.auth.client.dpop import ALGORITHM, DPoPKey
from mcpkit.auth.client.errors import OAuthError
from mcpkit.auth.client.records import Registration, Tokens
from mcpkit.auth.client.registration import metadata_document, preregistered, register
from mcpkit.auth.client.scopes import select_scope
from mcpkit.auth.client.store import MemoryTokenStore, TokenStore
from mcpkit.auth.client.token_endpoint import ClientAuth, request_tokens
from mcpkit.auth.wellknown import canonical_resource

logger = logging.getLogger("mcpkit.auth.client")
Grant = Literal["authorization_code", "client_credentials", "jwt_bearer"]
FAILED_LOGIN_PAUSE = 10.0  # seconds a failed authorization is answered again, not retried


class OAuth(httpx.Auth):
    """OAuth 2.1 for an MCP client: `Client(url, http=HTTPOptions(auth=OAuth(...)))`.

    `client`: pre-registered credentials (else a client metadata document or dynamic
    registration, per `metadata`). `scopes`: asked for on top of what the server challenges
    for. `store`: where tokens and registrations live (default: memory). `approval`: how the
    user approves (`Browser()` by default; `Headless()`, `Callback(...)`). `grant`:
    "authorization_code" (a user), "client_credentials" (the client itself, with `client`),
    or "jwt_bearer" (RFC 7523: trade the JWT `assertion(issuer, resource)` gives, e.g. a
    workload identity or `IdJagExchange(...)`, with `client`). `login=False` never starts an
    authorization: refreshes only, else the request fails. `timeout` bounds each request to
    the authorization server, in seconds.

    Failures raise OAuthError (an `MCPError`; the MCP transports report it as a failed
    request) naming the step, the URL and the server's error. The constructor raises
    ValueError for an unknown `grant`, or credentials and `assertion` that do not fit it.
    """

    requires_request_body = False
    requires_response_body = False

    def __init__(
        self,
        *,
        client: ClientCredentials | None = None,
        metadata: ClientMetadata | None = None,
        scopes: Sequence[str] = (),
        store: TokenStore | None = None,
        approval: Approver | None = None,
        grant: Grant = "authorization_code",
        assertion: AssertionSource | None = None,
        login: bool = True,
        timeout: float = 30.0,
    ) -> None:
        if grant not in ("authorization_code", "client_credentials", "jwt_bearer"):
            raise ValueError(f"unknown grant {grant!r}")
        if grant != "authorization_code" and client is None:
            raise ValueError(f"the {grant} grant needs ClientCredentials")
        if (grant == "jwt_bearer") != (assertion is not None):
            raise ValueError("an assertion goes with the jwt_bearer grant, and only with it")
        self.client = client
        self.metadata = metadata or ClientMetadata()
        self.scopes = tuple(scopes)
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.approval: Approver = approval if approval is not None else Browser()
        self.grant: Grant = grant
        self.assertion = assertion
        self.login_allowed = login
        self.timeout = timeout
        self._server: str | None = None  # canonical URI of the MCP endpoint
        self._origin: tuple[str, str] | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self._lock_object: asyncio.Lock | None = None
        self._failed: tuple[float, OAuthError] | None = None  # the last failed authorization
        self._dpop: DPoPKey | None = None
        self._servers: dict[str, AuthServer] = {}  # issuer -> as last discovered

    # -- public ------------------------------------------------------------------------------

    async def login(self, server_url: str) -> Tokens:
        """Authorize now (whatever is stored) for the MCP server at `server_url`; the new
        tokens. Raises OAuthError."""
        self._bind(httpx.URL(server_url), force=True)
        self._failed = None  # asked for explicitly: try again now
        async with self._lock(), self._http() as http:
            challenge = await probe_challenge(http, server_url) or Challenge()
            server = await discover(http, self._server_url(), challenge)
            return await self._obtain(http, server, self._scope(challenge, server, None))

    async def prepare(self, server_url: str) -> Tokens | None:
        """Get ready to talk to `server_url` before any MCP request: the stored tokens
        (refreshed if about to expire), else a login now when the server asks for one. None
        when the server asks for none. Logging in here, not inside the client's first request,
        keeps a slow approval (a person at a browser) out of that request's timeout.
        Raises OAuthError."""
        self._bind(httpx.URL(server_url), force=True)
        tokens = await self._usable_tokens()
        if tokens is not None:
            return tokens
        async with self._lock(), self._http() as http:
            challenge = await probe_challenge(http, server_url, unreachable=True)
            if challenge is None:
                return None
            server = await discover(http, self._server_url(), challenge)
            return await self._obtain(http, server, self._scope(challenge, server, None))

    def logout(self, server_url: str) -> None:
        """Forget the tokens and client registrations stored for `server_url`."""
        self.store.delete(canonical_resource(server_url))

    def tokens(self, server_url: str | None = None) -> Tokens | None:
        """The stored tokens for `server_url` (default: the server this OAuth serves)."""
        key = canonical_resource(server_url) if server_url else self._server
        if key is None:
            return None
        record = self.store.load(key) or {}
        return Tokens.from_json(record.get("tokens")) if record.get("tokens") else None

    # -- httpx.Auth --------------------------------------------------------------------------

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if not self._bind(request.url):
            yield request  # another origin: never show it our token
            return
        flow = self._authorized_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if self._nonce_wanted(response):  # DPoP: the same token, a proof with the nonce
                    await response.aread()
                    self._sign_dpop(outgoing, outgoing.headers["authorization"][5:])
                    response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except OAuthError as exc:
            logger.warning("%s", exc)  # the transport may report it only as a failed request
            raise
        finally:
            await flow.aclose()

    async def _authorized_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        tokens = await self._usable_tokens()
        self._sign(request, tokens)
        response = yield request
        for attempt in (1, 2):
            if response.status_code != 401:
                break
            await response.aread()  # frees its connection while we are away (maybe long)
            tokens, refreshed = await self._recover(_challenge(response), tokens, attempt == 1)
            self._sign(request, tokens)
            response = yield request
            if not refreshed:
                break
        if response.status_code == 403:
            challenge = _challenge(response)
            if challenge.error == "insufficient_scope":
                await response.aread()
                upgraded = await self._step_up(challenge, tokens)
                if upgraded is not None:
                    self._sign(request, upgraded)
                    yield request

    def sync_auth_flow(self, request: httpx.Request) -> Any:
        raise RuntimeError("mcpkit's OAuth works with httpx.AsyncClient only")

    # -- the three paths: before a request, after a 401, after a 403 --------------------------

    async def _usable_tokens(self) -> Tokens | None:
        """The stored tokens, refreshed first when they are about to expire (None: none)."""
        tokens = self.tokens()
        if tokens is None or not tokens.expiring():
            return tokens
        async with self._lock():
            tokens = self.tokens()
            if tokens is None or not tokens.expiring():
                return tokens
            async with self._http() as http:
                return await self._refresh(http, tokens)

    async def _recover(
        self, challenge: Challenge, sent: Tokens | None, may_refresh: bool
    ) -> tuple[Tokens, bool]:
        """New tokens after a 401 (and whether they came from a refresh)."""
        async with self._lock():
            current = self.tokens()
            if current is not None and (sent is None or current.access_token != sent.access_token):
                return current, False  # another request recovered meanwhile
            async with self._http() as http:
                server = await discover(http, self._server_url(), challenge)
                if current is not None and current.issuer != server.issuer:
                    logger.info(
                        "%s now uses authorization server %s (was %s): logging in there",
                        self._server,
                        server.issuer,
                        current.issuer,
                    )
                    current = None
                if may_refresh and current is not None and current.refresh_token:
                    refreshed = await self._refresh(http, current, server)
                    if refreshed is not None:
                        return refreshed, True
                scope = self._scope(challenge, server, current)
                return await self._obtain(http, server, scope), False

    async def _step_up(self, challenge: Challenge, sent: Tokens | None) -> Tokens | None:
        """Tokens with the challenged scopes added, or None when re-authorizing cannot help."""
        needed = challenge.scopes()
        async with self._lock():
            current = self.tokens()
            held = current.scopes() if current is not None else set()
            if not needed or needed <= held:
                if current and sent and current.access_token != sent.access_token:
                    return current  # another request stepped up meanwhile
                logger.info(
                    "%s refused scopes %s we hold; not re-authorizing", self._server, needed
                )
                return None
            async with self._http() as http:
                server = await discover(http, self._server_url(), challenge)
                scope = self._scope(challenge, server, current)
                logger.info("%s needs scope %s: re-authorizing", self._server, challenge.scope)
                return await self._obtain(http, server, scope)

    # -- getting tokens ----------------------------------------------------------------------

    async def _obtain(
        self, http: httpx.AsyncClient, server: AuthServer, scope: str | None
    ) -> Tokens:
        """Fresh tokens from `server` by this OAuth's grant; stored before they are returned.

        A failure is answered again, without a new attempt, for FAILED_LOGIN_PAUSE seconds:
        the client's era probe falls back to `initialize` after a failed request, and a
        second browser window (or a retried assertion) would follow."""
        if self._failed is not None and time.monotonic() - self._failed[0] < FAILED_LOGIN_PAUSE:
            raise self._failed[1]
        try:
            if self.grant == "authorization_code":
                tokens = await self._authorization_code(http, server, scope)
            else:
                tokens = await self._client_grant(http, server, scope)
        except OAuthError as exc:
            self._failed = (time.monotonic(), exc)
            raise
        self._failed = None
        self._servers[server.issuer] = server
        self._save(tokens=tokens)
        return tokens

    async def _client_grant(
        self, http: httpx.AsyncClient, server: AuthServer, scope: str | None
    ) -> Tokens:
        """client_credentials, or jwt_bearer with the assertion source's JWT."""
        assert self.client is not None
        registration = preregistered(self.client, server)
        if self.grant == "jwt_bearer":
            assert self.assertion is not None
            jwt = await assertion_for(self.assertion, server.issuer, server.resource)
            grant = {"grant_type": JWT_BEARER, "assertion": jwt}
        else:
            grant = {"grant_type": "client_credentials"}
        if scope:
            grant["scope"] = scope
        auth = ClientAuth.of(registration, self.client)
        return await request_tokens(
            http, server, auth, grant, scope=scope, dpop=self._dpop_for(server)
        )

    async def _authorization_code(
        self, http: httpx.AsyncClient, server: AuthServer, scope: str | None
    ) -> Tokens:
        if not self.login_allowed:
            raise OAuthError(
                "authorization",
                self._server_url(),
                "not logged in, and logging in is turned off (run `mcpkit login URL`)",
            )
        if not server.supports_s256():
            raise OAuthError(
                "discovery",
                server.issuer,
                "the authorization server does not offer PKCE S256 "
                "(code_challenge_methods_supported): refusing to use it",
            )
        registration, redirect_uri = await self._registration(http, server)
        request = AuthorizationRequest.new(server, registration.client_id, redirect_uri, scope)
        landed = await self.approval.approve(request.url, redirect_uri)
        code = request.code_from(landed)
        grant = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": request.verifier,
        }
        auth = ClientAuth.of(registration, self.client)
        return await request_tokens(
            http, server, auth, grant, scope=scope, dpop=self._dpop_for(server)
        )

    async def _refresh(
        self, http: httpx.AsyncClient, tokens: Tokens, server: AuthServer | None = None
    ) -> Tokens | None:
        """Tokens from a refresh (None when it was refused: the refresh token is dropped)."""
        server = (
            server
            or self._servers.get(tokens.issuer)
            or AuthServer(
                issuer=tokens.issuer,
                resource=tokens.resource,
                authorization_endpoint=None,
                token_endpoint=tokens.token_endpoint,
            )
        )
        if self.client is not None and self.client.issuer in (None, server.issuer):
            registration: Registration | None = preregistered(self.client, server)
        else:
            registration = self._stored_registration(server.issuer)
        if tokens.refresh_token is None or registration is None:
            return None
        grant = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        auth = ClientAuth.of(registration, self.client)
        try:
            dpop = self._dpop_key(create=False) if tokens.token_type == "DPoP" else None
            fresh = await request_tokens(
                http, server, auth, grant, scope=tokens.scope, previous=tokens, dpop=dpop
            )
        except OAuthError as exc:
            if exc.error is None:
                raise  # unreachable or broken: nothing is known about the refresh token
            logger.info(
                "refreshing the token at %s failed (%s): logging in again", exc.url, exc.error
            )
            self._save(tokens=None)
            return None
        self._save(tokens=fresh)
        return fresh

    # -- client registration -----------------------------------------------------------------

    async def _registration(
        self, http: httpx.AsyncClient, server: AuthServer
    ) -> tuple[Registration, str]:
        """The client to authorize as at `server`, and the redirect URI to use."""
        if self.client is not None:
            configured = self.approval.redirect_uri(self.metadata.redirect_uris)
            return preregistered(self.client, server), configured
        stored = self._stored_registration(server.issuer)
        redirect_uri: str | None = None
        if stored is not None:  # registered with another approval, maybe: then register again
            with contextlib.suppress(OAuthError):
                redirect_uri = self.approval.redirect_uri(stored.redirect_uris)
        if redirect_uri is None:
            redirect_uri = self.approval.redirect_uri(self.metadata.redirect_uris)
        if stored is not None and redirect_uri in stored.redirect_uris:
            return stored, redirect_uri
        registration = metadata_document(self.metadata, server, redirect_uri)
        if registration is None:
            registration = await register(http, self.metadata, server, redirect_uri)
        self._save(client=registration)
        return registration, redirect_uri

    def _stored_registration(self, issuer: str) -> Registration | None:
        record = self.store.load(self._server_url()) or {}
        clients = record.get("clients")
        found = Registration.from_json(clients.get(issuer)) if isinstance(clients, dict) else None
        return None if found is None or found.expired() else found

    # -- presenting tokens (Bearer, or DPoP with a fresh proof) -------------------------------

    def _sign(self, request: httpx.Request, tokens: Tokens | None) -> None:
        if tokens is None:
            return
        if tokens.token_type == "DPoP":
            self._sign_dpop(request, tokens.access_token)
        else:
            request.headers["authorization"] = f"Bearer {tokens.access_token}"

    def _sign_dpop(self, request: httpx.Request, access_token: str) -> None:
        key = self._dpop_key(create=False)
        if key is None:  # the key went missing with the store: the token is useless
            return
        request.headers["authorization"] = f"DPoP {access_token}"
        request.headers["dpop"] = key.proof(request.method, str(request.url), access_token)

    def _nonce_wanted(self, response: httpx.Response) -> bool:
        """A 401 `use_dpop_nonce` with a new nonce for a DPoP request: worth one retry."""
        sent = response.request.headers.get("authorization", "")
        if response.status_code != 401 or not sent.startswith("DPoP "):
            return False
        key = self._dpop_key(create=False)
        return (
            key is not None
            and _challenge(response).error == "use_dpop_nonce"
            and key.remember_nonce(str(response.request.url), response.headers.get("dpop-nonce"))
        )

    def _dpop_for(self, server: AuthServer) -> DPoPKey | None:
        """The DPoP key to bind tokens from `server` to (None: it does not do ES256 DPoP)."""
        return self._dpop_key(create=True) if ALGORITHM in server.dpop_algorithms else None

    def _dpop_key(self, create: bool) -> DPoPKey | None:
        if self._dpop is None:
            pem = (self.store.load(self._server_url()) or {}).get("dpop_key")
            if isinstance(pem, str):
                self._dpop = DPoPKey(pem)
            elif create:
                self._dpop = DPoPKey()
                self._save(dpop_key=self._dpop.pem)
        return self._dpop

    # -- plumbing ----------------------------------------------------------------------------

    def _bind(self, url: httpx.URL, force: bool = False) -> bool:
        """Whether `url` belongs to our server (binding to it when we have none yet)."""
        origin = (url.scheme, url.netloc.decode("ascii"))
        if self._server is None or force:
            self._server = canonical_resource(str(url.copy_with(query=None, fragment=None)))
            self._origin = origin
            return True
        return origin == self._origin

    def _scope(
        self, challenge: Challenge, server: AuthServer, previous: Tokens | None
    ) -> str | None:
        held = previous.scope if previous is not None and previous.issuer == server.issuer else None
        refreshable = self.grant == "authorization_code"
        return select_scope(challenge, server, held, self.scopes, offline=refreshable)

    def _server_url(self) -> str:
        assert self._server is not None
        return self._server

    def _save(self, **parts: Any) -> None:
        """Update the stored record: `tokens=` (None removes them), `client=` a registration."""
        key = self._server_url()
        record = self.store.load(key) or {}
        if "tokens" in parts:
            tokens = parts["tokens"]
            record["tokens"] = tokens.to_json() if tokens is not None else None
        if "dpop_key" in parts:
            record["dpop_key"] = parts["dpop_key"]
        if "client" in parts:
            registration = parts["client"]
            clients = record.get("clients")
            clients = dict(clients) if isinstance(clients, dict) else {}
            clients[registration.issuer] = registration.to_json()
            record["clients"] = clients
        self.store.save(key, record)

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock_object is None or self._lock_loop is not loop:
            self._lock_object, self._lock_loop = asyncio.Lock(), loop
        return self._lock_object

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)


def _challenge(response: httpx.Response) -> Challenge:
    return Challenge.parse(response.headers.get_list("www-authenticate"))
