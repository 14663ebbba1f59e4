"""Deeply nested JSON at every door an attacker can reach (issue 22, item 16).

`json.loads` raises RecursionError on a few thousand brackets, and a value nested 1,000 deep
(which orjson still accepts) breaks any later reader that recurses (`repr`, `json.dumps`,
PyJWT). Each test sends such a body to a real server on 127.0.0.1, or has a real server send
it to our client, and expects the refusal the protocol names -- never a 500, never a
traceback in the log.
"""

from __future__ import annotations

import base64
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcpkit import Server
from mcpkit.auth import BearerAuth, IntrospectionVerifier, JWTVerifier
from mcpkit.auth.client.challenge import Challenge
from mcpkit.auth.client.discovery import discover
from mcpkit.auth.client.errors import OAuthError as ClientOAuthError
from mcpkit.auth.client.wire import json_object
from mcpkit.auth.server import CIMDOptions
from mcpkit.host.providers import ModelRequest, OpenAIProvider, ProviderError
from tests.auth.server.support import RS_SECRET, Flow, running
from tests.host.fake_llm import fake_llm, openai_completion, openai_tool_call
from tests.host.test_providers import ADD, ASKED, KEY
from tests.http.server_fixture import HEADERS, initialize_body
from tests.http.servers import serving, unused_port

# Past the standard library's recursion limit (its json.loads raises RecursionError) ...
BRACKETS = b"[" * 20_000 + b"]" * 20_000
# ... and under orjson's own limit (1,024): parses, then breaks whatever recurses over it.
DEEP = b"[" * 990 + b"]" * 990
# Fits a token (16 KiB at most) and is still past the standard library's limit.
TOKEN_BRACKETS = b"[" * 1500 + b"]" * 1500
ALLOW_LOCAL = CIMDOptions(allowed_networks=("127.0.0.1/32",), allow_http=True, timeout=2.0)


def segment(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def deep_jwt() -> str:
    """A compact JWS whose header is nested 1,500 levels deep."""
    payload = segment(b'{"sub":"x"}')
    return f"{segment(TOKEN_BRACKETS)}.{payload}.c2ln"


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert failures == [], [r.getMessage() for r in failures]


class Answers:
    """A tiny HTTP server answering every request with one fixed JSON body."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.documents: dict[str, bytes] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = self.documents.get(scope["path"], self.body)
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@contextlib.asynccontextmanager
async def answering(body: bytes) -> AsyncIterator[tuple[str, Answers]]:
    app = Answers(body)
    async with serving(app) as url:
        yield url, app


@pytest.mark.parametrize(
    "body",
    [
        BRACKETS,
        b'{"redirect_uris":' + BRACKETS + b"}",
        b'{"redirect_uris":["http://127.0.0.1:5173/callback"],"token_endpoint_auth_method":'
        b'"private_key_jwt","jwks":{"keys":' + DEEP + b"}}",
    ],
    ids=["brackets", "in-a-member", "jwks-990-deep"],
)
async def test_a_deeply_nested_registration_is_invalid_client_metadata(
    body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    async with running() as run:
        headers = {"content-type": "application/json"}
        response = await run.http.post("/register", content=body, headers=headers)
        assert response.status_code == 400, response.text
        assert response.json()["error"] == "invalid_client_metadata"
        assert "nested deeper" in response.json()["error_description"]
    no_traceback(caplog)


@pytest.mark.parametrize("body", [b"[" * 7000 + b"]" * 7000, b'{"client_id":' + DEEP + b"}"])
async def test_a_deeply_nested_metadata_document_is_refused_clearly(
    body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    async with answering(body) as (documents, _), running(cimd=ALLOW_LOCAL) as run:
        flow = Flow(client_id=f"{documents}/client.json")
        response = await run.http.get("/authorize", params=flow.query())
        assert response.status_code == 400, response.text
        assert "location" not in response.headers
        assert "invalid_client" in response.text
        assert "client metadata document: the document is JSON nested deeper" in response.text
    no_traceback(caplog)


async def test_a_deeply_nested_client_assertion_is_invalid_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with running() as run:
        form = {
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": deep_jwt(),
        }
        response = await run.http.post("/token", data=form)
        assert response.status_code == 401, response.text
        assert response.json()["error"] == "invalid_client"
    no_traceback(caplog)


@pytest.mark.parametrize("endpoint", ["/introspect", "/revoke"])
async def test_a_deeply_nested_token_to_introspect_or_revoke_is_not_a_token(
    endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with running() as run:
        form = {"token": deep_jwt()}
        response = await run.http.post(endpoint, data=form, auth=("rs", RS_SECRET))
        assert response.status_code == 200, response.text
        if endpoint == "/introspect":
            assert response.json() == {"active": False}
    no_traceback(caplog)


def whoami_app(auth: BearerAuth) -> Any:
    server = Server("deep")

    @server.tool()
    def whoami() -> str:
        return "someone"

    return server.http_app(auth=auth)


@pytest.mark.parametrize("where", ["introspection", "jwks", "token"])
async def test_the_protected_resource_refuses_deep_json_from_anyone_with_401(
    where: str, caplog: pytest.LogCaptureFixture
) -> None:
    port = unused_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    async with answering(BRACKETS) as (upstream, _):
        verifier: Any
        if where == "introspection":
            verifier = IntrospectionVerifier(
                f"{upstream}/introspect", client_id="rs", client_secret="s", audience=resource
            )
        else:
            verifier = JWTVerifier(issuer=upstream, audience=resource, jwks_url=f"{upstream}/k")
        auth = BearerAuth(verifier, resource, authorization_servers=(upstream,))
        async with serving(whoami_app(auth), port) as base, httpx.AsyncClient() as http:
            token = deep_jwt() if where == "token" else _signed_looking_token()
            headers = {**HEADERS, "authorization": f"Bearer {token}"}
            response = await http.post(f"{base}/mcp", headers=headers, json=initialize_body())
            assert response.status_code == 401, response.text
            assert 'error="invalid_token"' in response.headers["www-authenticate"]
    no_traceback(caplog)


def _signed_looking_token() -> str:
    header = segment(b'{"alg":"RS256","kid":"k1","typ":"at+jwt"}')
    payload = segment(b'{"sub":"x"}')
    return f"{header}.{payload}.c2ln"


async def test_the_client_refuses_deeply_nested_authorization_server_metadata() -> None:
    async with answering(DEEP) as (base, app):
        app.documents["/.well-known/oauth-protected-resource/mcp"] = (
            f'{{"resource":"{base}/mcp","authorization_servers":["{base}"]}}'.encode()
        )
        app.documents["/.well-known/oauth-authorization-server"] = (
            b'{"issuer":' + DEEP + b',"token_endpoint":"x"}'
        )
        async with httpx.AsyncClient() as http:
            with pytest.raises(ClientOAuthError, match="no authorization server metadata"):
                await discover(http, f"{base}/mcp", Challenge.parse([]))


def test_the_client_reads_a_deeply_nested_token_answer_as_no_answer() -> None:
    # A token or registration endpoint's answer goes through `json_object`: a 990-deep
    # `error` would otherwise reach `printable` (repr) in the error message and recurse.
    assert json_object(httpx.Response(400, content=b'{"error":' + DEEP + b"}")) == {}
    assert json_object(httpx.Response(400, content=BRACKETS)) == {}


async def test_a_models_deeply_nested_tool_arguments_are_no_json() -> None:
    # The OpenAI chat provider reads the model's tool-call arguments with json.loads.
    deep = openai_tool_call("c", "add", BRACKETS.decode())
    async with (
        fake_llm() as fake,
        OpenAIProvider(api_key=KEY, base_url=f"{fake.url}/v1", max_retries=0) as gpt,
    ):
        fake.script(openai_completion(None, [deep], "tool_calls"))
        with pytest.raises(ProviderError, match="called add with arguments that are no JSON"):
            await gpt.complete(ModelRequest([ASKED], tools=[ADD]))
