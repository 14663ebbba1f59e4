"""The deployment examples (examples/deploy/) as they ship: haproxy.cfg and nginx.conf each in
front of the two `mcpkit run --redis` workers of the `cluster` fixture (sharing a real
redis-server): one session's requests land on both workers and are served, and a tool's SSE
progress arrives as it is made, not buffered until the answer. k8s.yaml is read and checked
for what a scale-out deployment needs. The 3-worker cluster behind haproxy serves one
session from all three. A worker SIGTERMed while busy (a rolling deploy): haproxy's
readiness check takes it out of the rotation, and behind nginx (no active checks) every new
client is still served."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from mcpkit import Client
from mcpkit.cli import build_parser
from tests.http.servers import status_becomes, unused_port, wait_until_listening
from tests.peers import INSTALL, NODE_BIN, NODE_DIR
from tests.scaleout.conftest import ROOT, Cluster, mcpkit_run, processes
from tests.scaleout.test_resumption import events, open_session
from tests.scaleout.yaml_subset import load_all

DEPLOY = ROOT / "examples" / "deploy"
PAUSE = 1.0  # between two progress steps of the streamed tool call (3 steps)


def system_binary(name: str) -> str:
    """The Debian-installed `name`; skipped when missing, failed under CI (which installs it)."""
    found = shutil.which(name) or (
        f"/usr/sbin/{name}" if os.path.exists(f"/usr/sbin/{name}") else None
    )
    if found is None:
        message = f"{name} is not installed; run `bash scripts/system-packages.sh`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


@contextlib.contextmanager
def running(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run `argv` (a proxy listening on `port`) until the block ends; yields its /mcp URL."""
    process = subprocess.Popen(argv, env=env)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"{argv[0]} did not start")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@contextlib.contextmanager
def example_haproxy(cluster: Cluster, stats: Path | None = None) -> Iterator[str]:
    """examples/deploy/haproxy.cfg as it is, its addresses given in the environment; with
    `stats`, a second configuration file adds haproxy's admin socket there."""
    port = unused_port()
    env = dict(os.environ, MCP_BIND=f"127.0.0.1:{port}")
    for number, worker in enumerate(cluster.workers, 1):
        env[f"MCP_WORKER{number}"] = f"127.0.0.1:{port_of(worker)}"
    argv = [system_binary("haproxy"), "-db", "-f", str(DEPLOY / "haproxy.cfg")]
    if stats is not None:
        extra = stats.with_suffix(".cfg")
        extra.write_text(f"global\n    stats socket {stats} mode 600 level admin\n")
        argv += ["-f", str(extra)]
    with running(argv, port, env) as url:
        yield url


def haproxy_says(stats: Path, command: str) -> str:
    """What haproxy's admin socket answers to `command`."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(stats))
        sock.sendall(command.encode() + b"\n")
        return b"".join(iter(lambda: sock.recv(65536), b"")).decode()


def server_status(stats: Path, server: str) -> str:
    """UP, DOWN, ... of `server` in the `workers` backend (`show stat`'s CSV)."""
    text = haproxy_says(stats, "show stat").lstrip("# ")
    rows = list(csv.DictReader(io.StringIO(text)))
    [row] = [r for r in rows if r["pxname"] == "workers" and r["svname"] == server]
    return row["status"]


@contextlib.contextmanager
def example_nginx(cluster: Cluster, folder: Path) -> Iterator[str]:
    """examples/deploy/nginx.conf with its three addresses replaced by the test's ports."""
    port = unused_port()
    text = (DEPLOY / "nginx.conf").read_text()
    addresses = {"127.0.0.1:8000": f"127.0.0.1:{port}"}
    for number, worker in enumerate(cluster.workers, 1):
        addresses[f"127.0.0.1:800{number}"] = f"127.0.0.1:{port_of(worker)}"
    lines = text.splitlines(keepends=True)
    for example, real in addresses.items():
        uses = [i for i, line in enumerate(lines) if example in line.split("#", 1)[0]]
        assert len(uses) == 1, example  # the file's promise: each address is set once
        lines[uses[0]] = lines[uses[0]].replace(example, real)
    config = folder / "nginx.conf"
    config.write_text("".join(lines))
    globals_ = f"daemon off; pid {folder / 'nginx.pid'}; error_log stderr;"
    argv = [system_binary("nginx"), "-e", "stderr", "-c", str(config), "-g", globals_]
    with running(argv, port) as url:
        yield url


def call(name: str, ident: int, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


async def served_by(url: str, calls: int) -> set[str]:
    """One session through `url`: the worker pids that answered `calls` tools/call."""
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, url)
        pids = set()
        for ident in range(2, 2 + calls):
            answer = await http.post(url, json=call("which_worker", ident), headers=headers)
            assert answer.status_code == 200
            pids.add(answer.json()["result"]["content"][0]["text"])
        assert (await http.delete(url, headers=headers)).status_code == 200
    return pids


async def progress_then_answer(url: str) -> tuple[float, float]:
    """A tool call streaming 3 progress steps PAUSE s apart through `url`: when the first
    progress event and when the answer arrived (monotonic seconds)."""
    async with httpx.AsyncClient(timeout=30) as http:
        headers = await open_session(http, url)
        message = call("steps", 2, {"count": 3, "pause": PAUSE})
        message["params"]["_meta"] = {"progressToken": "p"}
        first = answered = 0.0
        async with http.stream("POST", url, json=message, headers=headers) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            buffer = ""
            async for chunk in response.aiter_text():
                buffer += chunk
                seen = [data for _, data in events(buffer) if data is not None]
                if seen and not first:
                    assert seen[0]["params"]["progress"] == 1
                    first = time.monotonic()
                if seen and "result" in seen[-1]:
                    answered = time.monotonic()
        assert (await http.delete(url, headers=headers)).status_code == 200
    assert first and answered, buffer
    return first, answered


async def check_proxy(url: str, cluster: Cluster) -> None:
    assert len(await served_by(url, 4)) == len(cluster.workers)
    first, answered = await progress_then_answer(url)
    # The worker makes the first step 3 * PAUSE s before its answer; a proxy buffering the
    # stream would hand both over together.
    assert answered - first > PAUSE


async def test_haproxy_example_serves_one_session_on_both_workers_and_streams(
    cluster: Cluster,
) -> None:
    with example_haproxy(cluster) as url:
        await check_proxy(url, cluster)


async def test_nginx_example_serves_one_session_on_both_workers_and_streams(
    cluster: Cluster, tmp_path: Path
) -> None:
    with example_nginx(cluster, tmp_path) as url:
        await check_proxy(url, cluster)


async def held_call(url: str, headers: dict[str, str], started: asyncio.Event) -> str:
    """A call of `steps` (20 steps, 0.5 s apart) on the worker at `url`, `started` set at its
    first progress event; its answer's text."""
    message = call("steps", 2, {"count": 20, "pause": 0.5})
    message["params"]["_meta"] = {"progressToken": "p"}
    buffer = ""
    async with (
        httpx.AsyncClient(timeout=60) as http,
        http.stream("POST", url, json=message, headers=headers) as response,
    ):
        async for chunk in response.aiter_text():
            buffer += chunk
            if any(data is not None for _, data in events(buffer)):
                started.set()
    [data] = [data for _, data in events(buffer) if data is not None and "result" in data]
    return str(data["result"]["content"][0]["text"])


@contextlib.contextmanager
def two_workers(redis_url: str) -> Iterator[tuple[Cluster, list[subprocess.Popen[bytes]]]]:
    """Two workers of their own (a test stops one), answering; the cluster and the processes."""
    ports = [unused_port(), unused_port()]
    argvs = [mcpkit_run(port, redis_url, "--drain-timeout", "30") for port in ports]
    with processes(argvs) as started:
        urls = tuple(f"http://127.0.0.1:{port}/mcp" for port in ports)
        for worker in urls:
            wait_until_listening(worker, 20)
        yield Cluster("", urls, redis_url), started


async def drain_busy(url: str, cluster: Cluster, first: subprocess.Popen[bytes]) -> Any:
    """SIGTERM to the cluster's first worker while it serves a call (of a session opened
    through `url`), as a rolling deploy does; returns once it drains (readiness 503), with
    the call, which it finishes meanwhile."""
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, url)
    started = asyncio.Event()
    held = asyncio.ensure_future(held_call(cluster.workers[0], headers, started))
    await asyncio.wait_for(started.wait(), 30)
    first.terminate()
    await status_becomes(cluster.workers[0].replace("/mcp", "/readyz"), 503)
    return held


async def new_clients_land_on(url: str, count: int) -> set[int]:
    """`count` new clients through `url`, each connecting and calling: who answered."""
    pids = set()
    for _ in range(count):
        async with Client(url, mode="handshake", timeout=30) as client:
            pids.add(int((await client.call_tool("which_worker", {})).content[0].text))
    return pids


async def test_haproxy_example_sends_no_new_session_to_a_draining_worker(
    redis_url: str, tmp_path: Path
) -> None:
    """haproxy's readiness check takes a draining worker out of the rotation within about
    two seconds: new clients land on the other worker only."""
    stats = tmp_path / "haproxy.sock"
    with (
        two_workers(redis_url) as (cluster, (first, second)),
        example_haproxy(cluster, stats) as url,
    ):
        held = await drain_busy(url, cluster, first)
        deadline = time.monotonic() + 10
        while (status := server_status(stats, "w1")) != "DOWN":
            assert time.monotonic() < deadline, f"haproxy still has w1 {status}"
            await asyncio.sleep(0.1)
        assert await new_clients_land_on(url, 6) == {second.pid}
        assert (await asyncio.wait_for(held, 60)) == f"20 steps on {first.pid}"
    assert first.wait(30) in (0, -signal.SIGTERM)


async def test_nginx_example_serves_every_new_client_while_a_worker_drains(
    redis_url: str, tmp_path: Path
) -> None:
    """Open-source nginx checks no readiness: the draining worker still gets new clients,
    and serves them (their sessions live in Redis) -- none fails to connect."""
    with (
        two_workers(redis_url) as (cluster, (first, second)),
        example_nginx(cluster, tmp_path) as url,
    ):
        held = await drain_busy(url, cluster, first)
        assert await new_clients_land_on(url, 9) <= {first.pid, second.pid}
        assert (await asyncio.wait_for(held, 60)) == f"20 steps on {first.pid}"
    assert first.wait(30) in (0, -signal.SIGTERM)


async def test_three_workers_behind_haproxy_share_one_session(cluster3: Cluster) -> None:
    assert len(await served_by(cluster3.url, 6)) == 3


def test_k8s_example_runs_workers_on_redis_with_the_sealing_keys_from_a_secret() -> None:
    documents = load_all((DEPLOY / "k8s.yaml").read_text())
    kinds = [(d["kind"], d["metadata"]["name"]) for d in documents]
    assert ("Deployment", "mcp") in kinds and ("Service", "mcp") in kinds
    [deployment] = [
        d for d in documents if d["kind"] == "Deployment" and d["metadata"]["name"] == "mcp"
    ]
    assert deployment["spec"]["replicas"] > 1
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    command = container["command"]
    assert command[:2] == ["mcpkit", "run"] and "--redis" in command
    args = build_parser().parse_args(command[1:])  # the command line mcpkit accepts
    assert args.transport == "http" and args.redis.startswith("redis://")
    assert args.host == "0.0.0.0"  # reachable from the Service, not only inside the pod
    [keys] = [e for e in container["env"] if e["name"] == "MCPKIT_REQUEST_STATE_KEYS"]
    assert set(keys) == {"name", "valueFrom"} and "secretKeyRef" in keys["valueFrom"]
    [port] = container["ports"]
    assert port["containerPort"] == args.port
    for probe, path in (("readinessProbe", args.ready_path), ("livenessProbe", args.health_path)):
        assert container[probe]["httpGet"]["port"] in (port["name"], args.port)
        assert container[probe]["httpGet"]["path"] == path  # what mcpkit run serves
    service = next(
        d for d in documents if d["kind"] == "Service" and d["metadata"]["name"] == "mcp"
    )
    assert "sessionAffinity" not in service["spec"]  # no stickiness needed
    redis_host = urlsplit(args.redis).hostname
    assert any(d["kind"] == "Service" and d["metadata"]["name"] == redis_host for d in documents)


def test_yaml_subset_reads_the_manifest_as_a_full_yaml_parser_does() -> None:
    """The small loader against the npm `yaml` parser (installed with the Node peers)."""
    parser = NODE_DIR / "node_modules" / "yaml"
    if not parser.exists():
        message = f"the npm yaml package is not installed; run `{INSTALL}`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    script = (
        f"const yaml = require({json.dumps(str(parser))});"
        "const text = require('fs').readFileSync(0, 'utf8');"
        "console.log(JSON.stringify(yaml.parseAllDocuments(text).map((d) => d.toJS())));"
    )
    text = (DEPLOY / "k8s.yaml").read_text()
    done = subprocess.run(
        [str(NODE_BIN / "node"), "-e", script],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == load_all(text)


def test_yaml_subset_refuses_what_it_cannot_read() -> None:
    """The k8s check reads the file with a small loader: YAML outside it fails loudly."""
    for text in ("a: [1, 2]\n", "a: {b: 1}\n", "a: |\n  text\n", 'a: "open\n'):
        with pytest.raises(ValueError):
            load_all(text)
    assert load_all("a:\n- 1\n- 'x # y'  # note\nb: true\n---\nc: ~\n") == [
        {"a": [1, "x # y"], "b": True},
        {"c": None},
    ]
