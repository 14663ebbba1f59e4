"""The whole authorization server, driven over HTTP the way clients and resource servers use
it: discovery, dynamic registration, authorization (approved at once, and through the real
consent form), code exchange, refresh with rotation, client_credentials, revocation,
introspection, and the access token verified with PyJWT against the JWKS fetched over HTTP."""

from __future__ import annotations

import re
from typing import Any

import httpx
import jwt

from mcpkit.auth.server import AuthorizationServer
from tests.http.servers import unused_port

from .support import (
    CALLBACK,
    MACHINE_SECRET,
    Flow,
    Running,
    introspect,
    options,
    redirected_to,
    refresh,
    register,
    running,
    serving,
    tokens_for,
)

RESOURCE = "http://127.0.0.1:8000/mcp"


async def verified_claims(run: Running, token: str, audience: str) -> dict[str, Any]:
    """The token's claims, verified as a resource server in another process would: JWKS
    fetched over HTTP from the URL in the metadata, key chosen by kid."""
    async with httpx.AsyncClient() as outsider:
        metadata = (await outsider.get(f"{run.url}/.well-known/oauth-authorization-server")).json()
        keys = jwt.PyJWKSet.from_dict((await outsider.get(metadata["jwks_uri"])).json())
    header = jwt.get_unverified_header(token)
    key = next(k for k in keys.keys if k.key_id == header["kid"])
    claims: dict[str, Any] = jwt.decode(
        token, key.key, algorithms=["RS256"], audience=audience, issuer=metadata["issuer"]
    )
    assert header["typ"] == "at+jwt"
    return claims


async def test_metadata_names_every_endpoint_under_the_issuer() -> None:
    async with running() as run:
        response = await run.http.get("/.well-known/oauth-authorization-server")
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        document = response.json()
    issuer = run.url
    assert document["issuer"] == issuer
    # An issuer at the root serves the 2025-03-26 default endpoints.
    for name, path in [
        ("authorization_endpoint", "/authorize"),
        ("token_endpoint", "/token"),
        ("registration_endpoint", "/register"),
        ("revocation_endpoint", "/revoke"),
        ("introspection_endpoint", "/introspect"),
        ("jwks_uri", "/jwks"),
    ]:
        assert document[name] == issuer + path
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["authorization_response_iss_parameter_supported"] is True
    assert document["client_id_metadata_document_supported"] is True
    assert document["response_types_supported"] == ["code"]
    assert set(document["grant_types_supported"]) == {
        "authorization_code",
        "refresh_token",
        "client_credentials",
    }
    assert set(document["token_endpoint_auth_methods_supported"]) == {
        "client_secret_basic",
        "client_secret_post",
        "none",
        "private_key_jwt",
    }
    assert "none" not in document["introspection_endpoint_auth_methods_supported"]
    assert document["scopes_supported"] == ["mcp", "files:read", "files:write"]


async def test_an_issuer_with_a_path_serves_metadata_by_path_insertion() -> None:
    port = unused_port()
    issuer = f"http://127.0.0.1:{port}/tenant/auth"
    server = AuthorizationServer(options(port, issuer=issuer, openid_configuration=True))
    assert set(server.paths) == {
        "/tenant/auth/authorize",
        "/tenant/auth/token",
        "/tenant/auth/register",
        "/tenant/auth/revoke",
        "/tenant/auth/introspect",
        "/tenant/auth/jwks",
        "/.well-known/oauth-authorization-server/tenant/auth",
        "/.well-known/openid-configuration/tenant/auth",
        "/tenant/auth/.well-known/openid-configuration",
    }
    async with serving(server, port) as url, httpx.AsyncClient(base_url=url) as http:
        for path in [p for p in server.paths if "well-known" in p]:
            document = (await http.get(path)).json()
            assert document["issuer"] == issuer
            assert document["token_endpoint"] == f"{issuer}/token"
        assert (await http.get("/.well-known/oauth-authorization-server")).status_code == 404
        assert (await http.get("/authorize")).status_code == 404
        flow = Flow()
        response = await http.get("/tenant/auth/authorize", params=flow.query())
        _, params = redirected_to(response)
        assert params["iss"] == issuer


async def test_register_authorize_exchange_refresh_introspect_revoke() -> None:
    async with running() as run:
        registered = await run.http.post(
            "/register",
            json={
                "client_name": "Registered App",
                "redirect_uris": [CALLBACK],
                "grant_types": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_method": "none",
                "scope": "mcp files:read",
            },
        )
        assert registered.status_code == 201, registered.text
        assert registered.headers["cache-control"] == "no-store"
        client = registered.json()
        assert "client_secret" not in client
        assert client["redirect_uris"] == [CALLBACK]
        assert isinstance(client["client_id_issued_at"], int)

        flow = Flow(client_id=client["client_id"], scope="mcp files:read", resource=RESOURCE)
        response = await run.http.get("/authorize", params=flow.query())
        where, params = redirected_to(response)
        assert where == CALLBACK
        assert params["state"] == flow.state
        assert params["iss"] == run.url
        exchanged = await run.http.post("/token", data=flow.token_form(params["code"]))
        assert exchanged.status_code == 200, exchanged.text
        assert exchanged.headers["cache-control"] == "no-store"
        tokens = exchanged.json()
        assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 900
        assert tokens["scope"] == "mcp files:read"

        claims = await verified_claims(run, tokens["access_token"], RESOURCE)
        assert claims["sub"] == "dev-user"
        assert claims["client_id"] == client["client_id"]
        assert claims["scope"] == "mcp files:read"
        assert claims["aud"] == RESOURCE
        assert claims["nbf"] == claims["iat"] and claims["exp"] == claims["iat"] + 900
        assert claims["jti"]

        # Refresh: a new pair, the old refresh token spent; narrowing the scope is allowed.
        refreshed = await refresh(run, tokens["refresh_token"], client["client_id"], scope="mcp")
        assert refreshed.status_code == 200, refreshed.text
        second = refreshed.json()
        assert second["refresh_token"] != tokens["refresh_token"]
        assert second["scope"] == "mcp"
        assert (await verified_claims(run, second["access_token"], RESOURCE))["scope"] == "mcp"

        described = await introspect(run, second["access_token"])
        assert described["active"] is True
        assert described["sub"] == "dev-user" and described["aud"] == RESOURCE
        assert described["client_id"] == client["client_id"]

        # Revoking the access token makes it inactive; the refresh token still works.
        form = {"token": second["access_token"], "client_id": client["client_id"]}
        assert (await run.http.post("/revoke", data=form)).status_code == 200
        assert (await introspect(run, second["access_token"]))["active"] is False
        assert (await introspect(run, second["refresh_token"]))["active"] is True

        # Revoking the refresh token revokes the grant: no more refreshing.
        form = {"token": second["refresh_token"], "client_id": client["client_id"]}
        assert (await run.http.post("/revoke", data=form)).status_code == 200
        again = await refresh(run, second["refresh_token"], client["client_id"])
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


async def test_the_consent_form_signs_the_user_in_and_asks() -> None:
    async with running(dev_approve=False) as run:
        flow = Flow(scope="mcp files:read")
        page = await run.http.get("/authorize", params=flow.query())
        assert page.status_code == 200
        assert page.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert page.headers["cache-control"] == "no-store"
        assert "<script" not in page.text.lower()
        assert "The App" in page.text and "127.0.0.1:5173" in page.text
        assert "files:read" in page.text and "http://127.0.0.1:8000/mcp" in page.text
        fields = dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
        assert fields["state"] == flow.state and fields["csrf"]

        wrong = await run.http.post(
            "/authorize",
            data={**fields, "username": "alice", "password": "nope", "decision": "approve"},
        )
        assert wrong.status_code == 200 and "location" not in wrong.headers
        assert "Wrong username or password" in wrong.text

        approved = await run.http.post(
            "/authorize",
            data={**fields, "username": "alice", "password": "wonderland", "decision": "approve"},
        )
        where, params = redirected_to(approved)
        assert approved.status_code == 303 and where == CALLBACK
        assert params["state"] == flow.state and params["iss"] == run.url
        tokens = (await run.http.post("/token", data=flow.token_form(params["code"]))).json()
        claims = await verified_claims(run, tokens["access_token"], flow.resource or "")
        assert claims["sub"] == "alice" and claims["scope"] == "mcp files:read"

        # A form is answered once (issue 22 item 19c): denying takes a new page.
        again = await run.http.get("/authorize", params=flow.query())
        fields = dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', again.text))
        denied = await run.http.post("/authorize", data={**fields, "decision": "deny"})
        where, params = redirected_to(denied)
        assert where == CALLBACK
        assert params == {
            "error": "access_denied",
            "error_description": params["error_description"],
            "state": flow.state,
            "iss": run.url,
        }


async def test_a_user_known_from_the_request_is_only_asked_to_consent() -> None:
    async def from_proxy_header(attempt: Any) -> str | None:
        return attempt.headers.get("x-authenticated-user")

    async with running(dev_approve=False, authenticate=from_proxy_header) as run:
        flow = Flow()
        headers = {"x-authenticated-user": "bob"}
        page = await run.http.get("/authorize", params=flow.query(), headers=headers)
        assert "Signed in as <strong>bob</strong>" in page.text
        assert 'name="password"' not in page.text
        fields = dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
        approved = await run.http.post(
            "/authorize", data={**fields, "decision": "approve"}, headers=headers
        )
        _, params = redirected_to(approved)
        tokens = (await run.http.post("/token", data=flow.token_form(params["code"]))).json()
        assert (await verified_claims(run, tokens["access_token"], RESOURCE))["sub"] == "bob"


async def test_client_credentials_for_a_machine_client() -> None:
    async with running() as run:
        response = await run.http.post(
            "/token",
            data={"grant_type": "client_credentials", "scope": "files:read", "resource": RESOURCE},
            auth=("machine", MACHINE_SECRET),
        )
        assert response.status_code == 200, response.text
        tokens = response.json()
        assert "refresh_token" not in tokens
        claims = await verified_claims(run, tokens["access_token"], RESOURCE)
        assert claims["sub"] == "machine" and claims["client_id"] == "machine"
        assert claims["scope"] == "files:read"
        beyond = await run.http.post(
            "/token",
            data={"grant_type": "client_credentials", "scope": "files:write"},
            auth=("machine", MACHINE_SECRET),
        )
        assert beyond.status_code == 400 and beyond.json()["error"] == "invalid_scope"


async def test_a_registered_confidential_client_uses_its_secret() -> None:
    async with running() as run:
        client = await register(run, token_endpoint_auth_method="client_secret_post")
        assert client["client_secret_expires_at"] == 0
        flow = Flow(client_id=client["client_id"])
        response = await run.http.get("/authorize", params=flow.query())
        _, params = redirected_to(response)
        form = flow.token_form(params["code"], client_secret=client["client_secret"])
        exchanged = await run.http.post("/token", data=form)
        assert exchanged.status_code == 200, exchanged.text
        assert "refresh_token" in exchanged.json()


async def test_tokens_without_a_resource_are_for_the_default_audience() -> None:
    async with running(default_resource="https://mcp.example.com/mcp") as run:
        tokens = await tokens_for(run, Flow(resource=None))
        claims = await verified_claims(run, tokens["access_token"], "https://mcp.example.com/mcp")
        assert claims["aud"] == "https://mcp.example.com/mcp"
    async with running() as run:  # no default: the issuer itself
        tokens = await tokens_for(run, Flow(resource=None))
        assert (await verified_claims(run, tokens["access_token"], run.url))["aud"] == run.url


async def test_cors_for_browser_clients_but_not_on_the_authorization_endpoint() -> None:
    async with running() as run:
        preflight = await run.http.options(
            "/token",
            headers={"origin": "https://app.example", "access-control-request-method": "POST"},
        )
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == "*"
        assert "POST" in preflight.headers["access-control-allow-methods"]
        metadata = await run.http.get("/.well-known/oauth-authorization-server")
        assert metadata.headers["access-control-allow-origin"] == "*"
        page = await run.http.options("/authorize")
        assert page.status_code == 405 and "access-control-allow-origin" not in page.headers
