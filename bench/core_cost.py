"""What the sans-IO core costs per message, counted in instructions (callgrind), not time.

A client `Connection` and a server `Connection` joined in memory, no event loop, no transport:
the client sends `tools/call`, the server receives it, answers it, the client receives the
answer. One such round trip is four passes through the core (send_request, receive,
send_result, receive), every message's path. Two workloads:

- `handshake`: after initialize / notifications/initialized at 2025-11-25;
- `per-request`: a client speaking 2026-07-28 (`use_per_request`), every request carrying its
  envelope; the server connection stays NEW and serves each request on its own (as over stdio).

Instructions do not depend on the machine's load, so two versions of the core can be compared
on a busy machine. The figure is the difference of a long and a short run divided by the
difference in round trips, so interpreter start-up and imports cancel out. The garbage
collector is off while the round trips run and the hash seed is fixed: runs repeat exactly.

    .venv/bin/python bench/core_cost.py                  # callgrind, both workloads (~1 minute)
    .venv/bin/python bench/core_cost.py --src /tmp/old   # the same for a copy of src/ (mcpkit/...)
    .venv/bin/python bench/core_cost.py --run handshake --n 1000   # one plain run (no valgrind)
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from typing import Any

import callgrind

WORKLOADS = ("handshake", "per-request")
SHORT, LONG = 200, 2200
ARGUMENTS = {"name": "echo", "arguments": {"text": "hello"}}
RESULT = {"content": [{"type": "text", "text": "hello"}], "isError": False}


def pair(per_request: bool) -> tuple[Any, Any]:
    from mcpkit.protocol import Connection, ConnectionConfig

    client = Connection(ConnectionConfig(role="client", info={"name": "c", "version": "1"}))
    server = Connection(
        ConnectionConfig(
            role="server", info={"name": "s", "version": "1"}, capabilities={"tools": {}}
        )
    )
    if per_request:
        discovered = {"capabilities": {"tools": {}}}
        client.use_per_request("2026-07-28", discovered)
        return client, server
    client.start_initialize(now=0.0)
    move(client, server)
    move(server, client)
    move(client, server)
    return client, server


def move(source: Any, target: Any) -> list[Any]:
    events: list[Any] = []
    for out in source.data_to_send():
        events.extend(target.receive(out.data, 0.0))
    return events


def round_trips(client: Any, server: Any, n: int) -> None:
    for _ in range(n):
        client.send_request("tools/call", ARGUMENTS, now=0.0)
        for out in client.data_to_send():
            for event in server.receive(out.data, 0.0):
                server.send_result(event.id, RESULT)
        for out in server.data_to_send():
            [response] = client.receive(out.data, 0.0)
    assert type(response).__name__ == "ResponseReceived", response


def run(workload: str, n: int) -> None:
    client, server = pair(workload == "per-request")
    round_trips(client, server, 20)  # warm caches (method tables, stamps) out of the count
    gc.disable()  # a collection landing in one run and not the other would skew the difference
    started = time.perf_counter()
    round_trips(client, server, n)
    elapsed = time.perf_counter() - started
    print(f"{workload}: {n} round trips, {elapsed / n * 1e6:.1f} us each", file=sys.stderr)


def instructions(workload: str, n: int, src: str | None) -> int:
    return callgrind.instructions(__file__, ["--run", workload, "--n", str(n)], src)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", choices=WORKLOADS, help="one plain run, no valgrind")
    parser.add_argument("--n", type=int, default=LONG)
    parser.add_argument("--src", help="a directory holding the mcpkit package to measure")
    args = parser.parse_args()
    if args.run:
        run(args.run, args.n)
        return
    source = args.src or "installed mcpkit"
    print(f"instructions per tools/call round trip (4 passes through the core), {source}")
    for workload in WORKLOADS:
        short = instructions(workload, SHORT, args.src)
        long = instructions(workload, LONG, args.src)
        print(f"  {workload:10} {(long - short) / (LONG - SHORT):>10,.0f}")


if __name__ == "__main__":
    main()
