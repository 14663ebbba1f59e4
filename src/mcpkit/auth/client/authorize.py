"""The authorization request, and checking the response the browser brings back.

How this works: `AuthorizationRequest.new(...)` makes a fresh PKCE S256 verifier and a random
`state`, records the issuer the response must come from, and builds the URL (with
`resource`, and `scope` when there is one). `code_from(landed_url)` checks what came back, in
this order, before the code can go anywhere:

1. it arrived at our redirect URI (same scheme, host, port and path);
2. `iss` (RFC 9207 section 2.4, MCP 2026-07-28): present -> must equal the recorded issuer by
   simple string comparison (no normalization at all: a trailing slash is a mismatch);
   absent -> an error when the server advertises `authorization_response_iss_parameter_
   supported`, else fine. A mismatch is a mix-up attack: the response's `error` is not acted on;
3. `state` must equal ours (compared in constant time): a response to another flow (code
   injection, CSRF) is refused;
4. an `error` is the server's refusal: OAuthError with its error and description;
5. a `code` must be there.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import NoReturn
from urllib.parse import parse_qs, urlencode, urlsplit

from mcpkit.auth import pkce
from mcpkit.auth.client.discovery import AuthServer
from mcpkit.auth.client.errors import OAuthError
from mcpkit.auth.client.wire import printable


@dataclass(frozen=True, slots=True)
class AuthorizationRequest:
    """One authorization code flow in progress: what was sent and what to check on return."""

    url: str
    redirect_uri: str
    issuer: str
    iss_required: bool
    endpoint: str
    state: str = field(repr=False)
    verifier: str = field(repr=False)

    @classmethod
    def new(
        cls, server: AuthServer, client_id: str, redirect_uri: str, scope: str | None
    ) -> AuthorizationRequest:
        endpoint = server.authorization_endpoint
        if endpoint is None:
            raise OAuthError(
                "discovery", server.issuer, "the metadata has no authorization_endpoint"
            )
        verifier, state = pkce.new_verifier(), secrets.token_urlsafe(32)
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": pkce.s256_challenge(verifier),
            "code_challenge_method": "S256",
            "state": state,
            "resource": server.resource,
        }
        if scope:
            params["scope"] = scope
        separator = "&" if urlsplit(endpoint).query else "?"
        return cls(
            url=f"{endpoint}{separator}{urlencode(params)}",
            redirect_uri=redirect_uri,
            issuer=server.issuer,
            iss_required=server.iss_parameter_supported,
            endpoint=endpoint,
            state=state,
            verifier=verifier,
        )

    def code_from(self, landed: str) -> str:
        """The authorization code in the redirect `landed` on. Raises OAuthError (step
        "authorization") for anything but a valid response to this very request."""
        if not same_endpoint(landed, self.redirect_uri):
            self._refuse("the browser did not come back to our redirect URI")
        query = {k: v[0] for k, v in parse_qs(urlsplit(landed).query).items()}
        iss = query.get("iss")
        if iss is None and self.iss_required:
            self._refuse(
                "the response has no `iss` although the server advertises it (RFC 9207); "
                "refusing it as a possible mix-up"
            )
        if iss is not None and iss != self.issuer:
            self._refuse(
                f"the response comes from issuer {printable(iss)}, not {self.issuer}: a mix-up "
                "(RFC 9207); refusing it"
            )
        if not hmac.compare_digest(query.get("state", "").encode(), self.state.encode()):
            self._refuse("the response's `state` is not this flow's: refusing it")
        if "error" in query:
            raise OAuthError(
                "authorization",
                self.endpoint,
                "the authorization server refused",
                error=query["error"],
                error_description=query.get("error_description"),
            )
        code = query.get("code")
        if not code:
            self._refuse("the response carries no authorization code")
        return str(code)

    def _refuse(self, problem: str) -> NoReturn:
        raise OAuthError("authorization", self.endpoint, problem)


def same_endpoint(url: str, redirect_uri: str) -> bool:
    """Whether `url` is at `redirect_uri` (scheme, host, port, path; the query aside)."""
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme, a.hostname, a.port, a.path or "/") == (
        b.scheme,
        b.hostname,
        b.port,
        b.path or "/",
    )
