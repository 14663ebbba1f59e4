"""Attacks from the MCP security considerations and the OAuth 2.1 / security BCP, each
against the real server over HTTP, each answered with the RFC's status and error, and each
failing if its defence were removed. Nothing secret appears in any answer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from mcpkit.auth.server import AuthorizationServer, AuthServerOptions, ClientConfig, MemoryAuthStore

from .support import (
    CALLBACK,
    MACHINE_SECRET,
    USERS,
    Flow,
    Running,
    code_for,
    introspect,
    options,
    redirected_to,
    refresh,
    register,
    running,
    tokens_for,
)

ROOT = Path(__file__).resolve().parents[3]


def assert_error(response: httpx.Response, status: int, error: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    body: dict[str, Any] = response.json()
    assert body["error"] == error, body
    assert isinstance(body["error_description"], str)
    assert response.headers["cache-control"] == "no-store"
    return body


def assert_error_page(response: httpx.Response, status: int = 400) -> None:
    """An error shown to the user, and nobody redirected anywhere."""
    assert response.status_code == status, (response.status_code, response.text)
    assert "location" not in response.headers
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["x-frame-options"] == "DENY"


def redirected_error(response: httpx.Response, error: str, run: Running) -> dict[str, str]:
    where, params = redirected_to(response)
    assert where == CALLBACK
    assert params["error"] == error, params
    assert params["iss"] == run.url and params["state"] == "xyz-state"
    assert "code" not in params
    return params


# -- PKCE downgrade ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"code_challenge_method": "plain"},
        {"code_challenge_method": None},  # absent means plain
        {"code_challenge": None, "code_challenge_method": None},
        {"code_challenge": "too-short"},
    ],
)
async def test_pkce_is_required_and_only_s256(changes: dict[str, str | None]) -> None:
    async with running() as run:
        flow = Flow()
        query = flow.query(**changes)
        if changes.get("code_challenge_method", "S256") == "plain":
            query["code_challenge"] = flow.verifier  # what a plain client would send
        response = await run.http.get("/authorize", params=query)
        redirected_error(response, "invalid_request", run)


async def test_the_code_verifier_must_match() -> None:
    async with running() as run:
        flow = Flow()
        code = await code_for(run, flow)
        missing = await run.http.post("/token", data=flow.token_form(code, code_verifier=None))
        assert_error(missing, 400, "invalid_request")
        wrong = flow.token_form(code, code_verifier="A" * 64)
        assert_error(await run.http.post("/token", data=wrong), 400, "invalid_grant")
        # The failed attempt spent the code: guessing verifiers gets one try per code.
        right = await run.http.post("/token", data=flow.token_form(code))
        assert_error(right, 400, "invalid_grant")


# -- codes ---------------------------------------------------------------------------------


async def test_a_replayed_code_is_refused_and_revokes_what_it_issued() -> None:
    async with running() as run:
        flow = Flow()
        code = await code_for(run, flow)
        first = await run.http.post("/token", data=flow.token_form(code))
        tokens = first.json()
        replay = await run.http.post("/token", data=flow.token_form(code))
        body = assert_error(replay, 400, "invalid_grant")
        assert code not in json.dumps(body)
        assert (await introspect(run, tokens["access_token"]))["active"] is False
        assert_error(await refresh(run, tokens["refresh_token"]), 400, "invalid_grant")


async def test_a_code_expires() -> None:
    now = [1_000_000.0]
    async with running(clock=lambda: now[0]) as run:
        flow = Flow()
        code = await code_for(run, flow)
        now[0] += 121
        assert_error(
            await run.http.post("/token", data=flow.token_form(code)), 400, "invalid_grant"
        )


async def test_a_code_only_works_for_its_own_client() -> None:
    async with running() as run:
        other = (await register(run))["client_id"]
        flow = Flow()
        code = await code_for(run, flow)
        stolen = flow.token_form(code, client_id=other)
        assert_error(await run.http.post("/token", data=stolen), 400, "invalid_grant")


# -- redirect URIs and open redirects --------------------------------------------------------


async def test_an_unregistered_redirect_uri_gets_an_error_page_not_a_redirect() -> None:
    async with running() as run:
        for redirect in [
            "https://evil.example/callback",
            "http://127.0.0.1:5173/other",  # loopback: only the port may vary
            "http://127.0.0.1:5173/callback?x=1",
            "http://localhost:5173/callback",  # another host than registered
        ]:
            response = await run.http.get("/authorize", params=Flow(redirect_uri=redirect).query())
            assert_error_page(response)


async def test_loopback_redirect_uris_may_change_port() -> None:
    async with running() as run:
        for port in (5173, 40123):
            flow = Flow(redirect_uri=f"http://127.0.0.1:{port}/callback")
            response = await run.http.get("/authorize", params=flow.query())
            where, params = redirected_to(response)
            assert where == flow.redirect_uri and "code" in params


async def test_an_unknown_client_never_redirects() -> None:
    async with running() as run:
        query = Flow(client_id="nobody", redirect_uri="https://evil.example/cb").query()
        assert_error_page(await run.http.get("/authorize", params=query))
        missing = Flow().query(client_id=None)
        assert_error_page(await run.http.get("/authorize", params=missing))
        twice = f"/authorize?client_id=app&client_id=app&redirect_uri={CALLBACK}"
        assert_error_page(await run.http.get(twice))


async def test_errors_after_the_client_is_known_go_back_to_it_with_iss_and_state() -> None:
    async with running() as run:
        flow = Flow()
        cases = [
            ({"response_type": "token"}, "unsupported_response_type"),
            ({"response_type": None}, "invalid_request"),
            ({"scope": "admin"}, "invalid_scope"),
            ({"resource": "https://mcp.example.com/mcp#frag"}, "invalid_target"),
            ({"resource": "mcp.example.com"}, "invalid_target"),
        ]
        for changes, error in cases:
            response = await run.http.get("/authorize", params=flow.query(**changes))
            redirected_error(response, error, run)


async def test_the_token_request_must_repeat_the_redirect_uri() -> None:
    async with running() as run:
        flow = Flow()
        code = await code_for(run, flow)
        other = flow.token_form(code, redirect_uri="http://127.0.0.1:5173/elsewhere")
        assert_error(await run.http.post("/token", data=other), 400, "invalid_grant")
        code = await code_for(run, flow)
        omitted = flow.token_form(code, redirect_uri=None)
        assert_error(await run.http.post("/token", data=omitted), 400, "invalid_grant")


async def test_resources_outside_the_configured_set_are_refused() -> None:
    async with running(resources=("https://mcp.example.com/mcp",)) as run:
        flow = Flow(resource="https://other.example.com/mcp")
        redirected_error(
            await run.http.get("/authorize", params=flow.query()), "invalid_target", run
        )
        allowed = Flow(resource="HTTPS://MCP.example.com/mcp/")  # the same, canonically
        code = await code_for(run, allowed)
        switched = allowed.token_form(code, resource="https://other.example.com/mcp")
        assert_error(await run.http.post("/token", data=switched), 400, "invalid_target")


# -- client authentication -----------------------------------------------------------------


async def test_wrong_or_mismatched_client_credentials_are_refused() -> None:
    async with running() as run:
        form = {"grant_type": "client_credentials"}
        guess = "not-the-secret-but-a-guess-of-similar-length"
        wrong = await run.http.post("/token", data=form, auth=("machine", guess))
        body = assert_error(wrong, 401, "invalid_client")
        assert wrong.headers["www-authenticate"].startswith("Basic")
        assert guess not in wrong.text and MACHINE_SECRET not in wrong.text
        assert body["error_description"] == "client authentication failed"
        # Registered for client_secret_basic: the secret in the body is another method.
        post = {**form, "client_id": "machine", "client_secret": MACHINE_SECRET}
        assert_error(await run.http.post("/token", data=post), 401, "invalid_client")
        both = await run.http.post(
            "/token",
            data={**form, "client_secret": MACHINE_SECRET},
            auth=("machine", MACHINE_SECRET),
        )
        assert_error(both, 400, "invalid_request")
        unknown = await run.http.post("/token", data=form, auth=("ghost", "x"))
        assert_error(unknown, 401, "invalid_client")
        public = await run.http.post("/token", data={**form, "client_id": "app"})
        assert_error(public, 400, "unauthorized_client")


async def test_introspection_needs_an_authenticated_resource_server() -> None:
    async with running() as run:
        tokens = await tokens_for(run, Flow())
        anonymous = await run.http.post("/introspect", data={"token": tokens["access_token"]})
        assert_error(anonymous, 401, "invalid_client")
        # A client that is not a resource server learns nothing.
        response = await run.http.post(
            "/introspect",
            data={"token": tokens["access_token"]},
            auth=("machine", MACHINE_SECRET),
        )
        assert response.json() == {"active": False}


# -- forged and tampered tokens ----------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _segments(token: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    header, payload, signature = token.split(".")
    pad = lambda s: s + "=" * (-len(s) % 4)  # noqa: E731
    return (
        json.loads(base64.urlsafe_b64decode(pad(header))),
        json.loads(base64.urlsafe_b64decode(pad(payload))),
        signature,
    )


def _forge(header: dict[str, Any], claims: dict[str, Any], signature: str) -> str:
    head = _b64(json.dumps(header).encode())
    body = _b64(json.dumps(claims).encode())
    return f"{head}.{body}.{signature}"


async def test_alg_none_and_tampered_tokens_are_never_active() -> None:
    async with running() as run:
        token = (await tokens_for(run, Flow()))["access_token"]
        assert (await introspect(run, token))["active"] is True
        header, claims, signature = _segments(token)
        jwks = (await run.http.get("/jwks")).json()
        public_key = jwt.PyJWK(jwks["keys"][0]).key
        public_pem = public_key.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
        elevated = {**claims, "scope": "mcp files:write", "sub": "admin"}
        none_header = {**header, "alg": "none"}
        hs_header = {**header, "alg": "HS256"}
        hs_input = f"{_b64(json.dumps(hs_header).encode())}.{_b64(json.dumps(claims).encode())}"
        hs_signature = _b64(hmac.new(public_pem, hs_input.encode(), hashlib.sha256).digest())
        other_key = jwt.encode(
            claims, _rsa_pem(), algorithm="RS256", headers={"kid": header["kid"], "typ": "at+jwt"}
        )
        forged = [
            _forge(none_header, elevated, ""),  # alg: none
            _forge(header, elevated, signature),  # claims changed under the old signature
            f"{hs_input}.{hs_signature}",  # HS256 keyed with the public key
            other_key,  # signed by someone else's key under our kid
            _forge({**header, "typ": "JWT"}, claims, signature),  # not an access token
            token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"),  # bad signature
        ]
        for bad in forged:
            assert (await introspect(run, bad))["active"] is False, bad
            revoke = await run.http.post("/revoke", data={"token": bad, "client_id": "app"})
            assert revoke.status_code == 200  # RFC 7009: no oracle
        assert (await introspect(run, token))["active"] is True
        # Even our own key's signature makes no access token of a JWT of another type.
        private_pem = (await run.server.store.keys())[0].private_pem
        plain_jwt = jwt.encode(
            claims, private_pem, algorithm="RS256", headers={"kid": header["kid"]}
        )
        assert (await introspect(run, plain_jwt))["active"] is False


def _rsa_pem() -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


async def test_a_token_from_another_issuer_is_not_active() -> None:
    async with running() as first, running() as second:
        token = (await tokens_for(first, Flow()))["access_token"]
        assert (await introspect(second, token))["active"] is False


# -- refresh token reuse -------------------------------------------------------------------


async def test_reusing_a_rotated_refresh_token_revokes_the_whole_family() -> None:
    async with running() as run:
        tokens = await tokens_for(run, Flow())
        rotated = (await refresh(run, tokens["refresh_token"])).json()
        latest = (await refresh(run, rotated["refresh_token"])).json()
        assert (await introspect(run, latest["access_token"]))["active"] is True
        # An attacker replays the first (rotated) token: refused, and the family dies.
        reused = await refresh(run, tokens["refresh_token"])
        body = assert_error(reused, 400, "invalid_grant")
        assert tokens["refresh_token"] not in json.dumps(body)
        assert_error(await refresh(run, latest["refresh_token"]), 400, "invalid_grant")
        for access in (tokens, rotated, latest):
            assert (await introspect(run, access["access_token"]))["active"] is False


async def test_a_refresh_token_works_only_for_its_client() -> None:
    async with running() as run:
        tokens = await tokens_for(run, Flow())
        other = (await register(run))["client_id"]
        # Another client cannot revoke it (and is not told so) ...
        form = {"token": tokens["refresh_token"], "client_id": other}
        assert (await run.http.post("/revoke", data=form)).status_code == 200
        rotated = await refresh(run, tokens["refresh_token"])
        assert rotated.status_code == 200
        # ... nor use it: and a token in the wrong hands revokes its grant.
        stolen = rotated.json()["refresh_token"]
        assert_error(await refresh(run, stolen, other), 400, "invalid_grant")
        assert_error(await refresh(run, stolen), 400, "invalid_grant")


async def test_refresh_cannot_widen_the_scope() -> None:
    async with running() as run:
        tokens = await tokens_for(run, Flow(scope="mcp"))
        widened = await refresh(run, tokens["refresh_token"], scope="mcp files:write")
        assert_error(widened, 400, "invalid_scope")


# -- the consent form ----------------------------------------------------------------------


def _hidden_fields(page: str) -> dict[str, str]:
    return dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', page))


async def test_the_consent_form_refuses_cross_site_posts() -> None:
    async with running(dev_approve=False) as run:
        flow = Flow()
        page = await run.http.get("/authorize", params=flow.query())
        fields = _hidden_fields(page.text)
        login = {"username": "alice", "password": "wonderland", "decision": "approve"}
        # The attacker's page posts without the victim's cookie (SameSite keeps it home) ...
        async with httpx.AsyncClient(base_url=run.url) as attacker:
            assert_error_page(await attacker.post("/authorize", data={**fields, **login}), 403)
            # ... or with its own cookie and the token it got for itself.
            own = await attacker.get("/authorize", params=flow.query())
            mixed = {**_hidden_fields(own.text), "csrf": fields["csrf"], **login}
            assert_error_page(await attacker.post("/authorize", data=mixed), 403)
        # A token is bound to the request it was made for: not another redirect or scope.
        moved = {**fields, **login, "scope": "mcp files:write"}
        assert_error_page(await run.http.post("/authorize", data=moved), 403)
        forged = {**fields, **login, "csrf": "123." + "A" * 43}
        assert_error_page(await run.http.post("/authorize", data=forged), 403)
        ok = await run.http.post("/authorize", data={**fields, **login})
        assert ok.status_code == 303


async def test_the_consent_token_expires() -> None:
    now = [1_000_000.0]
    async with running(dev_approve=False, clock=lambda: now[0]) as run:
        page = await run.http.get("/authorize", params=Flow().query())
        now[0] += 601
        login = {"username": "alice", "password": "wonderland", "decision": "approve"}
        response = await run.http.post("/authorize", data={**_hidden_fields(page.text), **login})
        assert_error_page(response, 403)


async def test_dev_approve_needs_a_loopback_connection() -> None:
    """Behind a proxy or on a public interface the page is shown, not skipped."""
    server = AuthorizationServer(options(9, store=MemoryAuthStore()))
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    query = "&".join(f"{k}={v}" for k, v in Flow(resource=None).query().items())
    for server_address, status in [(("127.0.0.1", 9), 302), (("10.1.2.3", 443), 200)]:
        sent.clear()
        scope = {
            "type": "http",
            "method": "GET",
            "path": "/authorize",
            "query_string": query.encode(),
            "headers": [],
            "client": ("127.0.0.1", 50000),
            "server": server_address,
        }
        await server(scope, receive, send)
        assert sent[0]["status"] == status


def test_dev_approve_is_refused_off_loopback() -> None:
    with pytest.raises(ValueError, match="loopback"):
        AuthServerOptions(issuer="https://auth.example.com", dev_approve=True).check()
    with pytest.raises(ValueError, match="https"):
        AuthServerOptions(issuer="http://auth.example.com", dev_approve=True).check()
    with pytest.raises(ValueError, match="user information"):
        bad = ClientConfig("x", redirect_uris=("https://user@app.example/cb",))
        AuthServerOptions(issuer="https://auth.example.com", clients=(bad,), dev_approve=False,
                          authenticate=USERS).check()  # fmt: skip
    with pytest.raises(ValueError, match="default_resource"):
        AuthServerOptions(issuer="https://a.example", authenticate=USERS,
                          resources=("https://mcp.example/mcp",),
                          default_resource="https://other.example/mcp").check()  # fmt: skip
    runner = [sys.executable, str(ROOT / "examples" / "authorization_server.py")]
    done = subprocess.run(
        [*runner, "--host", "0.0.0.0", "--dev-approve", "--memory"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2 and "loopback" in done.stderr


# -- dynamic registration ------------------------------------------------------------------


@pytest.mark.parametrize(
    "redirect",
    [
        "http://evil.example/callback",
        "https://*.example.com/callback",
        "https://app.example.com/*",
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "https://app.example.com/callback#fragment",
        "https://user:pass@app.example.com/callback",
        "/relative/callback",
        "com.example.app:/callback",
        "https://app.example.com/call back",
        "https://app;script-src.example.com/callback",
        "https://app.example.com/caf\u00e9",
        "",
    ],
)
async def test_registration_refuses_unsafe_redirect_uris(redirect: str) -> None:
    async with running() as run:
        response = await run.http.post(
            "/register", json={"redirect_uris": [CALLBACK, redirect], "client_name": "x"}
        )
        assert_error(response, 400, "invalid_redirect_uri")


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"grant_types": ["client_credentials"]}, "invalid_client_metadata"),
        ({"grant_types": ["password"]}, "invalid_client_metadata"),
        ({"token_endpoint_auth_method": "client_secret_jwt"}, "invalid_client_metadata"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
        ({"response_types": ["token"]}, "invalid_client_metadata"),
        ({"scope": "admin"}, "invalid_client_metadata"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": "https://app.example.com/cb"}, "invalid_redirect_uri"),
    ],
)
async def test_registration_refuses_bad_metadata(metadata: dict[str, Any], error: str) -> None:
    async with running() as run:
        document = {"redirect_uris": [CALLBACK], **metadata}
        assert_error(await run.http.post("/register", json=document), 400, error)


async def test_registration_can_require_an_initial_access_token() -> None:
    async with running(registration_token="let-me-register-0123456789") as run:
        document = {"redirect_uris": [CALLBACK]}
        refused = await run.http.post("/register", json=document)
        assert_error(refused, 401, "invalid_token")
        wrong = await run.http.post(
            "/register", json=document, headers={"authorization": "Bearer guess"}
        )
        assert_error(wrong, 401, "invalid_token")
        ok = await run.http.post(
            "/register",
            json=document,
            headers={"authorization": "Bearer let-me-register-0123456789"},
        )
        assert ok.status_code == 201


async def test_registration_can_be_closed() -> None:
    async with running(registration=False) as run:
        assert (await run.http.post("/register", json={})).status_code == 404
        metadata = (await run.http.get("/.well-known/oauth-authorization-server")).json()
        assert "registration_endpoint" not in metadata


# -- hygiene -------------------------------------------------------------------------------


async def test_bodies_over_the_limit_are_refused() -> None:
    async with running(max_body=4096) as run:
        form = {"grant_type": "client_credentials", "padding": "x" * 10_000}
        response = await run.http.post("/token", data=form, auth=("machine", MACHINE_SECRET))
        assert_error(response, 413, "invalid_request")
        big = await run.http.post("/register", json={"redirect_uris": [CALLBACK] * 1000})
        assert_error(big, 413, "invalid_request")


async def test_malformed_requests_get_rfc6749_errors() -> None:
    async with running() as run:
        assert_error(
            await run.http.post("/token", json={"grant_type": "x"}), 400, "invalid_request"
        )
        twice = "grant_type=client_credentials&grant_type=client_credentials"
        repeated = await run.http.post(
            "/token",
            content=twice,
            headers={"content-type": "application/x-www-form-urlencoded"},
            auth=("machine", MACHINE_SECRET),
        )
        assert_error(repeated, 400, "invalid_request")
        unknown = await run.http.post(
            "/token", data={"grant_type": "password"}, auth=("machine", MACHINE_SECRET)
        )
        assert_error(unknown, 400, "unsupported_grant_type")
        assert_error(await run.http.get("/token"), 405, "invalid_request")
        assert (await run.http.get("/elsewhere")).status_code == 404
