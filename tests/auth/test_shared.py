"""The pure helpers both OAuth sides share: PKCE S256 and the well-known metadata URLs."""

from __future__ import annotations

import pytest

from mcpkit.auth import pkce, wellknown
from mcpkit.runtime.principal import Principal


def test_s256_matches_rfc7636_appendix_b() -> None:
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"  # the RFC's example
    assert pkce.s256_challenge(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    assert pkce.verify_s256(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    assert not pkce.verify_s256(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN")


def test_new_verifiers_are_valid_and_distinct() -> None:
    made = {pkce.new_verifier() for _ in range(50)}
    assert len(made) == 50
    assert all(pkce.valid_verifier(v) for v in made)
    assert not pkce.valid_verifier("short")
    assert not pkce.verify_s256("a" * 42, pkce.s256_challenge("a" * 42))  # too short to count


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("HTTPS://MCP.Example.com/mcp/", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com:443/mcp#frag", "https://mcp.example.com/mcp"),
        ("http://127.0.0.1:8000/mcp?x=1", "http://127.0.0.1:8000/mcp"),
        ("https://mcp.example.com/", "https://mcp.example.com"),
        ("http://[::1]:9000/a", "http://[::1]:9000/a"),
    ],
)
def test_canonical_resource(given: str, canonical: str) -> None:
    assert wellknown.canonical_resource(given) == canonical


@pytest.mark.parametrize("bad", ["ftp://x/y", "/mcp", "https:///nohost"])
def test_canonical_resource_refuses_non_http_urls(bad: str) -> None:
    with pytest.raises(ValueError, match="not an absolute"):
        wellknown.canonical_resource(bad)


def test_protected_resource_urls_path_first_then_root() -> None:
    assert wellknown.protected_resource_metadata_urls("https://ex.com/public/mcp") == [
        "https://ex.com/.well-known/oauth-protected-resource/public/mcp",
        "https://ex.com/.well-known/oauth-protected-resource",
    ]
    assert wellknown.protected_resource_metadata_urls("https://ex.com") == [
        "https://ex.com/.well-known/oauth-protected-resource"
    ]
    assert wellknown.protected_resource_metadata_path("/mcp") == (
        "/.well-known/oauth-protected-resource/mcp"
    )


def test_authorization_server_urls_in_the_spec_order() -> None:
    assert wellknown.authorization_server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert wellknown.authorization_server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_principal_key_separates_clients_and_never_holds_the_token() -> None:
    alice_a = Principal("alice", client_id="a", scopes=frozenset({"read"}))
    alice_b = Principal("alice", client_id="b")
    assert alice_a.key != alice_b.key
    assert Principal("1:x", client_id=None).key != Principal("x", client_id="1").key
    assert alice_a.has_scopes({"read"}) and not alice_a.has_scopes({"read", "write"})
    assert "token" not in Principal.__dataclass_fields__
