"""Client authentication at the token, revocation and introspection endpoints.

A client authenticates the one way it registered (`token_endpoint_auth_method`):
client_secret_basic (HTTP Basic, RFC 6749 section 2.3.1: both parts form-urlencoded),
client_secret_post (`client_id` + `client_secret` in the body), private_key_jwt (RFC 7523: a
`client_assertion` JWT signed with one of its keys, `iss` = `sub` = its id, `aud` this server's
issuer or the endpoint's URL, short-lived, its `jti` used once), or none (a public client
names itself with `client_id`). Presenting two ways at once, or another way than its own, is
refused. Secrets are compared as digests in constant time. Failures are 401 invalid_client,
with a Basic challenge when the client tried Basic. Failures are counted per client address
and per client id named (`rate_limits`): past the limit every attempt is 429, the right
secret included, until the bucket refills.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from typing import Any
from urllib.parse import unquote_plus

from mcpkit._extras import optional_dependency
from mcpkit.auth.jws import MalformedJWS, parse
from mcpkit.auth.server.asgi import HTTPRequest, OAuthErrorResponse, Params
from mcpkit.auth.server.clients import ClientDirectory, OAuthClient
from mcpkit.auth.server.fetch import FetchRefused, GuardedFetcher
from mcpkit.auth.server.limits import Limiter
from mcpkit.auth.server.options import AuthServerOptions
from mcpkit.auth.server.store import AuthStore, digest

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ASSERTION_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")
MAX_ASSERTION_LIFETIME = 300
LEEWAY = 30
_FAILURES = "failed client authentications"
JWKS_CACHE_AGE = 300.0


class ClientAuthenticator:
    def __init__(
        self,
        options: AuthServerOptions,
        directory: ClientDirectory,
        store: AuthStore,
        fetcher: GuardedFetcher,
        limiter: Limiter,
    ) -> None:
        self._options = options
        self._directory = directory
        self._store = store
        self._fetcher = fetcher
        self._limiter = limiter
        self._jwks: dict[str, tuple[Any, float]] = {}

    async def authenticate(
        self, request: HTTPRequest, params: Params, endpoint: str
    ) -> OAuthClient:
        """The client that sent `request` to `endpoint` (its absolute URL), authenticated.
        Raises OAuthErrorResponse: invalid_request for conflicting credentials, invalid_client
        (401) when authentication fails, RateLimited (429) after too many failures from
        this address or for this client id."""
        limits, limiter = self._options.rate_limits, self._limiter
        address, claimed = request.client_host, _claimed_client(request, params)
        limiter.check(_FAILURES, address, limits.failed_client_auth_per_address)
        limiter.check(_FAILURES, claimed, limits.failed_client_auth_per_client)
        try:
            return await self._authenticate(request, params, endpoint)
        except OAuthErrorResponse as refused:
            if refused.status == 401:
                limiter.spend(_FAILURES, address, limits.failed_client_auth_per_address)
                limiter.spend(_FAILURES, claimed, limits.failed_client_auth_per_client)
            raise

    async def _authenticate(
        self, request: HTTPRequest, params: Params, endpoint: str
    ) -> OAuthClient:
        basic = _basic_credentials(request.header("authorization"))
        secret = params.get("client_secret")
        assertion = params.get("client_assertion")
        named = params.get("client_id")
        if sum(x is not None for x in (basic, secret, assertion)) > 1:
            raise OAuthErrorResponse(
                "invalid_request", "use exactly one client authentication method"
            )
        challenge = basic is not None
        if basic is not None:
            if named is not None and named != basic[0]:
                raise _failed("client_id does not match the credentials", challenge)
            named, secret = basic
        if assertion is not None:
            if params.get("client_assertion_type") != ASSERTION_TYPE:
                raise _failed("unsupported client_assertion_type", challenge)
            named = named or _assertion_subject(assertion)
        if not named:
            raise _failed("client authentication required", challenge)
        client = await self._find(named, challenge)
        used = "private_key_jwt" if assertion is not None else "none"
        if secret is not None:
            used = "client_secret_basic" if basic is not None else "client_secret_post"
        if used != client.auth_method:
            raise _failed(f"this client authenticates with {client.auth_method}", challenge)
        if secret is not None and not _secret_matches(secret, client.secret_hash):
            raise _failed("client authentication failed", challenge)
        if assertion is not None:
            await self._check_assertion(client, assertion, endpoint)
        return client

    async def _find(self, client_id: str, challenge: bool) -> OAuthClient:
        try:
            client = await self._directory.find(client_id)
        except OAuthErrorResponse as exc:
            raise _failed(exc.description, challenge) from None
        if client is None:
            raise _failed("unknown client", challenge)
        return client

    async def _check_assertion(self, client: OAuthClient, assertion: str, endpoint: str) -> None:
        with optional_dependency():
            import jwt

        try:
            # Our parser first: PyJWT's json.loads raises RecursionError on deep nesting.
            header = parse(assertion).header
            algorithm = header.get("alg")
            if algorithm not in ASSERTION_ALGORITHMS:
                raise _failed("client assertion algorithm not accepted")
            keys = jwt.PyJWKSet.from_dict(await self._client_keys(client)).keys
            kid = header.get("kid")
            key = next(k for k in keys if kid is None or k.key_id == kid)
            claims = jwt.decode(
                assertion,
                key.key,
                algorithms=[algorithm],
                audience=[self._options.issuer, self._options.endpoint("token"), endpoint],
                issuer=client.client_id,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "sub", "aud", "jti"]},
            )
        except (jwt.PyJWTError, MalformedJWS, StopIteration):
            raise _failed("client assertion is not valid") from None
        now = self._options.clock()
        if claims["sub"] != client.client_id:
            raise _failed("client assertion subject is not the client")
        if claims["exp"] - now > MAX_ASSERTION_LIFETIME + LEEWAY:
            raise _failed("client assertion lives too long")
        used = f"assertion:{client.client_id}:{claims['jti']}"
        if await self._store.is_revoked(used):
            raise _failed("client assertion was already used")
        await self._store.revoke(used, float(claims["exp"]) + LEEWAY)

    async def _client_keys(self, client: OAuthClient) -> Any:
        if client.jwks is not None:
            return dict(client.jwks)
        url = client.jwks_uri or ""
        now = self._options.clock()
        cached = self._jwks.get(url)
        if cached is not None and cached[1] > now:
            return cached[0]
        try:
            fetched = await self._fetcher.get_json(url)
        except FetchRefused as exc:
            raise _failed(f"client keys: {exc}") from None
        self._jwks[url] = (fetched.document, now + JWKS_CACHE_AGE)
        if len(self._jwks) > 256:
            self._jwks.pop(next(iter(self._jwks)))
        return fetched.document


def _basic_credentials(header: str | None) -> tuple[str, str] | None:
    if header is None or header[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise _failed("malformed Basic credentials", True) from None
    client_id, colon, secret = decoded.partition(":")
    if not colon:
        raise _failed("malformed Basic credentials", True)
    return unquote_plus(client_id), unquote_plus(secret)


def _claimed_client(request: HTTPRequest, params: Params) -> str | None:
    """The client id a request names (to count its failures), without checking anything."""
    try:
        basic = _basic_credentials(request.header("authorization"))
        named = basic[0] if basic is not None else params.get("client_id")
        assertion = params.get("client_assertion")
    except OAuthErrorResponse:
        return None
    if named is None and assertion is not None:
        return _assertion_subject(assertion)
    return named


def _assertion_subject(assertion: str) -> str | None:
    try:
        subject = parse(assertion).payload.get("sub")
    except MalformedJWS:
        return None
    return subject if isinstance(subject, str) else None


def _secret_matches(secret: str, stored: str | None) -> bool:
    if stored is None:
        return False
    return hmac.compare_digest(digest(secret), stored)


def _failed(description: str, challenge: bool = False) -> OAuthErrorResponse:
    headers = [(b"www-authenticate", b'Basic realm="oauth"')] if challenge else []
    return OAuthErrorResponse("invalid_client", description, 401, headers)
