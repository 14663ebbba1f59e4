"""PKCE (RFC 7636), S256 only: OAuth 2.1 and MCP require it, and `plain` protects nothing
against an attacker who sees the authorization request."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")


def new_verifier() -> str:
    """A fresh code verifier: 64 unreserved characters (384 random bits)."""
    return secrets.token_urlsafe(48)


def s256_challenge(verifier: str) -> str:
    """The S256 code challenge of `verifier`: BASE64URL(SHA256(verifier)), no padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def valid_verifier(verifier: str) -> bool:
    """RFC 7636 section 4.1: 43 to 128 unreserved characters."""
    return _VERIFIER.fullmatch(verifier) is not None


def verify_s256(verifier: str, challenge: str) -> bool:
    """Whether `verifier` matches an S256 `challenge` (constant-time compare)."""
    if not valid_verifier(verifier):
        return False
    return hmac.compare_digest(s256_challenge(verifier), challenge)
