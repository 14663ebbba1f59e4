"""`RedisLease`: leases (stores/lease.py) in Redis, shared by every process using it.

Layout: `{prefix}lease:{key}`, a string holding the owner's token, expiring with the ttl.
`acquire` is SET NX PX; `renew` and `release` are scripts that compare the token and act
only when it is the caller's (a plain DEL would end the lease of whoever took it after the
caller's ttl passed). One round trip each.
"""

from __future__ import annotations

from typing import Any

from mcpkit.stores.lease import check_ttl
from mcpkit.stores.redis_outage import Outage

# KEYS: the lease. ARGV: the owner, the ttl (ms). 1 when it was the owner's (and renewed).
_RENEW = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""
# KEYS: the lease. ARGV: the owner. 1 when it was the owner's (and is gone).
_RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"""


class RedisLease:
    """Leases in the Redis of `client` (a `redis.asyncio.Redis`), keys under `prefix`.
    Every method raises StoreUnavailable when Redis fails (logged once per outage)."""

    def __init__(self, client: Any, prefix: str = "mcpkit:") -> None:
        self._client = client
        self._prefix = prefix + "lease:"
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._outage = Outage("the lease store")

    async def acquire(self, key: str, owner: str, ttl: float) -> bool:
        check_ttl(ttl)
        with self._outage:
            taken = await self._client.set(self._prefix + key, owner, nx=True, px=_ms(ttl))
        return bool(taken)

    async def renew(self, key: str, owner: str, ttl: float) -> bool:
        check_ttl(ttl)
        with self._outage:
            return bool(await self._renew(keys=[self._prefix + key], args=[owner, _ms(ttl)]))

    async def release(self, key: str, owner: str) -> bool:
        with self._outage:
            return bool(await self._release(keys=[self._prefix + key], args=[owner]))


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
