"""Compact JWS (the form of a JWT access token): parsed once, its signature checked with the
algorithm objects of PyJWT (the RSA, RSA-PSS and ECDSA details, on `cryptography`).

Why not `jwt.decode`: PyJWT 2.15 checks every base64url character in a Python generator and
parses the header twice when the caller needs it first (to pick the key by `kid`), which made
a token's verification cost 260 us where the RSA signature check itself is 38 us
(bench/auth_cost.py). Here the segments are checked with one regular expression and decoded
with the standard library, the JSON read by orjson, once.

Strict on purpose: exactly three segments of unpadded base64url, a header and payload that are
JSON objects, no `crit` header (we implement no critical extension, RFC 7515 4.1.11) and no
unencoded payload (`b64`, RFC 7797).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any

from mcpkit._extras import optional_dependency
from mcpkit.auth.untrusted_json import loads
from mcpkit.errors import MCPError

MAX_TOKEN_LENGTH = 16 * 1024  # far above any real access token; bounds the work per request
_SEGMENT = re.compile(r"[A-Za-z0-9_-]*")  # an empty one fails later, as JSON or signature


class MalformedJWS(MCPError, ValueError):
    """Not a compact JWS this module accepts (the message says which part is wrong)."""


@dataclass(frozen=True, slots=True)
class CompactJWS:
    header: dict[str, Any]
    payload: dict[str, Any]
    signing_input: bytes  # what the signature covers: "header.payload" as sent
    signature: bytes


def parse(token: str) -> CompactJWS:
    """The parts of `token`. Raises MalformedJWS."""
    if len(token) > MAX_TOKEN_LENGTH:
        raise MalformedJWS("the token is too long")
    parts = token.split(".")
    if len(parts) != 3 or not all(_SEGMENT.fullmatch(part) for part in parts):
        raise MalformedJWS("the token is not three base64url segments")
    header = _json_object(parts[0], "header")
    if "crit" in header or "b64" in header:
        raise MalformedJWS("the token's header asks for an extension we do not implement")
    payload = _json_object(parts[1], "payload")
    return CompactJWS(header, payload, f"{parts[0]}.{parts[1]}".encode(), _decode(parts[2]))


def signature_valid(jws: CompactJWS, algorithm: str, key: Any) -> bool:
    """Whether `key` (a `cryptography` public key) made `jws`'s signature with `algorithm`
    (a name from the caller's allow list). A key of another family is simply not the signer."""
    try:
        return bool(_algorithms()[algorithm].verify(jws.signing_input, key, jws.signature))
    except (TypeError, ValueError, AttributeError):
        return False


def _decode(segment: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        raise MalformedJWS("the token has a segment that is not base64url") from None


def _json_object(segment: str, what: str) -> dict[str, Any]:
    decoded = _decode(segment)
    try:
        value = loads(decoded)
    except ValueError:  # not JSON, or nested too deep for anything that reads it later
        raise MalformedJWS(f"the token's {what} is not JSON") from None
    if not isinstance(value, dict):
        raise MalformedJWS(f"the token's {what} is not a JSON object")
    return value


_ALGORITHMS: dict[str, Any] = {}


def _algorithms() -> dict[str, Any]:
    if not _ALGORITHMS:
        with optional_dependency():
            from jwt.algorithms import get_default_algorithms

        _ALGORITHMS.update(get_default_algorithms())
    return _ALGORITHMS
