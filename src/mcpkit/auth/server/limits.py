"""Rate limits: how often one address may register, and how often anyone may guess a secret.

Each limit is a token bucket per key (a client address, a client id, a username): `count`
tokens, refilled evenly over `seconds`. Registrations spend one each; client authentication
and sign-in spend one per *failure*, and while a bucket is empty every attempt on its key is
refused, the right one included (else guessing would go on until it succeeds). A refusal is
429 `temporarily_unavailable` with `Retry-After` (seconds until a token is back).

The client address is the ASGI scope's: behind a reverse proxy that is the proxy, unless the
ASGI server is told to trust its forwarded headers (uvicorn `--proxy-headers
--forwarded-allow-ips`). Buckets live in this process's memory, `max_tracked` of them at most
(the least recently touched leave first); several processes limit each on its own.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from mcpkit.auth.server.asgi import OAuthErrorResponse


@dataclass(frozen=True)
class Rate:
    """`count` per `seconds` (a burst of `count`, then one every `seconds / count`)."""

    count: int
    seconds: float


@dataclass(frozen=True)
class RateLimits:
    """The authorization server's rate limits; None switches one off. The defaults let a
    person and their applications through (a login registers once and signs in once) and
    stop a script: 300 registrations or wrong secrets in two seconds get 429 after the
    first few."""

    registrations_per_address: Rate | None = Rate(20, 60.0)
    failed_client_auth_per_client: Rate | None = Rate(10, 60.0)
    failed_client_auth_per_address: Rate | None = Rate(30, 60.0)
    failed_sign_ins_per_user: Rate | None = Rate(10, 300.0)
    failed_sign_ins_per_address: Rate | None = Rate(20, 300.0)
    max_tracked: int = 10_000


class RateLimited(OAuthErrorResponse):
    """429 temporarily_unavailable, with Retry-After."""

    def __init__(self, what: str, retry_after: int) -> None:
        header = (b"retry-after", str(retry_after).encode())
        description = f"too many {what}; retry after {retry_after} s"
        super().__init__("temporarily_unavailable", description, 429, [header])
        self.retry_after = retry_after


class Limiter:
    """Token buckets by (what, key) under one memory bound."""

    def __init__(self, max_tracked: int, clock: Callable[[], float]) -> None:
        self._max = max_tracked
        self._clock = clock
        self._buckets: OrderedDict[tuple[str, str], tuple[float, float]] = OrderedDict()

    def check(self, what: str, key: str | None, rate: Rate | None) -> None:
        """Raises RateLimited when the bucket of `key` is empty (spends nothing)."""
        if rate is None or key is None:
            return
        tokens = self._tokens(what, key, rate)
        if tokens < 1.0:
            wait = (1.0 - tokens) * rate.seconds / rate.count
            raise RateLimited(what, max(1, math.ceil(wait)))

    def spend(self, what: str, key: str | None, rate: Rate | None) -> None:
        """Takes one token from the bucket of `key` (never below empty)."""
        if rate is None or key is None:
            return
        tokens = self._tokens(what, key, rate)
        self._buckets[(what, key)] = (max(0.0, tokens - 1.0), self._clock())
        self._buckets.move_to_end((what, key))
        while len(self._buckets) > self._max:
            self._buckets.popitem(last=False)

    def take(self, what: str, key: str | None, rate: Rate | None) -> None:
        """`check`, then `spend`: for what counts whether it fails or not."""
        self.check(what, key, rate)
        self.spend(what, key, rate)

    def _tokens(self, what: str, key: str, rate: Rate) -> float:
        found = self._buckets.get((what, key))
        if found is None:
            return float(rate.count)
        tokens, at = found
        refill = max(0.0, self._clock() - at) * rate.count / rate.seconds
        return min(float(rate.count), tokens + refill)
