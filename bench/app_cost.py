"""The HTTP app's own cost per tools/call, in process: no sockets, no uvicorn, no kernel.

W8 measures whole HTTP calls through uvicorn, where the app is about 20 us of the ~55 us a
call costs on this machine; on a loaded machine that signal drowns. This program drives the
ASGI app directly (the same scope/receive/send uvicorn would give it) with a 2026-07-28
`tools/call` and with a 2025-11-25 stateful JSON `tools/call`, one at a time and 32 at once,
and prints CPU microseconds per call for each and their ratio. `stateful+jwt` is the stateful
path behind `auth=BearerAuth(JWTVerifier(...))` with an RS256 token (verified once, then
remembered, as in a deployment), against which the cost of authorization reads off. Run it under
`valgrind --tool=callgrind --callgrind-out-file=/dev/null` with `--calls 2000` to get
instruction counts that do not depend on what else the machine does (the totals cover the
setup too, so compare runs with the same counts).

    .venv/bin/python bench/app_cost.py                 # both paths, c1 and c32
    .venv/bin/python bench/app_cost.py --paths per-request --concurrency 1 --calls 2000
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import orjson

from mcpkit import Server

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
BASE_HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]


def make_app(auth: Any = None) -> Any:
    server = Server("bench")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server.http_app(auth=auth) if auth is not None else server.http_app()


def jwt_auth() -> tuple[Any, tuple[bytes, bytes]]:
    """A BearerAuth checking RS256 tokens for the app, and the Authorization header of one."""
    import jwt
    from cryptography.hazmat.primitives.asymmetric import rsa

    from mcpkit.auth import BearerAuth, JWTVerifier

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    resource, issuer, now = (
        "http://127.0.0.1:8000/mcp",
        "https://login.bench.example",
        int(time.time()),
    )
    verifier = JWTVerifier(issuer=issuer, audience=resource, keys=[key.public_key()])
    claims = {"iss": issuer, "aud": resource, "sub": "u", "scope": "mcp", "iat": now}
    token = jwt.encode({**claims, "exp": now + 3600}, key, algorithm="RS256")
    auth = BearerAuth(verifier=verifier, resource=resource, required_scopes={"mcp"})
    return auth, (b"authorization", f"Bearer {token}".encode())


async def post(app: Any, headers: list[tuple[bytes, bytes]], body: bytes) -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "query_string": b"",
    }
    sent = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client stays: nothing more arrives
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(chunks)


def call_body(request_id: int, per_request: bool) -> bytes:
    params: dict[str, Any] = {"name": "add", "arguments": {"a": request_id, "b": 1}}
    if per_request:
        params["_meta"] = MODERN_META
    return orjson.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    )


async def open_session(app: Any, extra: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    status, _ = await post(app, [*BASE_HEADERS, *extra], orjson.dumps(init))
    assert status == 200
    session = next(iter(app.sessions.sessions))
    headers = [
        *BASE_HEADERS,
        *extra,
        (b"mcp-session-id", session.encode()),
        (b"mcp-protocol-version", b"2025-11-25"),
    ]
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert (await post(app, headers, note))[0] == 202
    return headers


async def measure(path: str, concurrency: int, calls: int) -> float:
    """CPU microseconds per call (process time over `calls` calls)."""
    auth, authorization = jwt_auth() if path == "stateful+jwt" else (None, None)
    app = make_app(auth)
    await app.start()
    if path == "per-request":
        headers = [
            *BASE_HEADERS,
            (b"mcp-protocol-version", b"2026-07-28"),
            (b"mcp-method", b"tools/call"),
            (b"mcp-name", b"add"),
        ]
    else:
        headers = await open_session(app, [authorization] if authorization else [])
    per_request = path == "per-request"
    per_worker = calls // concurrency

    async def worker(offset: int) -> None:
        for i in range(per_worker):
            status, body = await post(app, headers, call_body(offset + i + 1, per_request))
            assert status == 200, body

    await asyncio.gather(*(worker(w * per_worker) for w in range(concurrency)))  # warm up
    started = time.process_time()
    await asyncio.gather(*(worker(w * per_worker) for w in range(concurrency)))
    spent = time.process_time() - started
    await app.stop()
    return spent / (per_worker * concurrency) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--paths", default="per-request,stateful")
    parser.add_argument("--concurrency", default="1,32")
    args = parser.parse_args()
    paths = args.paths.split(",")
    levels = [int(c) for c in args.concurrency.split(",")]
    for level in levels:
        samples: dict[str, list[float]] = {path: [] for path in paths}
        for _ in range(args.reps):  # interleaved: both paths see the same machine
            for path in paths:
                samples[path].append(asyncio.run(measure(path, level, args.calls)))
        line = [f"c{level}"]
        for path in paths:
            line.append(f"{path} {statistics.median(samples[path]):.1f} us/call")
        if len(paths) == 2:
            ratios = [b / a for a, b in zip(samples[paths[0]], samples[paths[1]], strict=True)]
            line.append(f"{paths[1]}/{paths[0]} {statistics.median(ratios):.2f}x (paired)")
        print("  ".join(line))


if __name__ == "__main__":
    main()
