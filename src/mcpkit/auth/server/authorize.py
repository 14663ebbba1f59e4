"""The authorization endpoint: GET asks (and shows the consent page), POST is the user's answer.

A request is checked in the order RFC 6749 section 4.1.2.1 needs: first the client and its
redirect URI -- while either is in doubt nothing is redirected anywhere (an error page is
shown instead: no open redirect) -- then everything else, whose failures go back to the
client's redirect URI as `error`, `error_description`, `state` and `iss` (RFC 9207). PKCE is
required, S256 only (a missing method means plain, refused). On approval a single-use code,
valid `code_ttl` seconds, goes back with `state` and `iss`.

The consent form re-posts the request's parameters, and they are checked again, with the CSRF
token bound to them. With `dev_approve` (an issuer on a loopback host, a connection on a
loopback address) there is no page: the request is approved at once for `dev_subject`.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcpkit.auth.server.asgi import (
    Headers,
    HTTPRequest,
    HTTPResponse,
    OAuthErrorResponse,
    Params,
    redirect,
)
from mcpkit.auth.server.clients import ClientDirectory, OAuthClient
from mcpkit.auth.server.consent import (
    FORM_LIFETIME,
    ConsentView,
    CSRFGuard,
    error_page,
    fields_digest,
    page_headers,
    render_consent,
)
from mcpkit.auth.server.issuing import new_id
from mcpkit.auth.server.limits import Limiter, Rate, RateLimited
from mcpkit.auth.server.options import AuthServerOptions, is_loopback
from mcpkit.auth.server.policy import audience, granted_scopes
from mcpkit.auth.server.redirects import host_of, is_loopback_uri, matches, with_parameters
from mcpkit.auth.server.store import AuthStore, CodeRecord, digest
from mcpkit.auth.server.users import LoginAttempt
from mcpkit.errors import MCPError

REQUEST_FIELDS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
)
_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")
_FAILED_SIGN_INS = "failed sign-ins"


class PageError(MCPError):
    """A failure shown to the user, never redirected (the client or redirect URI is in doubt)."""

    def __init__(
        self, error: str, description: str, status: int = 400, headers: Headers | None = None
    ) -> None:
        super().__init__(description)
        self.response = error_page(error, description, status)
        self.response.headers.extend(headers or [])


@dataclass(frozen=True)
class Authorization:
    """A checked authorization request."""

    client: OAuthClient
    redirect_uri: str
    redirect_uri_given: bool
    state: str | None
    scopes: tuple[str, ...]
    resource: str
    code_challenge: str
    fields: dict[str, str]


class AuthorizeEndpoint:
    def __init__(
        self,
        options: AuthServerOptions,
        store: AuthStore,
        directory: ClientDirectory,
        limiter: Limiter,
    ) -> None:
        self._options = options
        self._store = store
        self._directory = directory
        self._limiter = limiter
        self._csrf: CSRFGuard | None = None
        self._spending = asyncio.Lock()
        self._path = urlsplit(options.endpoint("authorize")).path
        self._origin = _origin(options.issuer)

    async def handle(self, request: HTTPRequest) -> HTTPResponse:
        try:
            if request.method == "POST":
                return await self._answer(request)
            return await self._ask(request)
        except PageError as page:
            return page.response
        except _Redirect as back:
            status = 303 if request.method == "POST" else 302
            return back.response(self._options.issuer, status)

    async def _ask(self, request: HTTPRequest) -> HTTPResponse:
        try:
            params = request.query_params()
        except OAuthErrorResponse as exc:
            raise PageError(exc.error, exc.description) from None
        authorization = await self._check(params)
        if self._options.dev_approve and _local(request):
            return await self._approve(authorization, self._options.dev_subject, 302)
        subject = await self._authenticate(LoginAttempt(request.headers))
        return await self._page(request, authorization, subject)

    async def _answer(self, request: HTTPRequest) -> HTTPResponse:
        try:
            form = request.form()
            fields = {name: form.get(name) for name in REQUEST_FIELDS}
            decision = form.get("decision")
            csrf, username, password = form.get("csrf"), form.get("username"), form.get("password")
        except OAuthErrorResponse as exc:
            raise PageError(exc.error, exc.description) from None
        kept = {name: value for name, value in fields.items() if value is not None}
        authorization = await self._check(Params({k: (v,) for k, v in kept.items()}))
        guard = await self._guard()
        cookie = guard.cookie(request.headers)
        now = self._options.clock()
        if not guard.same_origin(request.headers, self._origin) or not guard.check(
            csrf, cookie, fields_digest(authorization.fields), now
        ):
            raise PageError(
                "invalid_request", "the form expired or did not come from this page", 403
            )
        if decision == "deny":
            await self._spend(csrf)
            return self._refuse(
                authorization, OAuthErrorResponse("access_denied", "the user said no"), 303
            )
        if decision != "approve":
            raise PageError("invalid_request", "no decision in the form")
        subject = await self._sign_in(request, username, password)
        if subject is None:
            message = "Wrong username or password." if username else "Please sign in."
            return await self._page(request, authorization, None, message)
        await self._spend(csrf)
        return await self._approve(authorization, subject, 303)

    async def _spend(self, csrf: str | None) -> None:
        """Marks a consent form as answered: posted again (twice in a row, or replayed), it
        gets no second code. Raises PageError when it was answered already."""
        spent = f"consent-form:{digest(csrf or '')}"
        async with self._spending:  # the check and the mark as one step in this process
            if await self._store.is_revoked(spent):
                raise PageError("invalid_request", "this form was answered already", 403)
            await self._store.revoke(spent, self._options.clock() + FORM_LIFETIME + 60)

    async def _check(self, params: Params) -> Authorization:
        """The request, checked. Raises PageError while the client or redirect URI is in
        doubt, and _Redirect (back to the client) for what is wrong after that."""
        try:
            client_id = params.get("client_id")
            asked_redirect = params.get("redirect_uri")
        except OAuthErrorResponse as exc:
            raise PageError(exc.error, exc.description) from None
        if client_id is None:
            raise PageError("invalid_request", "missing client_id")
        try:
            client = await self._directory.find(client_id)
        except OAuthErrorResponse as exc:
            raise PageError(exc.error, exc.description) from None
        if client is None:
            raise PageError("invalid_client", "unknown client")
        redirect_uri = _redirect_uri(client, asked_redirect)
        try:
            state = params.get("state")
        except OAuthErrorResponse as exc:
            raise _Redirect(exc, redirect_uri, None) from None
        try:
            return self._check_rest(params, client, redirect_uri, asked_redirect, state)
        except OAuthErrorResponse as exc:
            raise _Redirect(exc, redirect_uri, state) from None

    def _check_rest(
        self,
        params: Params,
        client: OAuthClient,
        redirect_uri: str,
        asked_redirect: str | None,
        state: str | None,
    ) -> Authorization:
        response_type = params.require("response_type")
        if response_type != "code":
            raise OAuthErrorResponse(
                "unsupported_response_type", "only response_type=code is supported"
            )
        if "authorization_code" not in client.grant_types:
            raise OAuthErrorResponse(
                "unauthorized_client", "this client may not use authorization codes"
            )
        challenge = params.get("code_challenge")
        if challenge is None:
            raise OAuthErrorResponse(
                "invalid_request", "PKCE is required: send code_challenge (S256)"
            )
        if params.get("code_challenge_method") != "S256":
            raise OAuthErrorResponse("invalid_request", "code_challenge_method must be S256")
        if _CHALLENGE.fullmatch(challenge) is None:
            raise OAuthErrorResponse("invalid_request", "code_challenge is not an S256 challenge")
        scopes = granted_scopes(self._options, client, params.get("scope"), consented=True)
        resource = audience(self._options, params.all("resource"))
        fields = {name: value for name in REQUEST_FIELDS if (value := params.get(name))}
        return Authorization(
            client,
            redirect_uri,
            asked_redirect is not None,
            state,
            scopes,
            resource,
            challenge,
            fields,
        )

    async def _approve(
        self, authorization: Authorization, subject: str, status: int
    ) -> HTTPResponse:
        code = secrets.token_urlsafe(32)
        record = CodeRecord(
            code_hash=digest(code),
            grant_id=new_id(),
            client_id=authorization.client.client_id,
            subject=subject,
            scopes=authorization.scopes,
            resource=authorization.resource,
            redirect_uri=authorization.redirect_uri,
            redirect_uri_given=authorization.redirect_uri_given,
            code_challenge=authorization.code_challenge,
            expires_at=self._options.clock() + self._options.code_ttl,
        )
        await self._store.save_code(record)
        answer = {"code": code, "state": authorization.state, "iss": self._options.issuer}
        return redirect(with_parameters(authorization.redirect_uri, answer), status)

    def _refuse(
        self, authorization: Authorization, error: OAuthErrorResponse, status: int
    ) -> HTTPResponse:
        return _Redirect(error, authorization.redirect_uri, authorization.state).response(
            self._options.issuer, status
        )

    async def _sign_in(
        self, request: HTTPRequest, username: str | None, password: str | None
    ) -> str | None:
        """Who signs in with the form. Raises PageError (429) after too many failed
        attempts for this username or from this address: then even the right password
        waits, or guessing would go on until it is found."""
        attempt = LoginAttempt(request.headers, username, password)
        if username is None:
            return await self._authenticate(attempt)
        limits, limiter = self._options.rate_limits, self._limiter
        keys: tuple[tuple[str | None, Rate | None], ...] = (
            (request.client_host, limits.failed_sign_ins_per_address),
            (username, limits.failed_sign_ins_per_user),
        )
        try:
            for key, rate in keys:
                limiter.check(_FAILED_SIGN_INS, key, rate)
        except RateLimited as limited:
            raise PageError(limited.error, limited.description, 429, limited.headers) from None
        subject = await self._authenticate(attempt)
        if subject is None:
            for key, rate in keys:
                limiter.spend(_FAILED_SIGN_INS, key, rate)
        return subject

    async def _authenticate(self, attempt: LoginAttempt) -> str | None:
        authenticate = self._options.authenticate
        return None if authenticate is None else await authenticate(attempt)

    async def _page(
        self,
        request: HTTPRequest,
        authorization: Authorization,
        subject: str | None,
        message: str | None = None,
    ) -> HTTPResponse:
        guard = await self._guard()
        cookie = guard.cookie(request.headers) or guard.new_cookie()
        now = self._options.clock()
        client = authorization.client
        view = ConsentView(
            client_id=client.client_id,
            client_name=client.name,
            self_described=client.kind != "configured",
            redirect_host=host_of(authorization.redirect_uri),
            local_redirect=is_loopback_uri(authorization.redirect_uri),
            scopes=authorization.scopes,
            resource=authorization.resource,
            fields=authorization.fields,
            csrf=guard.token(cookie, fields_digest(authorization.fields), now),
            action=self._path,
            signed_in_as=subject,
            message=message,
        )
        headers = [*page_headers(_origin(authorization.redirect_uri)), guard.set_cookie(cookie)]
        return HTTPResponse(200, render_consent(view), headers)

    async def _guard(self) -> CSRFGuard:
        if self._csrf is None:
            secret = await self._store.secret("csrf")
            self._csrf = CSRFGuard(secret, self._options.issuer.startswith("https://"))
        return self._csrf


class _Redirect(MCPError):
    """A failure sent back to the client's (checked) redirect URI."""

    def __init__(self, error: OAuthErrorResponse, redirect_uri: str, state: str | None) -> None:
        super().__init__(error.description)
        self.error = error
        self.redirect_uri = redirect_uri
        self.state = state

    def response(self, issuer: str, status: int = 302) -> HTTPResponse:
        answer = {
            "error": self.error.error,
            "error_description": self.error.description,
            "state": self.state,
            "iss": issuer,
        }
        return redirect(with_parameters(self.redirect_uri, answer), status)


def _redirect_uri(client: OAuthClient, asked: str | None) -> str:
    if asked is None:
        if len(client.redirect_uris) == 1:
            return client.redirect_uris[0]
        raise PageError("invalid_request", "redirect_uri is required for this client")
    if not any(matches(asked, registered) for registered in client.redirect_uris):
        raise PageError("invalid_request", "redirect_uri is not registered for this client")
    return asked


def _local(request: HTTPRequest) -> bool:
    return bool(request.server_host and is_loopback(request.server_host)) and bool(
        request.client_host and is_loopback(request.client_host)
    )


def _origin(uri: str) -> str:
    parts = urlsplit(uri)
    return f"{parts.scheme}://{parts.netloc}"
