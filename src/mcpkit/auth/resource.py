"""A protected MCP endpoint: what it publishes about itself, and whom it lets in.

`BearerAuth` is what `server.http_app(auth=...)` takes (it implements the HTTP app's
`Authenticator`). It serves the OAuth 2.0 Protected Resource Metadata (RFC 9728) at the
well-known URI for the endpoint's path and at the root; it wants exactly one
`Authorization: Bearer <token>` header on every request (RFC 6750 header method only: a token
in the query string or the body is refused) and verifies the token with its `TokenVerifier`;
it answers a missing or bad token with 401 and a `WWW-Authenticate` challenge naming the
metadata and the scopes, and a caller without a needed scope with 403 `insufficient_scope`.

The resource's identity is configured, never read from the request: `resource` is its public
canonical URI (behind a reverse proxy, the URL clients use). It is the `resource` of the
metadata and the audience every token must carry; deriving it from a Host or forwarded
header would let a client choose which tokens the server accepts (a token issued for another
server, presented with that server's host name).

Every request carries its token, so the verifier's answer is remembered by the exact bytes of
the Authorization header (see `authenticate`), for no longer than the verifier itself keeps it
(`verify_until`). Those bytes are a token: they stay in this process's memory, bounded, and
only once verified (the verifier's own memory holds SHA-256 digests). That deadline is read
against `clock` (default `time.time`), which must be the verifier's clock too.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypedDict
from urllib.parse import parse_qs

import orjson

from mcpkit.auth.errors import InvalidToken
from mcpkit.auth.tokens import TokenVerifier
from mcpkit.auth.wellknown import PROTECTED_RESOURCE, canonical_resource
from mcpkit.protocol.http import Refusal
from mcpkit.runtime.principal import Principal

# RFC 6750's b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_B64TOKEN = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/"
# How many Authorization headers `BearerAuth` remembers (the oldest leave first).
REMEMBERED = 4096


class BearerOptions(TypedDict, total=False):
    """`BearerAuth`'s fields after the verifier and the resource, as keyword arguments
    (`AuthorizationServer.bearer_auth(resource, **options)`)."""

    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...]
    required_scopes: frozenset[str]
    resource_name: str | None
    documentation: str | None
    clock: Callable[[], float]


@dataclass(frozen=True)
class BearerAuth:
    """Bearer-token protection for an MCP endpoint (see the module docstring).

    `verifier` checks tokens (`JWTVerifier`, `IntrospectionVerifier`, `StaticTokenVerifier`, or
    your own); `resource`: the endpoint's public URL; `authorization_servers`: issuer URLs
    clients log in at; `scopes_supported`: the scopes this resource knows (advertised);
    `required_scopes`: what every request needs; `resource_name` and `documentation`:
    optional metadata for people; `clock` (keyword only): the current time in epoch seconds,
    the same clock as the verifier's (a test passes a fake one to both).

    Raises ValueError for a `resource` that is not an absolute http(s) URL. A request's token
    is never an exception: `authenticate` answers with the `Principal` or a `Refusal` (401,
    400 or 403, with its WWW-Authenticate challenge); the verifier's `InvalidToken` becomes a
    401 refusal.
    """

    verifier: TokenVerifier
    resource: str
    authorization_servers: tuple[str, ...] = ()
    scopes_supported: tuple[str, ...] = ()
    required_scopes: frozenset[str] = frozenset()
    resource_name: str | None = None
    documentation: str | None = None
    clock: Callable[[], float] = field(default=time.time, kw_only=True, repr=False, compare=False)
    _document: bytes = field(init=False, repr=False)
    # Authorization header bytes -> (the principal verified for them, until when): see
    # `authenticate`.
    _known: dict[bytes, tuple[Principal, float]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )
    _verify_until: Callable[[str], Awaitable[tuple[Principal, float]]] | None = field(
        init=False, repr=False, compare=False, default=None
    )

    def __post_init__(self) -> None:
        canonical = canonical_resource(self.resource)
        object.__setattr__(self, "resource", canonical)
        for name in ("authorization_servers", "scopes_supported"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "required_scopes", frozenset(self.required_scopes))
        document: dict[str, Any] = {
            "resource": canonical,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            document["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name is not None:
            document["resource_name"] = self.resource_name
        if self.documentation is not None:
            document["resource_documentation"] = self.documentation
        object.__setattr__(self, "_document", orjson.dumps(document))
        # Verifiers that say how long their answer holds (ours do) let it be remembered here.
        object.__setattr__(self, "_verify_until", getattr(self.verifier, "verify_until", None))

    @property
    def metadata_url(self) -> str:
        """The absolute URL of this resource's metadata (the path-specific form)."""
        scheme, _, rest = self.resource.partition("://")
        host, slash, path = rest.partition("/")
        return f"{scheme}://{host}{PROTECTED_RESOURCE}{slash}{path}"

    # -- what the HTTP app asks (`mcpkit.transports.http.guard.Authenticator`) ---------------

    def metadata_paths(self, endpoint_path: str) -> tuple[str, ...]:
        path = endpoint_path.rstrip("/")
        return (PROTECTED_RESOURCE + path, PROTECTED_RESOURCE) if path else (PROTECTED_RESOURCE,)

    def metadata(self, scope: dict[str, Any]) -> bytes:
        return self._document

    async def authenticate(
        self, scope: dict[str, Any], headers: dict[bytes, bytes]
    ) -> Principal | Refusal:
        # Cheap tests first: the query is parsed only when it may hold a token, and searched
        # only when there is one (`b"..." in b""` costs as much as the rest of a remembered
        # request's checks: bytes' `in` first tries its argument as an integer).
        query = scope.get("query_string")
        if query and b"access_token" in query and _token_in_query(scope):
            return self._refusal(
                400, "invalid_request", "send the token in the Authorization header"
            )
        raw = headers.get(b"authorization")
        if raw is None:
            return self._refusal(401, None, "a bearer token is required")
        # A client sends the same header on every request: when these exact bytes were
        # verified and the verifier's memory of them still holds, the answer is the same
        # principal. A dict lookup (SipHash of the header, then a byte compare) instead of
        # parsing the header, encoding the token and hashing it with SHA-256 for the
        # verifier's memory: through uvicorn, the auth code's share of a stateful tools/call
        # went from about 45,000 to 10,000 instructions (of 430,000; callgrind). The deadline
        # (the token's expiry, or an introspection answer's `cache_ttl`) is checked on every
        # request, and past it the verifier decides again. The scopes are checked below and
        # the session's owner by the app, as for any request.
        known = self._known.get(raw)
        if known is not None and self.clock() < known[1]:
            principal = known[0]
        else:
            verdict = await self._verify(raw)
            if type(verdict) is Refusal:
                return verdict
            principal = verdict  # type: ignore[assignment]
        if not principal.has_scopes(self.required_scopes):
            return self.insufficient_scope(scope, self.required_scopes)
        return principal

    async def _verify(self, raw: bytes) -> Principal | Refusal:
        """The verifier's answer for the token of an Authorization header, remembered (see
        `authenticate`) when it says for how long."""
        self._known.pop(raw, None)  # past its deadline, if it was there
        token = _bearer_token(raw)
        if token is None:
            # RFC 6750 section 3.1: a malformed request is 400 invalid_request; another
            # scheme is no bearer authentication at all (401, the challenge, no error code).
            if _is_bearer_scheme(raw):
                return self._refusal(
                    400, "invalid_request", "the Authorization header's bearer token is malformed"
                )
            return self._refusal(401, None, "a bearer token is required")
        try:
            if self._verify_until is None:
                return await self.verifier.verify(token)
            principal, until = await self._verify_until(token)
        except InvalidToken as exc:
            return self._refusal(401, "invalid_token", exc.description)
        # Only the plain spelling is kept: one entry per token, not one per way of writing
        # the same header (case, spaces), which would let one token fill the memory.
        if until > self.clock() and len(raw) == 7 + len(token) and raw.startswith(b"Bearer "):
            known = self._known
            known[raw] = (principal, until)
            if len(known) > REMEMBERED:
                del known[next(iter(known))]
        return principal

    def insufficient_scope(self, scope: dict[str, Any], needed: frozenset[str]) -> Refusal:
        return self._refusal(
            403,
            "insufficient_scope",
            "the token lacks a scope this request needs",
            scopes=self.required_scopes | needed,
        )

    # -- answers -----------------------------------------------------------------------------

    def challenge(
        self,
        error: str | None = None,
        description: str | None = None,
        scopes: Iterable[str] | None = None,
    ) -> str:
        """A `WWW-Authenticate` value (RFC 6750 / RFC 9728) naming the metadata and scopes."""
        parts = [f'resource_metadata="{_quoted(self.metadata_url)}"']
        wanted = sorted(self.required_scopes if scopes is None else scopes)
        if wanted:
            parts.append(f'scope="{_quoted(" ".join(wanted))}"')
        if error is not None:
            parts.append(f'error="{error}"')
        if description is not None:
            parts.append(f'error_description="{_quoted(description)}"')
        return "Bearer " + ", ".join(parts)

    def _refusal(
        self,
        status: int,
        error: str | None,
        description: str,
        scopes: Iterable[str] | None = None,
    ) -> Refusal:
        header = self.challenge(error, description if error else None, scopes)
        body = {"error": error or "unauthorized", "error_description": description}
        return Refusal(
            status,
            orjson.dumps(body),
            ((b"www-authenticate", header.encode("latin-1", "replace")),),
        )


def _quoted(value: str) -> str:
    """A quoted-string's content: backslash and quote escaped, controls and non-ASCII gone."""
    kept = "".join(c for c in value if 0x20 <= ord(c) < 0x7F)
    return kept.replace("\\", "\\\\").replace('"', '\\"')


def _bearer_token(raw: bytes) -> str | None:
    """The token of an `Authorization: Bearer <b64token>` value (scheme in any case, spaces
    around), or None. Checked with C-level byte operations: this runs on every request."""
    scheme, _, rest = raw.strip(b" \t").partition(b" ")
    token = rest.lstrip(b" ")
    body = token.rstrip(b"=")
    if scheme.lower() != b"bearer" or not body or body.translate(None, _B64TOKEN):
        return None
    return token.decode("ascii")


def _is_bearer_scheme(raw: bytes) -> bool:
    scheme = raw.strip(b" \t").partition(b" ")[0]
    return scheme.lower() == b"bearer"


def _token_in_query(scope: dict[str, Any]) -> bool:
    query = scope.get("query_string", b"")
    return "access_token" in parse_qs(query.decode("latin-1"))
