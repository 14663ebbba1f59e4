"""What checking a bearer token costs per request: 2025-11-25 stateful JSON tools/call add over
Streamable HTTP (uvicorn, one worker, as W8), with and without authorization.

    python bench/auth_cost.py [--reps 5] [--calls 16000] [--concurrency 32] [--quick]

Rows (each a fresh server process per repetition, row order rotated between repetitions):
  mcpkit json               no authorization
  mcpkit json+jwt           auth=BearerAuth(JWTVerifier(keys=...)): RS256 access tokens, one
                            per connection; a verified token is remembered (bounded LRU keyed by
                            its SHA-256, until its expiry), so the signature is checked once
  mcpkit json+jwt-verify    the same with no memory: every request's signature checked against
                            the cached key (the cost a token seen once pays)
  official json             the official SDK (mcp 2.3.0), the same session and JSON answers
  official json+jwt-verify  its bearer middleware with a PyJWT verifier (it has no token memory)

The ratios compare each protected row with the same system's unprotected row within each
repetition (geometric mean over repetitions), so the drift of a shared machine cancels.
Issue 14's target: mcpkit json+jwt costs well under 10% more than mcpkit json at 32 concurrent
(read as at most 7%).
"""

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

import jwt
from bench_jwt import ISSUER, SCOPE, audience
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from http_bench import (
    Server,
    check_stateful_add,
    load,
    stateful_add_bytes,
    timed_calls,
)
from report import _render
from systems import build

ROWS = [
    ("mcpkit", "json"),
    ("mcpkit", "json+jwt"),
    ("mcpkit", "json+jwt-verify"),
    ("official", "json"),
    ("official", "json+jwt-verify"),
]


def make_key() -> rsa.RSAPrivateKey:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    os.environ["BENCH_JWT_PUBLIC_PEM"] = public.decode()  # the servers inherit it
    return key


def token_headers(key: rsa.RSAPrivateKey, port: int):
    """headers_for(i): connection i's own RS256 access token, valid for an hour."""
    now = int(time.time())

    def headers_for(i: int) -> dict[str, str]:
        claims = {
            "iss": ISSUER,
            "aud": audience(port),
            "sub": f"user-{i}",
            "client_id": "bench",
            "scope": SCOPE,
            "iat": now,
            "exp": now + 3600,
        }
        return {"Authorization": "Bearer " + jwt.encode(claims, key, algorithm="RS256")}

    return headers_for


async def measure(system, mode: str, key, concurrency: int, calls: int, warmup: int, stderr):
    async with Server(system, mode, stderr, "{}_add_http.py") as server:
        protected = "jwt" in mode
        state = await load(
            server.port,
            False,
            concurrency,
            calls,
            warmup,
            call=stateful_add_bytes,
            check=check_stateful_add,
            headers_for=token_headers(key, server.port) if protected else None,
        )
        return await timed_calls(server, state)


def paired(samples: dict, a: tuple, b: tuple, metric: str) -> float | None:
    ours, base = samples.get(a), samples.get(b)
    if not ours or not base or len(ours) != len(base):
        return None
    return statistics.geometric_mean(
        [x[metric] / y[metric] for x, y in zip(ours, base, strict=True)]
    )


def report(samples: dict, rows: list[tuple[str, str]]) -> list[str]:
    table = []
    for name, mode in rows:
        got = samples.get((name, mode))
        if not got:
            table.append([f"  {name} {mode}", "no samples"])
            continue
        med = {k: statistics.median(s[k] for s in got) for k in got[0]}
        base = (name, "json")
        cost = paired(samples, base, (name, mode), "calls_per_s")
        cpu = paired(samples, (name, mode), base, "server_cpu_us")
        table.append(
            [
                f"  {name} {mode}",
                f"{med['p50_us']:,.0f}",
                f"{med['p99_us']:,.0f}",
                f"{med['calls_per_s']:,.0f}",
                f"{med['server_cpu_us']:,.1f}",
                "-" if mode == "json" or cost is None else f"{(cost - 1) * 100:+.1f}%",
                "-" if mode == "json" or cpu is None else f"{(cpu - 1) * 100:+.1f}%",
            ]
        )
    headers = ["", "p50 us", "p99 us", "calls/s", "srv CPU us/call", "time/call", "CPU/call"]
    lines = _render(headers, table)
    lines.append(
        "  (time/call and CPU/call: the protected row against the same system's json row, paired"
        " per repetition; + = costs more)"
    )
    mine = paired(samples, ("mcpkit", "json"), ("mcpkit", "json+jwt"), "calls_per_s")
    if mine is not None:
        verdict = "PASS" if mine - 1 <= 0.07 else "FAIL"
        lines.append(
            "target: mcpkit json+jwt adds well under 10% (<= 7%) per call:"
            f" {(mine - 1) * 100:+.1f}% {verdict}"
        )
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--calls", type=int, default=16000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--quick", action="store_true", help="2 repetitions of 2,000 calls")
    args = parser.parse_args()
    reps, calls = (2, 2000) if args.quick else (args.reps, args.calls)
    systems = {s.name: s for s in build(("mcpkit", "official"))}
    key = make_key()
    samples: dict[tuple[str, str], list[dict]] = {}
    logs = Path(__file__).resolve().parent / "results" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / "auth_cost.stderr").open("ab") as stderr:
        for rep in range(reps):
            order = ROWS[rep % len(ROWS) :] + ROWS[: rep % len(ROWS)]
            for name, mode in order:
                sample = await measure(
                    systems[name], mode, key, args.concurrency, calls, 400, stderr
                )
                samples.setdefault((name, mode), []).append(sample)
                print(
                    f"[{rep + 1}/{reps}] {name} {mode:16} {sample['calls_per_s']:8,.0f} calls/s"
                    f" {sample['server_cpu_us']:6.1f} us CPU/call",
                    flush=True,
                )
    print(
        f"\nstateful JSON tools/call add over HTTP, {args.concurrency} concurrent, {calls:,} calls,"
        f" {reps} repetitions (medians)"
    )
    print("\n".join(report(samples, ROWS)))


if __name__ == "__main__":
    asyncio.run(main())
