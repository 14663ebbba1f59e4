"""End-to-end measurement in a child process: one system's own client against its own server.

    <client python> bench/e2e.py SYSTEM WORKLOAD [options] -- SERVER_ARGV...

run.py starts this with the interpreter that holds the system's client (the current venv
for mcpkit and raw, bench/.venv-official for the official SDK), so each client runs with
only its own package and every measurement starts from a fresh process. It prints one
JSON object on stdout. Clients:

  official  mcp.client.stdio.stdio_client + mcp.ClientSession (mcp==2.3.0)
  mcpkit    mcpkit.Client
  raw       the shared minimal driver (the raw system has no client of its own), so its
            end-to-end figures are driver.measure() in a fresh process
"""

import argparse
import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from common import (
    ORDER_ARGUMENTS,
    ORDER_RECEIPT,
    TOOL_COUNT,
    Settings,
    blocks_summary,
    latency_summary,
    throughput,
)

Call = Callable[[str], Awaitable[str]]


@dataclass(frozen=True)
class Session:
    """What the workloads need from a connected client, whichever library it is."""

    echo: Call  # echo(text) -> the text of the answer
    order: Callable[[dict], Awaitable[Any]]  # order(arguments) -> structured content
    list_tools: Callable[[], Awaitable[int]]  # tools/list (one page) -> number of tools


@asynccontextmanager
async def connect_official(argv: list[str]) -> AsyncIterator[Session]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def echo(text: str) -> str:
            result = await session.call_tool("echo", {"text": text})
            return result.content[0].text

        async def order(arguments: dict) -> Any:
            return (await session.call_tool("order", arguments)).structured_content

        async def list_tools() -> int:
            result = await session.list_tools()
            return -1 if result.next_cursor else len(result.tools)

        yield Session(echo, order, list_tools)


@asynccontextmanager
async def connect_mcpkit(argv: list[str]) -> AsyncIterator[Session]:
    from mcpkit import Client

    async with Client(argv) as client:

        async def echo(text: str) -> str:
            result = await client.call_tool("echo", {"text": text})
            return result.content[0].text

        async def order(arguments: dict) -> Any:
            return (await client.call_tool("order", arguments)).structured_content

        async def list_tools() -> int:
            result = await client.list_tools()
            return -1 if result.next_cursor else len(result.tools)

        yield Session(echo, order, list_tools)


CONNECT = {"official": connect_official, "mcpkit": connect_mcpkit}


async def checked(session: Session, text: str) -> None:
    echoed = await session.echo(text)
    if echoed != text:
        raise RuntimeError(f"echo returned {echoed!r}, expected {text!r}")


async def sequential(connect, argv: list[str], settings: Settings) -> dict:
    async with connect(argv) as session:
        call = session.echo
        for _ in range(settings.warmup):
            await checked(session, settings.text)
        clock = time.perf_counter_ns
        latencies, done = [], []
        begin = clock()
        for _ in range(settings.calls):
            start = clock()
            echoed = await call(settings.text)
            end = clock()
            latencies.append(end - start)
            done.append(end)
            if echoed != settings.text:
                raise RuntimeError(f"echo returned {echoed!r}")
        return latency_summary(latencies, begin, done)


async def pipelined(connect, argv: list[str], settings: Settings) -> dict:
    """`settings.depth` concurrent tasks share the calls, so that many are in flight."""
    async with connect(argv) as session:
        for _ in range(settings.warmup):
            await checked(session, settings.text)
        remaining = settings.pipelined_calls
        done: list[int] = []

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await checked(session, settings.text)
                done.append(time.perf_counter_ns())

        begin = time.perf_counter_ns()
        await asyncio.gather(*(worker() for _ in range(settings.depth)))
        return throughput(begin, done)


async def cold_start(connect, argv: list[str], settings: Settings) -> dict:
    """Spawn -> initialize done, timed around the client's own connect. One unmeasured
    connect first, so lazy imports inside the client library are not counted."""
    async with connect(argv) as session:
        await checked(session, settings.text)
    samples = []
    for _ in range(settings.spawns):
        begin = time.perf_counter()
        async with connect(argv) as session:
            samples.append((time.perf_counter() - begin) * 1000)
            await checked(session, settings.text)
    return {"start_ms": samples}


BLOCKS = 10  # W4: order and echo calls alternate in this many blocks each (as driver.py)


async def timed(calls: int, request: Callable[[], Awaitable[Any]], expected: Any) -> tuple:
    """`calls` requests one after another: start time, latencies, completion times (ns)."""
    clock = time.perf_counter_ns
    latencies, done = [], []
    begin = clock()
    for _ in range(calls):
        start = clock()
        answer = await request()
        end = clock()
        latencies.append(end - start)
        done.append(end)
        if answer != expected:
            raise RuntimeError(f"got {answer!r}, expected {expected!r}")
    return begin, latencies, done


async def models(connect, argv: list[str], settings: Settings) -> dict:
    """W4: `order` and echo calls in alternate blocks (the client validates the receipt
    against the tool's outputSchema, listing the tools once to learn it)."""
    async with connect(argv) as session:
        text = settings.text
        order = (lambda: session.order(ORDER_ARGUMENTS), ORDER_RECEIPT)
        echo = (lambda: session.echo(text), text)
        for request, expected in (order, echo):
            await timed(settings.model_warmup, request, expected)
        blocks: dict[str, list] = {"order": [], "echo": []}
        per_block = max(settings.model_calls // BLOCKS, 1)
        for _ in range(BLOCKS):
            blocks["order"].append(await timed(per_block, *order))
            blocks["echo"].append(await timed(per_block, *echo))
        result = blocks_summary(blocks["order"])
        echo_result = blocks_summary(blocks["echo"])
        result["echo_p50_us"] = echo_result["p50_us"]
        result["echo_calls_per_s"] = echo_result["calls_per_s"]
        return result


async def listing(connect, argv: list[str], settings: Settings) -> dict:
    """W5: sequential tools/list (one page of TOOL_COUNT tools, parsed by the client)."""
    async with connect(argv) as session:
        await timed(settings.list_warmup, session.list_tools, TOOL_COUNT)
        begin, latencies, done = await timed(settings.list_calls, session.list_tools, TOOL_COUNT)
        return latency_summary(latencies, begin, done)


WORKLOADS = {"W1": sequential, "W2": pipelined, "W3": cold_start, "W4": models, "W5": listing}


async def run(system: str, workload: str, argv: list[str], settings: Settings) -> dict:
    if system == "raw":
        from driver import measure

        result = await measure(argv, workload, settings)
        return {"start_ms": result["start_ms"]} if workload == "W3" else result
    return await WORKLOADS[workload](CONNECT[system], argv, settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system", choices=["mcpkit", "official", "raw"])
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("--settings", default="{}", help="JSON object of Settings fields")
    parser.add_argument("server_argv", nargs="+")
    args = parser.parse_args()
    settings = Settings(**json.loads(args.settings))
    result = asyncio.run(run(args.system, args.workload, args.server_argv, settings))
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
