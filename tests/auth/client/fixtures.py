"""Real peers for the OAuth client tests: a small authorization server and a protected MCP
server, both plain ASGI apps served by uvicorn on 127.0.0.1 (`tests.http.servers.serving`).

`AuthServer` approves at once (the headless approval follows its redirect) and can be told to
misbehave the way an attacker or a broken server would: a wrong `iss`, another `state`, a code
from another flow, a metadata document naming another issuer, revoked refresh tokens.
`Protected` wraps an MCP app: it serves Protected Resource Metadata and demands a bearer token
the authorization server issued (401 with a challenge; 403 `insufficient_scope` for a method
that needs a scope the token lacks).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

import orjson

JSONObject = dict[str, Any]


@dataclass
class Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    resource: str
    scope: str


@dataclass
class AuthServer:
    """An authorization server that approves every request at once."""

    base: str = ""  # set once served: http://127.0.0.1:PORT
    expires_in: int = 3600
    issue_refresh: bool = True
    iss_mode: str = "correct"  # "correct", "wrong", "missing", "slash"
    advertise_iss: bool = True
    metadata_issuer: str | None = None  # serve this issuer instead of our own
    state_mode: str = "echo"  # "echo" or "other"
    inject_code: str | None = None  # redirect with this code instead of a fresh one
    scopes_supported: list[str] | None = None
    withheld: set[str] = field(default_factory=set)  # scopes never granted
    pkce_methods: list[str] | None = field(default_factory=lambda: ["S256"])
    grants: dict[str, Grant] = field(default_factory=dict)
    tokens: dict[str, JSONObject] = field(default_factory=dict)  # access token -> info
    refresh: dict[str, JSONObject] = field(default_factory=dict)
    clients: dict[str, JSONObject] = field(default_factory=dict)
    log: list[tuple[str, JSONObject]] = field(default_factory=list)

    def revoke_refresh_tokens(self) -> None:
        self.refresh.clear()

    def expire_access_tokens(self) -> None:
        for info in self.tokens.values():
            info["expires_at"] = 0

    def count(self, what: str) -> int:
        return sum(1 for name, _ in self.log if name == what)

    def metadata(self) -> JSONObject:
        document: JSONObject = {
            "issuer": self.metadata_issuer or self.base,
            "authorization_endpoint": f"{self.base}/authorize",
            "token_endpoint": f"{self.base}/token",
            "registration_endpoint": f"{self.base}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
        }
        if self.pkce_methods is not None:
            document["code_challenge_methods_supported"] = self.pkce_methods
        if self.advertise_iss:
            document["authorization_response_iss_parameter_supported"] = True
        if self.scopes_supported is not None:
            document["scopes_supported"] = self.scopes_supported
        return document

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        body = await _body(receive)
        if path == "/.well-known/oauth-authorization-server" and method == "GET":
            await _json(send, 200, self.metadata())
        elif path == "/authorize" and method == "GET":
            await self._authorize(
                send, {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
            )
        elif path == "/token" and method == "POST":
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            status, answer = self._token(form, _headers(scope))
            await _json(send, status, answer)
        elif path == "/register" and method == "POST":
            await _json(send, 201, self._register(orjson.loads(body)))
        else:
            await _json(send, 404, {"error": "not_found"})

    async def _authorize(self, send: Any, query: dict[str, str]) -> None:
        self.log.append(("authorize", query))
        code = secrets.token_urlsafe(16)
        self.grants[code] = Grant(
            query["client_id"],
            query["redirect_uri"],
            query.get("code_challenge", ""),
            query.get("resource", ""),
            query.get("scope", ""),
        )
        params = {"code": self.inject_code or code}
        params["state"] = query.get("state", "") if self.state_mode == "echo" else "forged"
        iss = {"correct": self.base, "wrong": "https://evil.example", "slash": self.base + "/"}
        if self.iss_mode in iss:
            params["iss"] = iss[self.iss_mode]
        location = f"{query['redirect_uri']}?{urlencode(params)}"
        await send(
            {
                "type": "http.response.start",
                "status": 302,
                "headers": [(b"location", location.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    def _token(self, form: dict[str, str], headers: dict[str, str]) -> tuple[int, JSONObject]:
        self.log.append(("token", {**form, "basic": "authorization" in headers}))
        kind = form.get("grant_type")
        if kind == "authorization_code":
            grant = self.grants.pop(form.get("code", ""), None)
            if grant is None or grant.redirect_uri != form.get("redirect_uri"):
                return 400, {"error": "invalid_grant", "error_description": "unknown code"}
            if _s256(form.get("code_verifier", "")) != grant.challenge:
                return 400, {"error": "invalid_grant", "error_description": "PKCE failed"}
            return 200, self._issue(grant.scope, grant.resource)
        if kind == "refresh_token":
            old = self.refresh.pop(form.get("refresh_token", ""), None)
            if old is None:
                return 400, {"error": "invalid_grant", "error_description": "refresh token revoked"}
            return 200, self._issue(old["scope"], old["resource"])
        if kind == "client_credentials":
            return 200, self._issue(form.get("scope", ""), form.get("resource", ""), refresh=False)
        return 400, {"error": "unsupported_grant_type"}

    def _issue(self, scope: str, resource: str, refresh: bool = True) -> JSONObject:
        scope = " ".join(s for s in scope.split() if s not in self.withheld)
        access = "at-" + secrets.token_urlsafe(16)
        self.tokens[access] = {
            "scope": scope,
            "resource": resource,
            "expires_at": time.time() + self.expires_in,
        }
        answer: JSONObject = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "scope": scope,
        }
        if refresh and self.issue_refresh:
            token = "rt-" + secrets.token_urlsafe(16)
            self.refresh[token] = {"scope": scope, "resource": resource}
            answer["refresh_token"] = token
        return answer

    def _register(self, body: JSONObject) -> JSONObject:
        self.log.append(("register", body))
        client_id = "client-" + secrets.token_urlsafe(6)
        self.clients[client_id] = body
        return {"client_id": client_id, **body, "token_endpoint_auth_method": "none"}

    def valid(self, token: str, resource: str) -> JSONObject | None:
        info = self.tokens.get(token)
        if info is None or info["expires_at"] < time.time() or info["resource"] != resource:
            return None
        return info


class Protected:
    """An MCP app behind bearer tokens from `auth`: PRM at the well-known URIs, 401/403."""

    def __init__(
        self,
        app: Any,
        auth: AuthServer,
        *,
        path: str = "/mcp",
        resource: str | None = None,
        scope: str = "mcp",
        method_scopes: dict[str, str] | None = None,
    ) -> None:
        self.app, self.auth, self.path = app, auth, path
        self.base = ""  # set once served
        self.resource_override = resource
        self.scope = scope
        self.method_scopes = method_scopes or {}
        self.statuses: list[int] = []
        self.methods: list[str | None] = []  # the JSON-RPC method of each request, as received

    @property
    def resource(self) -> str:
        return self.resource_override or self.base + self.path

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"].startswith("/.well-known/oauth-protected-resource"):
            document = {
                "resource": self.resource,
                "authorization_servers": [self.auth.base],
                "scopes_supported": [self.scope],
            }
            await _json(send, 200, document)
            return
        body = await _body(receive)
        self.methods.append(_method(body))
        metadata_url = f"{self.base}/.well-known/oauth-protected-resource{self.path}"
        token = _headers(scope).get("authorization", "")
        info = (
            self.auth.valid(token[7:], self.base + self.path)
            if token.startswith("Bearer ")
            else None
        )
        if info is None:
            challenge = f'Bearer resource_metadata="{metadata_url}", scope="{self.scope}"'
            self.statuses.append(401)
            await _json(send, 401, {"error": "invalid_token"}, challenge)
            return
        needed = self._needed(body)
        if needed and needed not in info["scope"].split():
            challenge = (
                f'Bearer error="insufficient_scope", scope="{needed}", '
                f'resource_metadata="{metadata_url}"'
            )
            self.statuses.append(403)
            await _json(send, 403, {"error": "insufficient_scope"}, challenge)
            return
        self.statuses.append(200)
        await self.app(scope, _replay(body, receive), send)

    def _needed(self, body: bytes) -> str | None:
        try:
            message = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            return None
        if not isinstance(message, dict):
            return None
        name = (
            message.get("params", {}).get("name") if message.get("method") == "tools/call" else None
        )
        return self.method_scopes.get(f"{message.get('method')}:{name}")


def _method(body: bytes) -> str | None:
    try:
        message = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None
    return message.get("method") if isinstance(message, dict) else None


def _s256(verifier: str) -> str:
    return (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )


def _headers(scope: Any) -> dict[str, str]:
    return {k.decode().lower(): v.decode() for k, v in scope["headers"]}


async def _body(receive: Any) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        body.extend(message.get("body", b""))
        if not message.get("more_body"):
            return bytes(body)


def _replay(body: bytes, receive: Any) -> Any:
    """A receive that gives the app the body already read, then the client's own events."""
    sent = False

    async def replaying() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replaying


async def _json(send: Any, status: int, body: JSONObject, challenge: str | None = None) -> None:
    headers = [(b"content-type", b"application/json")]
    if challenge:
        headers.append((b"www-authenticate", challenge.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": orjson.dumps(body)})
