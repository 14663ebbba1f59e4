"""Who the user at the consent page is: a callback, and a password store for development.

The server calls `options.authenticate(LoginAttempt)` twice in a flow: when it shows the
consent page (no username or password yet: a callback that recognises the user from the
request, say a session cookie or a header set by a trusted proxy, returns the subject and
the page asks for no password), and when the form comes back with what the user typed. It
returns the subject (the `sub` of the tokens) or None.

`PasswordUsers` is such a callback over a fixed table of users, for development and small
teams: passwords are kept as scrypt hashes (`hash_password`), checked off the event loop,
compared in constant time, and an unknown name costs as much as a wrong password.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

_N, _R, _P = 2**14, 8, 1  # scrypt cost: ~16 MiB and tens of milliseconds per check


@dataclass(frozen=True)
class LoginAttempt:
    """`headers`: the request's headers (lower-case names); `username`/`password`: what the
    user typed, or None when the page is first shown."""

    headers: Mapping[str, str]
    username: str | None = None
    password: str | None = None


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """`password` as "scrypt$<salt>$<hash>" (base64), as `PasswordUsers` keeps it."""
    salt = salt or secrets.token_bytes(16)
    derived = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    encode = base64.urlsafe_b64encode
    return f"scrypt${encode(salt).decode()}${encode(derived).decode()}"


def check_password(password: str, stored: str) -> bool:
    """Whether `password` matches a `hash_password` result (constant-time compare)."""
    try:
        scheme, salt, expected = stored.split("$")
        salt_bytes = base64.urlsafe_b64decode(salt)
        expected_bytes = base64.urlsafe_b64decode(expected)
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    derived = hashlib.scrypt(password.encode(), salt=salt_bytes, n=_N, r=_R, p=_P, dklen=32)
    return hmac.compare_digest(derived, expected_bytes)


class PasswordUsers:
    """An `authenticate` callback over username -> `hash_password` hash; the subject is the
    username. `PasswordUsers.from_passwords({...})` hashes plain passwords for you."""

    def __init__(self, hashes: Mapping[str, str]) -> None:
        self._hashes = dict(hashes)
        self._decoy = hash_password(secrets.token_urlsafe(16))

    @classmethod
    def from_passwords(cls, passwords: Mapping[str, str]) -> PasswordUsers:
        """Users from plain passwords (hashed here, then forgotten)."""
        return cls({name: hash_password(password) for name, password in passwords.items()})

    async def __call__(self, attempt: LoginAttempt) -> str | None:
        if attempt.username is None or attempt.password is None:
            return None
        stored = self._hashes.get(attempt.username, self._decoy)
        ok = await asyncio.to_thread(check_password, attempt.password, stored)
        return attempt.username if ok and attempt.username in self._hashes else None
