"""The sealed `requestState` of 2026-07-28 multi round-trip requests.

A server that answers `input_required` hands the client an opaque `requestState`, and the
client echoes it in its retry. Whatever we put there comes back from an untrusted party, so
it is sealed with AES-256-GCM (confidential and integrity-protected) and bound, through the
associated data, to the request it belongs to: the method, a digest of its arguments and the
authenticated principal when there is one. The expiry travels inside the sealed payload.

Keys are secrets of at least 16 bytes (bytes, or text); the AES key is derived from each.
Several workers share keys through `$MCPKIT_REQUEST_STATE_KEYS` (comma-separated) or the
server's `request_state_keys=`; the first key seals, all of them open, so a key is rotated by
putting the new one first and dropping the old one after the TTL. Without keys a random key
is made per process (fine for one process; states do not survive a restart).

Token: base64url(version 1 byte | key id 4 bytes | nonce 12 bytes | ciphertext + tag).
Every failure to open (not base64, unknown key, tampered, another request's, expired) is
the same `InvalidParams` (-32602), never a crash, and says no more than it must.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from mcpkit.errors import InvalidParams
from mcpkit.protocol.jsonrpc import dumps

ENV_KEYS = "MCPKIT_REQUEST_STATE_KEYS"
_VERSION = b"\x01"
_KEY_ID = 4
_NONCE = 12
_MIN_SECRET = 16
# Parameters that change between rounds of one request, left out of its digest.
_ROUND_PARAMS = ("_meta", "inputResponses", "requestState")


class RequestStateKeys:
    """The secrets that seal and open request states, newest first."""

    def __init__(self, keys: Sequence[bytes | str] | None = None) -> None:
        if keys is None:
            configured = os.environ.get(ENV_KEYS, "")
            keys = [k.strip() for k in configured.split(",") if k.strip()]
        if isinstance(keys, (bytes, str)):
            raise TypeError("request state keys: pass a list of secrets, newest first")
        secrets_ = [k.encode() if isinstance(k, str) else bytes(k) for k in keys]
        for secret in secrets_:
            if len(secret) < _MIN_SECRET:
                raise ValueError(
                    f"a request state key must be at least {_MIN_SECRET} bytes "
                    "(RequestStateKeys.generate() makes one)"
                )
        self.random = not secrets_
        if self.random:
            secrets_ = [os.urandom(32)]
        self.aes_keys = [
            hashlib.sha256(b"mcpkit request state v1\0" + s).digest() for s in secrets_
        ]
        self.ids = [hashlib.sha256(b"key id\0" + k).digest()[:_KEY_ID] for k in self.aes_keys]

    @staticmethod
    def generate() -> str:
        """A new random secret (urlsafe text, fit for the environment variable)."""
        return secrets.token_urlsafe(32)


class RequestStateCodec:
    """Seals payloads into tokens bound to a request, opens them back (see the module).
    `seal` and `open` take the time as `now`; `clock` (epoch seconds, default `time.time`) is
    where the server reads it (`Server(clock=...)`)."""

    def __init__(
        self,
        keys: RequestStateKeys | None = None,
        ttl: float = 600.0,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # only when used

        self.keys = keys if keys is not None else RequestStateKeys()
        self.ttl = ttl
        self.clock = clock
        self._ciphers = {
            i: AESGCM(k) for i, k in zip(self.keys.ids, self.keys.aes_keys, strict=True)
        }
        self._sealer = (self.keys.ids[0], self._ciphers[self.keys.ids[0]])

    def seal(
        self,
        payload: dict[str, Any],
        *,
        method: str,
        digest: str,
        principal: str | None,
        now: float,
    ) -> str:
        key_id, cipher = self._sealer
        nonce = os.urandom(_NONCE)
        plain = dumps({"exp": now + self.ttl, "p": payload})
        sealed = cipher.encrypt(nonce, plain, _bound(method, digest, principal))
        return base64.urlsafe_b64encode(_VERSION + key_id + nonce + sealed).rstrip(b"=").decode()

    def open(
        self, token: str, *, method: str, digest: str, principal: str | None, now: float
    ) -> dict[str, Any]:
        """The payload sealed in `token` for this request; InvalidParams if it is not one."""
        from cryptography.exceptions import InvalidTag

        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (ValueError, TypeError):
            raise _refused() from None
        if raw[:1] != _VERSION or len(raw) < 1 + _KEY_ID + _NONCE + 16:
            raise _refused()
        cipher = self._ciphers.get(raw[1 : 1 + _KEY_ID])
        if cipher is None:  # sealed with a key we no longer (or never) had
            raise _refused()
        nonce = raw[1 + _KEY_ID : 1 + _KEY_ID + _NONCE]
        try:
            plain = cipher.decrypt(
                nonce, raw[1 + _KEY_ID + _NONCE :], _bound(method, digest, principal)
            )
        except InvalidTag:
            raise _refused() from None
        sealed = orjson.loads(plain)
        if not now < sealed["exp"]:
            raise InvalidParams("Invalid params: requestState has expired; send the request again")
        payload: dict[str, Any] = sealed["p"]
        return payload


def request_digest(params: dict[str, Any]) -> str:
    """A digest of a request's arguments: the same in every round of one request."""
    kept = {k: v for k, v in params.items() if k not in _ROUND_PARAMS}
    return hashlib.sha256(dumps(kept, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _bound(method: str, digest: str, principal: str | None) -> bytes:
    # A principal is length-prefixed so no choice of strings can collide with another (or
    # with none at all).
    who = b"-" if principal is None else b"%d:%s" % (len(principal), principal.encode())
    return b"%s\0%s\0%s" % (method.encode(), digest.encode(), who)


def _refused() -> InvalidParams:
    return InvalidParams(
        "Invalid params: requestState is not one this server issued for this request "
        "(tampered, from another request or principal, or sealed with a retired key)"
    )
