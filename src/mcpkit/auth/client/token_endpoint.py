"""Requests to the token endpoint: client authentication and the grants the client uses.

Client authentication (RFC 6749 section 2.3, OAuth 2.1 section 2.4): `client_secret_basic`
(HTTP Basic with the form-urlencoded id and secret; `client_id` in the body too, which RFC 6749
allows and the official SDK's authorization server requires), `client_secret_post` (both in
the body), `none` (only `client_id` in the body), and `private_key_jwt` (RFC 7523 section 2.2: a
short-lived JWT signed with the client's key, `iss` = `sub` = client id, `aud` = the authorization
server's issuer). Grants: `authorization_code` (with the PKCE verifier), `refresh_token`
(rotation: a new refresh token replaces the old one; none keeps the old one),
`client_credentials` and `jwt_bearer`, each with the `resource` parameter (RFC 8707). With a
DPoP key each request carries a proof (`dpop.py`), and the answer may be a DPoP token.

A refused request raises OAuthError carrying the server's `error` and `error_description`;
`refresh` callers tell "this refresh token is dead" (`invalid_grant`) by `error`.
"""

from __future__ import annotations

import base64
import time
import uuid
from typing import Any
from urllib.parse import quote

import httpx

from mcpkit._extras import optional_dependency
from mcpkit.auth.client.config import ClientCredentials
from mcpkit.auth.client.discovery import AuthServer
from mcpkit.auth.client.dpop import DPoPKey
from mcpkit.auth.client.errors import OAuthError, requesting
from mcpkit.auth.client.records import Registration, Tokens
from mcpkit.auth.client.wire import json_object, text

JSONObject = dict[str, Any]
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ASSERTION_LIFETIME = 300


class ClientAuth:
    """How one client proves who it is at a token endpoint."""

    def __init__(
        self,
        registration: Registration,
        private_key: str | None = None,
        algorithm: str | None = None,
    ) -> None:
        self.registration = registration
        self._private_key = private_key
        self._algorithm = algorithm

    @classmethod
    def of(cls, registration: Registration, credentials: ClientCredentials | None) -> ClientAuth:
        if credentials is None or credentials.client_id != registration.client_id:
            return cls(registration)
        return cls(registration, credentials.private_key, credentials.signing_algorithm)

    def apply(self, form: dict[str, str], headers: dict[str, str], server: AuthServer) -> None:
        """Add this client's authentication to a token request's form and headers."""
        registration = self.registration
        method = registration.auth_method
        if method == "client_secret_basic" and registration.client_secret is not None:
            headers["authorization"] = basic_authorization(
                registration.client_id, registration.client_secret
            )
            form["client_id"] = registration.client_id
        elif method == "client_secret_post" and registration.client_secret is not None:
            form["client_id"] = registration.client_id
            form["client_secret"] = registration.client_secret
        elif method == "private_key_jwt":
            form["client_assertion_type"] = ASSERTION_TYPE
            form["client_assertion"] = self.assertion(server)
        else:
            form["client_id"] = registration.client_id

    def assertion(self, server: AuthServer) -> str:
        """A signed client assertion for `server` (RFC 7523 section 3)."""
        if self._private_key is None:
            raise OAuthError("token", server.token_endpoint, "private_key_jwt needs a private key")
        with optional_dependency():
            import jwt

        now = int(time.time())
        audience = server.issuer if server.from_metadata else server.token_endpoint
        claims = {
            "iss": self.registration.client_id,
            "sub": self.registration.client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
            "jti": str(uuid.uuid4()),
        }
        algorithm = self._algorithm or key_algorithm(self._private_key)
        try:
            return jwt.encode(claims, self._private_key, algorithm=algorithm)
        except (ValueError, TypeError, jwt.PyJWTError) as exc:
            raise OAuthError(
                "token",
                server.token_endpoint,
                f"cannot sign the client assertion with {algorithm}: {type(exc).__name__}",
            ) from None


def basic_authorization(client_id: str, secret: str) -> str:
    """The HTTP Basic header of client_secret_basic: both parts form-urlencoded first."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


def key_algorithm(pem: str) -> str:
    """The JWS algorithm that fits a PEM private key: ES256/384/512, RS256 or EdDSA."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError):
        raise ValueError("the private key is not an unencrypted PEM private key") from None
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {256: "ES256", 384: "ES384", 521: "ES512"}.get(key.curve.key_size, "ES256")
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise ValueError(f"unsupported private key type {type(key).__name__}")


async def request_tokens(
    http: httpx.AsyncClient,
    server: AuthServer,
    client: ClientAuth,
    grant: dict[str, str],
    *,
    scope: str | None,
    previous: Tokens | None = None,
    dpop: DPoPKey | None = None,
) -> Tokens:
    """POST a grant to the token endpoint; the tokens it answers with.

    `scope` is what was asked for (the grant carries it where the grant type takes one); it is
    recorded with the tokens, with whatever else the answer says was granted;
    `previous` is the token set a refresh replaces (its refresh token survives when the server
    does not rotate it); `dpop` proves possession of that key (RFC 9449), following one
    `use_dpop_nonce` answer. Raises OAuthError (step "token").
    """
    url = server.token_endpoint
    for attempt in (1, 2):
        form = {**grant, "resource": server.resource}
        headers = {"accept": "application/json"}
        client.apply(form, headers, server)
        if dpop is not None:
            headers["dpop"] = dpop.proof("POST", url)
        with requesting("token", url):
            response = await http.post(url, data=form, headers=headers)
        body = json_object(response)
        nonce = response.headers.get("dpop-nonce")
        if (
            attempt == 1
            and dpop is not None
            and body.get("error") == "use_dpop_nonce"
            and dpop.remember_nonce(url, nonce)
        ):
            continue
        break
    if response.status_code != 200:
        raise OAuthError.answered(
            "token",
            url,
            f"HTTP {response.status_code}",
            body,
        )
    return _tokens(body, server, url, scope, previous=previous, dpop=dpop is not None)


def _tokens(
    body: JSONObject,
    server: AuthServer,
    url: str,
    scope: str | None,
    *,
    previous: Tokens | None,
    dpop: bool,
) -> Tokens:
    access = body.get("access_token")
    token_type = body.get("token_type")
    if not isinstance(access, str) or not access:
        raise OAuthError("token", url, "the answer carries no access_token")
    accepted = ("bearer", "dpop") if dpop else ("bearer",)
    if not isinstance(token_type, str) or token_type.lower() not in accepted:
        raise OAuthError("token", url, f"unsupported token_type {text(token_type)!r}")
    expires_in = body.get("expires_in")
    refresh = body.get("refresh_token")
    granted = body.get("scope")
    return Tokens(
        access_token=access,
        token_type="DPoP" if token_type.lower() == "dpop" else "Bearer",
        issuer=server.issuer,
        token_endpoint=server.token_endpoint,
        resource=server.resource,
        refresh_token=refresh
        if isinstance(refresh, str) and refresh
        else (previous.refresh_token if previous is not None else None),
        expires_at=time.time() + expires_in
        if isinstance(expires_in, int | float) and not isinstance(expires_in, bool)
        else None,
        scope=_merge_scope(scope, granted if isinstance(granted, str) else None),
    )


def _merge_scope(requested: str | None, granted: str | None) -> str | None:
    """What the client records as its scope set: what it asked for, plus anything granted."""
    scopes = dict.fromkeys((requested or "").split())
    scopes.update(dict.fromkeys((granted or "").split()))
    return " ".join(scopes) or None
