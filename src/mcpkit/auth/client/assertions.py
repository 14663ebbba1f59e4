"""Assertion grants (RFC 7523 section 2.1): a JWT from elsewhere traded for an access token.

`OAuth(grant="jwt_bearer", assertion=...)` sends `grant_type=urn:ietf:params:oauth:grant-type:
jwt-bearer` with the JWT the `assertion` source gives for (issuer, resource):

- workload identity federation (SEP-1933): a JWT the platform issued this workload, e.g.
  `assertion=lambda issuer, resource: Path("/var/run/token").read_text()`;
- enterprise-managed authorization (SEP-990): `IdJagExchange(...)` first trades the user's
  ID token at the enterprise identity provider for an Identity Assertion JWT Authorization
  Grant (ID-JAG, RFC 8693 token exchange) addressed to the authorization server and the MCP
  server, then that grant is the assertion.

A refused assertion is not retried and no other grant is tried: the error is the answer.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx

from mcpkit.auth.client.errors import OAuthError, requesting
from mcpkit.auth.client.token_endpoint import basic_authorization
from mcpkit.auth.client.wire import json_object, text

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
AssertionSource = Callable[[str, str], Awaitable[str] | str]


async def assertion_for(source: AssertionSource, issuer: str, resource: str) -> str:
    """The assertion `source` gives for the authorization server `issuer` and `resource`."""
    made = source(issuer, resource)
    if inspect.isawaitable(made):
        made = await made
    return str(made)


@dataclass(frozen=True, slots=True)
class IdJagExchange:
    """Trade an ID token at the identity provider's `token_endpoint` for an ID-JAG
    (RFC 8693) addressed to the authorization server (`audience`) and the MCP server
    (`resource`); `client_id` (and `client_secret`, sent with HTTP Basic) is this client at
    the identity provider. Raises OAuthError (step "token")."""

    token_endpoint: str
    id_token: str = field(repr=False)
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    timeout: float = 30.0

    async def __call__(self, issuer: str, resource: str) -> str:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "subject_token": self.id_token,
            "subject_token_type": ID_TOKEN,
            "audience": issuer,
            "resource": resource,
        }
        headers = {"accept": "application/json"}
        if self.client_id is not None and self.client_secret is not None:
            headers["authorization"] = basic_authorization(self.client_id, self.client_secret)
        elif self.client_id is not None:
            form["client_id"] = self.client_id
        url = self.token_endpoint
        async with httpx.AsyncClient(timeout=self.timeout) as http:
            with requesting("token", url):
                response = await http.post(url, data=form, headers=headers)
        body = json_object(response)
        granted = text(body.get("access_token"))
        if response.status_code != 200 or granted is None:
            raise OAuthError.answered(
                "token",
                url,
                f"the identity provider refused the exchange (HTTP {response.status_code})",
                body,
            )
        if body.get("issued_token_type") not in (None, ID_JAG):
            raise OAuthError(
                "token", url, "the identity provider issued something other than an ID-JAG"
            )
        return granted
