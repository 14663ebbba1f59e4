"""`AuthorizationServer`: the whole authorization server as one pure ASGI app.

It serves exactly the paths in `paths` (every endpoint under the issuer's path, the metadata
at its well-known path) and answers 404 to anything else, so an integrator can route those
paths to it and the rest to the MCP app. Requests are read whole under `max_body`; every
refusal an endpoint raises becomes the RFC 6749 JSON error; anything unexpected is logged and
answered 500 server_error without details. The endpoints a browser-based client calls
(metadata, JWKS, token, registration, revocation) allow CORS from any origin; the
authorization endpoint is navigated to, not fetched, and introspection is for servers.
Expired codes, tokens, revocations and keys are purged at most once a minute, as requests
come.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from mcpkit.auth.server.asgi import (
    HTTPRequest,
    HTTPResponse,
    OAuthErrorResponse,
    Receive,
    Send,
    error_response,
    json_response,
    read_request,
)
from mcpkit.auth.server.authorize import AuthorizeEndpoint
from mcpkit.auth.server.cimd import MetadataDocuments
from mcpkit.auth.server.client_auth import ClientAuthenticator
from mcpkit.auth.server.clients import ClientDirectory
from mcpkit.auth.server.fetch import GuardedFetcher
from mcpkit.auth.server.grants import TokenEndpoint
from mcpkit.auth.server.issuing import TokenMinter
from mcpkit.auth.server.keys import KeyRing
from mcpkit.auth.server.limits import Limiter
from mcpkit.auth.server.metadata import endpoint_path, metadata_document, metadata_paths
from mcpkit.auth.server.options import AuthServerOptions
from mcpkit.auth.server.registration import RegistrationEndpoint
from mcpkit.auth.server.revocation import TokenRegistry
from mcpkit.auth.server.store import AuthStore

if TYPE_CHECKING:  # the resource side is imported when `bearer_auth` is called
    from mcpkit.auth.resource import BearerAuth, BearerOptions

ASGIApp = Callable[[dict[str, Any], Receive, Send], Awaitable[None]]

logger = logging.getLogger("mcpkit.auth.server")
Handler = Callable[[HTTPRequest], Awaitable[HTTPResponse]]
PURGE_EVERY = 60.0
_CORS = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-headers", b"authorization, content-type, mcp-protocol-version"),
    (b"access-control-max-age", b"600"),
]
_PUBLIC_CACHE = [(b"cache-control", b"public, max-age=300")]


@dataclass(frozen=True)
class Route:
    methods: tuple[str, ...]
    handler: Handler
    cors: bool


class AuthorizationServer:
    """`await server(scope, receive, send)`. Raises ValueError at construction for options
    that cannot work (see `AuthServerOptions.check`)."""

    def __init__(self, options: AuthServerOptions) -> None:
        options.check()
        self.options = options
        store = options.store
        self.store: AuthStore = store if not isinstance(store, str | Path) else _sqlite(store)
        fetcher = GuardedFetcher(options.cimd)
        limiter = Limiter(options.rate_limits.max_tracked, options.clock)
        documents = MetadataDocuments(options, fetcher) if options.cimd.enabled else None
        directory = ClientDirectory(options, self.store, documents)
        self.keys = KeyRing(
            self.store, options.issuer, options.key_algorithm, options.key_rotation, options.clock
        )
        minter = TokenMinter(options, self.store, self.keys)
        authenticator = ClientAuthenticator(options, directory, self.store, fetcher, limiter)
        tokens = TokenRegistry(options, self.store, authenticator, self.keys, minter)
        authorize = AuthorizeEndpoint(options, self.store, directory, limiter)
        token = TokenEndpoint(options, self.store, authenticator, minter)
        routes = {
            "authorize": Route(("GET", "POST"), authorize.handle, False),
            "token": Route(("POST",), token.handle, True),
            "revoke": Route(("POST",), tokens.revoke, True),
            "introspect": Route(("POST",), tokens.introspect, False),
            "jwks": Route(("GET",), self._jwks, True),
        }
        if options.registration:
            register = RegistrationEndpoint(options, directory, limiter)
            routes["register"] = Route(("POST",), register.handle, True)
        self._routes = {endpoint_path(options, name): route for name, route in routes.items()}
        for path in metadata_paths(options):
            self._routes[path] = Route(("GET",), self._metadata, True)
        self._metadata_document = metadata_document(options)
        self._next_purge = 0.0
        self._purging: set[asyncio.Task[None]] = set()

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path this app answers (absolute, from the issuer's origin)."""
        return tuple(self._routes)

    @property
    def metadata(self) -> dict[str, Any]:
        """The RFC 8414 metadata document."""
        return dict(self._metadata_document)

    def bearer_auth(self, resource: str, **options: Unpack[BearerOptions]) -> BearerAuth:
        """What `server.http_app(auth=...)` takes to accept this server's tokens for the MCP
        endpoint at `resource` (its public URL): JWTs checked against this server's keys in
        this process (no HTTP round trip), this issuer named in the endpoint's metadata.
        `options` go to `BearerAuth` (required_scopes, scopes_supported, ...); the scopes this
        server grants are advertised unless they say otherwise. The verifier and `BearerAuth`
        read this server's `clock`, the one its tokens were stamped with."""
        from mcpkit.auth.jwks import JWKSCache
        from mcpkit.auth.resource import BearerAuth
        from mcpkit.auth.tokens import JWTVerifier

        issuer = self.options.issuer
        keys = JWKSCache(f"{issuer}/jwks", source=self.keys.jwks)
        clock = self.options.clock
        verifier = JWTVerifier(
            issuer=issuer,
            audience=resource,
            jwks=keys,
            algorithms=(self.options.key_algorithm,),
            clock=clock,
        )
        options.setdefault("clock", clock)
        options.setdefault("authorization_servers", (issuer,))
        options.setdefault("scopes_supported", self.options.scopes)
        return BearerAuth(verifier, resource, **options)

    def mount(self, app: ASGIApp) -> ASGIApp:
        """One ASGI app: this server's paths (`paths`) here, everything else to `app` (an
        MCP app). The ASGI lifespan goes to `app`; this server's store closes after it."""
        return _Mounted(self, app)

    async def rotate_keys(self) -> None:
        """Start signing with a new key now (the current one stays published)."""
        await self.keys.rotate()

    async def close(self) -> None:
        """Finish purging and close the store."""
        await asyncio.gather(*self._purging, return_exceptions=True)
        await self.store.close()

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        path, root = scope["path"], scope.get("root_path", "")
        if root and not path.startswith(root):
            path = root + path
        route = self._routes.get(path)
        response = await self._respond(route, scope, receive)
        if route is not None and route.cors:
            response.headers = [*response.headers, *_CORS[:1]]
        await response.send(send)
        self._purge_now_and_then()

    async def _respond(
        self, route: Route | None, scope: dict[str, Any], receive: Receive
    ) -> HTTPResponse:
        method = scope["method"]
        if route is None:
            return json_response(404, {"error": "not_found"})
        if method == "OPTIONS" and route.cors:
            allow = ", ".join((*route.methods, "OPTIONS")).encode()
            return HTTPResponse(204, b"", [*_CORS[1:], (b"access-control-allow-methods", allow)])
        if method not in route.methods:
            allow = ", ".join(route.methods).encode()
            error = OAuthErrorResponse("invalid_request", f"method {method} not allowed", 405)
            return _with(error_response(error), (b"allow", allow))
        try:
            request = await read_request(scope, receive, self.options.max_body)
            return await route.handler(request)
        except OAuthErrorResponse as refused:
            return error_response(refused)
        except Exception:
            logger.exception("authorization server: unexpected failure on %s", scope["path"])
            return error_response(OAuthErrorResponse("server_error", "internal error", 500))

    async def _metadata(self, request: HTTPRequest) -> HTTPResponse:
        return json_response(200, self._metadata_document, _PUBLIC_CACHE)

    async def _jwks(self, request: HTTPRequest) -> HTTPResponse:
        return json_response(200, await self.keys.jwks(), _PUBLIC_CACHE)

    def _purge_now_and_then(self) -> None:
        now = self.options.clock()
        if now < self._next_purge:
            return
        self._next_purge = now + PURGE_EVERY
        task = asyncio.get_running_loop().create_task(self.store.purge(now))
        self._purging.add(task)
        task.add_done_callback(self._purged)

    def _purged(self, task: asyncio.Task[None]) -> None:
        self._purging.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("authorization server: purge failed: %r", task.exception())

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


class _Mounted:
    """An authorization server and another ASGI app on one origin (`AuthorizationServer.mount`)."""

    def __init__(self, server: AuthorizationServer, app: ASGIApp) -> None:
        self._server = server
        self._app = app
        self._paths = frozenset(server.paths)

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._app(scope, receive, self._closing(send))
        elif kind == "http" and scope["path"] in self._paths:
            await self._server(scope, receive, send)
        else:
            await self._app(scope, receive, send)

    def _closing(self, send: Send) -> Send:
        async def forward(message: dict[str, Any]) -> None:
            if message["type"] == "lifespan.shutdown.complete":
                await self._server.close()
            await send(message)

        return forward


def _with(response: HTTPResponse, header: tuple[bytes, bytes]) -> HTTPResponse:
    response.headers = [*response.headers, header]
    return response


def _sqlite(path: str | Path) -> AuthStore:
    from mcpkit.auth.server.sqlite_store import SQLiteStore

    return SQLiteStore(path)
