"""DPoP (RFC 9449): tokens bound to a key the client holds, proven on every request.

How this works: when the authorization server lists ES256 in `dpop_signing_alg_values_
supported`, the client makes (or reuses) a P-256 key and sends a proof with its token request:
a JWT of type `dpop+jwt` carrying the public key (`jwk`), signed with the private key, naming
the method (`htm`), the URL without query or fragment (`htu`), a fresh `jti` and `iat`. The
access token it gets back is bound to that key (`token_type` DPoP). Each request to the MCP
server then carries `Authorization: DPoP <token>` and a fresh proof that adds `ath`, the hash
of the token. A server that wants a nonce answers `use_dpop_nonce` with a `DPoP-Nonce` header
(the token endpoint with 400, the MCP server with 401); the proof is made again with it, once.
Nonces are remembered per origin; the key is kept with the tokens (in the token store).
"""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from urllib.parse import urlsplit, urlunsplit

from mcpkit._extras import optional_dependency

ALGORITHM = "ES256"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class DPoPKey:
    """A P-256 key for DPoP proofs, and the nonces servers gave it."""

    def __init__(self, pem: str | None = None) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.serialization import (
            Encoding,
            NoEncryption,
            PrivateFormat,
            load_pem_private_key,
        )

        if pem is None:
            key = ec.generate_private_key(ec.SECP256R1())
        else:
            loaded = load_pem_private_key(pem.encode(), password=None)
            if not isinstance(loaded, ec.EllipticCurvePrivateKey):
                raise ValueError("a DPoP key is an EC P-256 private key")
            key = loaded
        self.pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
        numbers = key.public_key().public_numbers()
        self.jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64(numbers.x.to_bytes(32, "big")),
            "y": _b64(numbers.y.to_bytes(32, "big")),
        }
        self._nonces: dict[str, str] = {}

    def __repr__(self) -> str:
        return "DPoPKey(P-256)"

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A fresh proof for one request (with the origin's last nonce, if any)."""
        with optional_dependency():
            import jwt

        claims: dict[str, object] = {
            "jti": str(uuid.uuid4()),
            "htm": method.upper(),
            "htu": _htu(url),
            "iat": int(time.time()),
        }
        nonce = self._nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
        headers = {"typ": "dpop+jwt", "jwk": self.jwk}
        return jwt.encode(claims, self.pem, algorithm=ALGORITHM, headers=headers)

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Note a server's `DPoP-Nonce`; True when it is new (a retry is worth it)."""
        if not nonce or self._nonces.get(_origin(url)) == nonce:
            return False
        self._nonces[_origin(url)] = nonce
        return True


def _htu(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
