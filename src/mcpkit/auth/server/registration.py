"""Dynamic client registration (RFC 7591): POST the client's metadata, get a client id.

The metadata passes `clients.check_metadata` (redirect URI rules, grant types open to
self-registered clients, an authentication method and what it needs); a client that
authenticates with a secret gets one, shown once in the answer and stored only as a digest.
When `registration_token` is set, registering needs it as a bearer token (RFC 7591's initial
access token). Refusals are 400 invalid_redirect_uri / invalid_client_metadata, and 429 past
`rate_limits.registrations_per_address` (every attempt counts).
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any

from mcpkit.auth.server.asgi import (
    NO_STORE,
    HTTPRequest,
    HTTPResponse,
    OAuthErrorResponse,
    json_response,
)
from mcpkit.auth.server.clients import ClientDirectory, MetadataError, check_metadata
from mcpkit.auth.server.issuing import new_id
from mcpkit.auth.server.limits import Limiter
from mcpkit.auth.server.options import AuthServerOptions
from mcpkit.auth.server.store import ClientRecord, digest
from mcpkit.auth.untrusted_json import NestedTooDeep, loads

SECRET_METHODS = ("client_secret_basic", "client_secret_post")


class RegistrationEndpoint:
    def __init__(
        self, options: AuthServerOptions, directory: ClientDirectory, limiter: Limiter
    ) -> None:
        self._options = options
        self._directory = directory
        self._limiter = limiter

    async def handle(self, request: HTTPRequest) -> HTTPResponse:
        """Raises OAuthErrorResponse for every refusal (RateLimited past the registrations an
        address may make)."""
        rate = self._options.rate_limits.registrations_per_address
        self._limiter.take("registrations from this address", request.client_host, rate)
        self._check_token(request.header("authorization"))
        kind = (request.header("content-type") or "").split(";", 1)[0].strip().lower()
        if kind != "application/json":
            raise MetadataError("send the client metadata as application/json")
        try:
            document = loads(request.body)
        except NestedTooDeep as exc:
            raise MetadataError(f"the client metadata is {exc}") from None
        except ValueError:
            raise MetadataError("the body is not JSON") from None
        if not isinstance(document, dict):
            raise MetadataError("the client metadata must be a JSON object")
        accepted = check_metadata(document, self._options, default_method="client_secret_basic")
        client_id = new_id()
        now = int(self._options.clock())
        secret = None
        if accepted["token_endpoint_auth_method"] in SECRET_METHODS:
            secret = secrets.token_urlsafe(32)
        secret_hash = digest(secret) if secret is not None else None
        await self._directory.register(ClientRecord(client_id, accepted, secret_hash, now))
        answer: dict[str, Any] = {"client_id": client_id, "client_id_issued_at": now, **accepted}
        if secret is not None:
            answer.update(client_secret=secret, client_secret_expires_at=0)
        return json_response(201, answer, NO_STORE)

    def _check_token(self, header: str | None) -> None:
        expected = self._options.registration_token
        if expected is None:
            return
        given = header[7:].strip() if header and header[:7].lower() == "bearer " else ""
        if not hmac.compare_digest(digest(given), digest(expected)):
            challenge = (b"www-authenticate", b'Bearer error="invalid_token"')
            raise OAuthErrorResponse(
                "invalid_token", "registration needs a valid initial access token", 401, [challenge]
            )
