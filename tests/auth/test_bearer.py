"""A protected MCP server over real HTTP (uvicorn on 127.0.0.1): `server.http_app(auth=
BearerAuth(...))` in both protocol eras, on the Streamable HTTP endpoint and the legacy SSE
endpoints, with scopes per tool, prompt, resource and template."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcpkit import Client, Server
from mcpkit.auth import BearerAuth, StaticTokenVerifier
from mcpkit.client import HTTPOptions
from mcpkit.errors import ProtocolError
from mcpkit.runtime.principal import Principal
from mcpkit.server import Context
from tests.http.server_fixture import HEADERS, initialize_body
from tests.http.servers import serving, unused_port

PEOPLE = {
    "alice-token-0123456789": Principal("alice", "app", frozenset({"mcp"})),
    "bob-token-0123456789": Principal("bob", "app", frozenset({"mcp"})),
    "root-token-0123456789": Principal("root", "app", frozenset({"mcp", "admin"})),
    "guest-token-0123456789": Principal("guest", "app", frozenset({"other"})),
}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def protected_server(hide: bool = False) -> Server:
    server = Server("protected", hide_out_of_scope=hide)

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Who the token says I am."""
        assert ctx.principal is not None
        return f"{ctx.principal.subject}:{' '.join(sorted(ctx.principal.scopes))}"

    @server.tool(scopes=["admin"])
    def shutdown() -> str:
        """Only for admins."""
        return "bye"

    @server.prompt(scopes=["admin"])
    def secrets() -> str:
        return "the secret prompt"

    @server.resource("secret://plans", scopes=["admin"])
    def plans() -> str:
        return "the plans"

    @server.resource("vault://{name}", scopes=["admin"])
    def vault(name: str) -> str:
        return f"vault {name}"

    @server.resource("public://hello")
    def hello() -> str:
        return "hello"

    return server


@contextlib.asynccontextmanager
async def protected(hide: bool = False, **options: Any) -> AsyncIterator[tuple[str, BearerAuth]]:
    port = unused_port()
    auth = BearerAuth(
        StaticTokenVerifier(PEOPLE),
        resource=f"http://127.0.0.1:{port}/mcp",
        authorization_servers=("https://auth.example.com",),
        scopes_supported=("mcp", "admin"),
        required_scopes=frozenset({"mcp"}),
        resource_name="Protected test server",
    )
    app = protected_server(hide).http_app(auth=auth, **options)
    async with serving(app, port) as base:
        yield base, auth


def challenge(response: httpx.Response) -> dict[str, str]:
    """The WWW-Authenticate header, parsed strictly: `Bearer` then key="value" pairs."""
    header = response.headers["www-authenticate"]
    assert header.startswith("Bearer "), header
    pairs = re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', header[7:])
    rebuilt = ", ".join(f'{k}="{v}"' for k, v in pairs)
    assert rebuilt == header[7:], header  # nothing but well-formed auth-params
    return {k: v.replace('\\"', '"') for k, v in pairs}


def bearer(token: str) -> dict[str, str]:
    return {**HEADERS, "authorization": f"Bearer {token}"}


def tool_call(request_id: int, name: str, modern: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if modern:
        params["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def modern_headers(token: str, method: str, name: str | None) -> dict[str, str]:
    headers = {**bearer(token), "mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return headers


async def session(c: httpx.AsyncClient, token: str) -> dict[str, str]:
    opened = await c.post("/mcp", headers=bearer(token), json=initialize_body())
    assert opened.status_code == 200, opened.text
    headers = {
        **bearer(token),
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await c.post("/mcp", headers=headers, json=note)).status_code == 202
    return headers


async def test_protected_resource_metadata_at_both_well_known_uris() -> None:
    async with protected() as (base, _), httpx.AsyncClient(base_url=base) as c:
        for path in (
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ):
            answer = await c.get(path)
            assert answer.status_code == 200
            assert answer.headers["access-control-allow-origin"] == "*"
            assert answer.json() == {
                "resource": f"{base}/mcp",
                "authorization_servers": ["https://auth.example.com"],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["mcp", "admin"],
                "resource_name": "Protected test server",
            }
        assert (await c.post("/.well-known/oauth-protected-resource")).status_code == 405


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("POST", "/mcp", HEADERS),
        ("GET", "/mcp", {"accept": "text/event-stream", "mcp-session-id": "x"}),
        ("DELETE", "/mcp", {"mcp-session-id": "x"}),
        ("GET", "/sse", {"accept": "text/event-stream"}),
        ("POST", "/messages/?session_id=x", HEADERS),
    ],
)
async def test_no_token_is_401_with_a_challenge_everywhere(
    method: str, path: str, headers: dict[str, str]
) -> None:
    async with protected(http_sse=True) as (base, _), httpx.AsyncClient(base_url=base) as c:
        answer = await c.request(method, path, headers=headers, json=initialize_body())
        assert answer.status_code == 401
        assert challenge(answer) == {
            "resource_metadata": f"{base}/.well-known/oauth-protected-resource/mcp",
            "scope": "mcp",
        }


@pytest.mark.parametrize(
    ("headers", "status", "error"),
    [
        ({"authorization": "Bearer not-a-known-token"}, 401, "invalid_token"),
        ({"authorization": "Bearer two words"}, 400, "invalid_request"),  # RFC 6750 3.1
        ({"authorization": "Bearer"}, 400, "invalid_request"),
        ({"authorization": "bearer a=b"}, 400, "invalid_request"),
        ({"authorization": "Bearer guest-token-0123456789"}, 403, "insufficient_scope"),
    ],
)
async def test_bad_tokens_are_refused_with_the_error_the_rfc_names(
    headers: dict[str, str], status: int, error: str
) -> None:
    async with protected() as (base, _), httpx.AsyncClient(base_url=base) as c:
        answer = await c.post("/mcp", headers={**HEADERS, **headers}, json=initialize_body())
        assert answer.status_code == status
        assert challenge(answer)["error"] == error
        assert "token-0123456789" not in answer.text + answer.headers["www-authenticate"]


async def test_another_scheme_is_no_bearer_authentication_401_without_an_error_code() -> None:
    # RFC 6750 section 3.1: a request using an unsupported method gets the challenge alone.
    async with protected() as (base, _), httpx.AsyncClient(base_url=base) as c:
        basic = {**HEADERS, "authorization": "Basic YWxpY2U6cHc="}
        answer = await c.post("/mcp", headers=basic, json=initialize_body())
        assert answer.status_code == 401
        assert "error" not in challenge(answer) and challenge(answer)["scope"] == "mcp"


async def test_a_token_in_the_query_string_or_twice_is_refused() -> None:
    async with protected() as (base, _), httpx.AsyncClient(base_url=base) as c:
        query = await c.post(
            "/mcp?access_token=alice-token-0123456789", headers=HEADERS, json=initialize_body()
        )
        assert query.status_code == 400 and challenge(query)["error"] == "invalid_request"
        twice = [
            *bearer("alice-token-0123456789").items(),
            ("authorization", "Bearer root-token-0123456789"),
        ]
        assert (await c.post("/mcp", headers=twice, json=initialize_body())).status_code == 400


async def test_a_session_belongs_to_the_principal_that_opened_it() -> None:
    async with protected() as (base, _), httpx.AsyncClient(base_url=base) as c:
        alice = await session(c, "alice-token-0123456789")
        answer = await c.post("/mcp", headers=alice, json=tool_call(2, "whoami"))
        assert answer.json()["result"]["content"][0]["text"] == "alice:mcp"
        stolen = {**alice, "authorization": "Bearer bob-token-0123456789"}
        assert (
            await c.post("/mcp", headers=stolen, json=tool_call(3, "whoami"))
        ).status_code == 404
        listen = {**stolen, "accept": "text/event-stream"}
        assert (await c.get("/mcp", headers=listen)).status_code == 404
        assert (await c.delete("/mcp", headers=stolen)).status_code == 404
        assert (await c.delete("/mcp", headers=alice)).status_code == 200


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "2026-07-28"])
async def test_scopes_per_tool_prompt_resource_and_template(modern: bool) -> None:
    async with protected() as (base, auth), httpx.AsyncClient(base_url=base) as c:
        requests = [
            ("tools/call", {"name": "shutdown", "arguments": {}}, "shutdown"),
            ("prompts/get", {"name": "secrets"}, "secrets"),
            ("resources/read", {"uri": "secret://plans"}, "secret://plans"),
            ("resources/read", {"uri": "vault://gold"}, "vault://gold"),
        ]
        for token, allowed in (("alice-token-0123456789", False), ("root-token-0123456789", True)):
            headers = None if modern else await session(c, token)
            for i, (method, plain, name) in enumerate(requests):
                params = {**plain, "_meta": MODERN_META} if modern else plain
                if modern:
                    headers = modern_headers(token, method, name)
                message = {"jsonrpc": "2.0", "id": i + 10, "method": method, "params": params}
                assert headers is not None
                answer = await c.post("/mcp", headers=headers, content=json.dumps(message))
                if allowed:
                    assert answer.status_code == 200 and "result" in answer.json(), answer.text
                else:
                    assert answer.status_code == 403, answer.text
                    fields = challenge(answer)
                    assert fields["error"] == "insufficient_scope"
                    assert set(fields["scope"].split()) == {"mcp", "admin"}
                    assert fields["resource_metadata"] == auth.metadata_url
        if not modern:  # an unscoped resource needs nothing more
            alice = await session(c, "alice-token-0123456789")
            read = {"jsonrpc": "2.0", "id": 1, "method": "resources/read"}
            read["params"] = {"uri": "public://hello"}
            assert (await c.post("/mcp", headers=alice, json=read)).status_code == 200


@pytest.mark.parametrize("hide", [False, True])
async def test_lists_hide_what_a_caller_may_not_use_when_asked(hide: bool) -> None:
    async with protected(hide) as (base, _), httpx.AsyncClient(base_url=base) as c:
        seen = {}
        for token in ("alice-token-0123456789", "root-token-0123456789"):
            headers = await session(c, token)
            names = {}
            for method, key, field in (
                ("tools/list", "tools", "name"),
                ("prompts/list", "prompts", "name"),
                ("resources/list", "resources", "uri"),
                ("resources/templates/list", "resourceTemplates", "uriTemplate"),
            ):
                listed = await c.post(
                    "/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 5, "method": method}
                )
                names[key] = sorted(item[field] for item in listed.json()["result"][key])
            seen[token.split("-")[0]] = names
        assert seen["root"] == {
            "tools": ["shutdown", "whoami"],
            "prompts": ["secrets"],
            "resources": ["public://hello", "secret://plans"],
            "resourceTemplates": ["vault://{name}"],
        }
        if hide:
            assert seen["alice"] == {
                "tools": ["whoami"],
                "prompts": [],
                "resources": ["public://hello"],
                "resourceTemplates": [],
            }
        else:
            assert seen["alice"] == seen["root"]


async def test_http_sse_sessions_are_authenticated_and_bound() -> None:
    async with protected(http_sse=True) as (base, _), httpx.AsyncClient(base_url=base) as c:
        alice = bearer("alice-token-0123456789")
        async with c.stream("GET", "/sse", headers={**alice, "accept": "text/event-stream"}) as sse:
            assert sse.status_code == 200
            lines = sse.aiter_lines()
            endpoint = ""
            async for line in lines:
                if line.startswith("data: "):
                    endpoint = line[6:]
                    break
            assert endpoint.startswith("/messages/?session_id=")
            bob = bearer("bob-token-0123456789")
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            assert (await c.post(endpoint, headers=bob, json=ping)).status_code == 404
            assert (await c.post(endpoint, headers=alice, json=ping)).status_code == 202


@pytest.mark.parametrize("mode", ["handshake", "2026-07-28"])
async def test_our_client_with_a_bearer_token_in_both_eras(mode: str) -> None:
    async with protected() as (base, _):
        headers = {"authorization": "Bearer root-token-0123456789"}
        async with Client(f"{base}/mcp", mode=mode, http=HTTPOptions(headers=headers)) as client:
            result = await client.call_tool("whoami")
            assert result.content[0].text == "root:admin mcp"  # type: ignore[union-attr]
            assert (await client.call_tool("shutdown")).content[0].text == "bye"  # type: ignore[union-attr]
        headers = {"authorization": "Bearer alice-token-0123456789"}
        async with Client(f"{base}/mcp", mode=mode, http=HTTPOptions(headers=headers)) as client:
            with pytest.raises(ProtocolError):
                await client.call_tool("shutdown")


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (b"Bearer abc", "abc"),
        (b"bearer abc==", "abc=="),
        (b"  BEARER   a.b-c_d~e+f/g=  ", "a.b-c_d~e+f/g="),
        (b"Bearer", None),
        (b"Bearer ", None),
        (b"Bearer ===", None),  # padding alone is no token
        (b"Bearer a b", None),
        (b"Basic abc", None),
        (b"Bearer a=b", None),  # "=" only at the end
        (b"Bearer \xff", None),
        (b"Bearerabc", None),
    ],
)
def test_the_authorization_header_is_read_as_rfc_6750_says(
    header: bytes, token: str | None
) -> None:
    from mcpkit.auth.resource import _bearer_token

    assert _bearer_token(header) == token
