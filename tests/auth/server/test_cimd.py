"""Client ID Metadata Documents, fetched from a real document server on 127.0.0.1: the whole
flow with a URL client id, the cache, and the SSRF guard -- loopback refused unless allowed,
a 10 MB document, a slow server, a redirect, a document whose client_id is not its URL."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from mcpkit.auth.server import CIMDOptions
from mcpkit.auth.server.fetch import cache_age, is_forbidden_address
from tests.http.servers import unused_port

from .support import CALLBACK, Flow, Running, introspect, redirected_to, running, serving

VARIANTS: dict[str, dict[str, Any]] = {
    "/mismatch.json": {"client_id": "http://127.0.0.1/other.json"},
    "/nameless.json": {"client_name": None},
    "/secret.json": {"client_secret": "s3cret"},
    "/secret-method.json": {"token_endpoint_auth_method": "client_secret_basic"},
    "/evil-redirect.json": {"redirect_uris": ["http://evil.example/callback"]},
    "/machine.json": {
        "grant_types": ["client_credentials"],
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks": {"keys": []},
    },
}
SIGNER = ec.generate_private_key(ec.SECP256R1())
SIGNER_JWK = {**ECAlgorithm.to_jwk(SIGNER.public_key(), as_dict=True), "kid": "doc-key"}
ALLOW_LOCAL = CIMDOptions(allowed_networks=("127.0.0.1/32",), allow_http=True, timeout=1.0)


class DocumentServer:
    """Serves client metadata documents, good and bad, and counts the requests."""

    def __init__(self) -> None:
        self.base = ""
        self.hits: dict[str, int] = {}

    def document(self, path: str, **changes: Any) -> dict[str, Any]:
        document = {
            "client_id": f"{self.base}{path}",
            "client_name": "Document Client",
            "redirect_uris": [CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        }
        document.update(changes)
        return {k: v for k, v in document.items() if v is not None}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        self.hits[path] = self.hits.get(path, 0) + 1
        headers = [(b"content-type", b"application/json")]
        if path == "/slow.json":
            await asyncio.sleep(3)
        if path == "/drip.json":
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            for _ in range(30):
                await send({"type": "http.response.body", "body": b" ", "more_body": True})
                await asyncio.sleep(0.1)
            await send({"type": "http.response.body", "body": b"{}"})
            return
        if path == "/big-chunked.json":
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            for _ in range(160):
                chunk = b" " * 65536
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"{}"})
            return
        status, body = 200, b""
        if path == "/redirect.json":
            status, headers = 302, [(b"location", f"{self.base}/good.json".encode())]
        elif path == "/big.json":
            padding = " " * (10 * 1024 * 1024)
            body = json.dumps({**self.document(path), "padding": padding}).encode()
        elif path == "/keys.json":
            body = json.dumps({"keys": [SIGNER_JWK]}).encode()
        elif path == "/signed.json":
            keys = {"token_endpoint_auth_method": "private_key_jwt"}
            body = json.dumps(
                self.document(path, jwks_uri=f"{self.base}/keys.json", **keys)
            ).encode()
        elif path in ("/good.json", "/fresh.json") or path in VARIANTS:
            body = json.dumps(self.document(path, **VARIANTS.get(path, {}))).encode()
        else:
            status = 404
        if path == "/fresh.json":
            headers.append((b"cache-control", b"no-store"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture
async def documents() -> AsyncIterator[DocumentServer]:
    server = DocumentServer()
    port = unused_port()
    async with serving(server, port) as url:
        server.base = url
        yield server


async def authorize(run: Running, client_id: str) -> httpx.Response:
    return await run.http.get("/authorize", params=Flow(client_id=client_id).query())


def refused_page(response: httpx.Response, reason: str) -> None:
    assert response.status_code == 400, response.text
    assert "location" not in response.headers
    assert "invalid_client" in response.text and reason in response.text


async def test_a_document_client_completes_the_flow_and_is_cached(
    documents: DocumentServer,
) -> None:
    async with running(cimd=ALLOW_LOCAL) as run:
        client_id = f"{documents.base}/good.json"
        flow = Flow(client_id=client_id)
        response = await run.http.get("/authorize", params=flow.query())
        _, params = redirected_to(response)
        tokens = await run.http.post("/token", data=flow.token_form(params["code"]))
        assert tokens.status_code == 200, tokens.text
        claims = jwt.decode(tokens.json()["access_token"], options={"verify_signature": False})
        assert claims["client_id"] == client_id
        assert (await introspect(run, tokens.json()["access_token"]))["active"] is True
        assert documents.hits["/good.json"] == 1  # the token request used the cache
        fresh = f"{documents.base}/fresh.json"
        for _ in range(2):
            redirected_to(await authorize(run, fresh))
        assert documents.hits["/fresh.json"] == 2  # no-store: fetched each time


async def test_the_consent_page_says_the_name_is_self_described(
    documents: DocumentServer,
) -> None:
    async with running(cimd=ALLOW_LOCAL, dev_approve=False) as run:
        page = await authorize(run, f"{documents.base}/good.json")
        assert page.status_code == 200
        assert "Document Client" in page.text and "not verified" in page.text
        assert "your own computer" in page.text  # a loopback redirect URI gets a warning


async def test_loopback_documents_are_refused_by_default(documents: DocumentServer) -> None:
    policy = CIMDOptions(allow_http=True)  # http accepted, but no network allowed
    async with running(cimd=policy) as run:
        refused_page(await authorize(run, f"{documents.base}/good.json"), "not a public address")
        localhost = documents.base.replace("127.0.0.1", "localhost")
        refused_page(await authorize(run, f"{localhost}/good.json"), "not a public address")
    assert documents.hits == {}  # nothing was ever sent


async def test_http_client_ids_are_not_documents_by_default(documents: DocumentServer) -> None:
    async with running() as run:
        response = await authorize(run, f"{documents.base}/good.json")
        assert response.status_code == 400 and "unknown client" in response.text
    assert documents.hits == {}


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/big.json", "larger than"),
        ("/big-chunked.json", "larger than"),
        ("/mismatch.json", "client_id is not its URL"),
        ("/nameless.json", "no client_name"),
        ("/secret.json", "must not hold a secret"),
        ("/secret-method.json", "token_endpoint_auth_method"),
        ("/evil-redirect.json", "http redirect URIs are only allowed on loopback"),
        ("/machine.json", "not available"),
        ("/redirect.json", "redirects are not followed"),
        ("/missing.json", "server answered 404"),
    ],
)
async def test_bad_documents_are_refused(documents: DocumentServer, path: str, reason: str) -> None:
    async with running(cimd=ALLOW_LOCAL) as run:
        refused_page(await authorize(run, f"{documents.base}{path}"), reason)
    assert documents.hits.get("/good.json", 0) == 0  # the redirect was not followed


@pytest.mark.parametrize("path", ["/slow.json", "/drip.json"])
async def test_a_slow_document_server_is_cut_off(documents: DocumentServer, path: str) -> None:
    async with running(cimd=ALLOW_LOCAL) as run:
        started = time.monotonic()
        refused_page(await authorize(run, f"{documents.base}{path}"), "took too long")
        assert time.monotonic() - started < 2.5


async def test_document_urls_must_have_the_required_shape(documents: DocumentServer) -> None:
    async with running(cimd=ALLOW_LOCAL) as run:
        for bad in [
            documents.base,
            f"{documents.base}/",
            f"{documents.base}/a/../good.json",
            documents.base.replace("http://", "http://user@") + "/good.json",
        ]:
            refused_page(await authorize(run, bad), "not a valid metadata document URL")
    assert documents.hits == {}


async def test_trusted_hosts_limit_where_documents_come_from(documents: DocumentServer) -> None:
    policy = CIMDOptions(
        allowed_networks=("127.0.0.0/8",), allow_http=True, trusted_hosts=(".example.com",)
    )
    async with running(cimd=policy) as run:
        refused_page(await authorize(run, f"{documents.base}/good.json"), "not accepted")
    assert documents.hits == {}


async def test_a_document_client_authenticates_at_the_token_endpoint(
    documents: DocumentServer,
) -> None:
    async with running(cimd=ALLOW_LOCAL) as run:
        form = {"grant_type": "client_credentials", "client_id": f"{documents.base}/mismatch.json"}
        response = await run.http.post("/token", data=form)
        assert response.status_code == 401 and response.json()["error"] == "invalid_client"


async def test_a_document_client_signs_with_the_keys_at_its_jwks_uri(
    documents: DocumentServer,
) -> None:
    async with running(cimd=ALLOW_LOCAL) as run:
        client_id = f"{documents.base}/signed.json"
        flow = Flow(client_id=client_id)
        _, params = redirected_to(await run.http.get("/authorize", params=flow.query()))

        def signed(**changes: Any) -> str:
            now = int(time.time())
            claims = {"iss": client_id, "sub": client_id, "aud": run.url, "exp": now + 60}
            claims.update(jti=f"{now}-{len(changes)}", **changes)
            return jwt.encode(claims, SIGNER, algorithm="ES256", headers={"kid": "doc-key"})

        assertion = {
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": signed(),
        }
        unsigned = await run.http.post("/token", data=flow.token_form(params["code"]))
        assert unsigned.status_code == 401  # "none" is not how this client authenticates
        _, params = redirected_to(await run.http.get("/authorize", params=flow.query()))
        form = {**flow.token_form(params["code"], client_id=None), **assertion}
        response = await run.http.post("/token", data=form)
        assert response.status_code == 200, response.text
        assert documents.hits["/keys.json"] == 1


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",  # cloud metadata
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "2001:db8::1",
    ],
)
def test_non_public_addresses_are_forbidden(address: str) -> None:
    assert is_forbidden_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.215.14", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_are_allowed(address: str) -> None:
    assert not is_forbidden_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    ("header", "age"),
    [
        (None, None),
        ("max-age=60", 60.0),
        ("public, max-age=600", 600.0),
        ("no-store", 0.0),
        ("max-age=60, no-cache", 0.0),
        ("max-age=soon", 0.0),
    ],
)
def test_cache_control_decides_the_cache_age(header: str | None, age: float | None) -> None:
    assert cache_age(header) == age
