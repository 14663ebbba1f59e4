"""Real parts for the scale-out tests: one `redis-server`, worker processes of
tests/scaleout/app.py sharing it (`mcpkit run ... --redis`, or the app run as a script with a
short idle timeout), and `haproxy` in front of two of them, round robin, no stickiness,
telling in an `X-Worker` response header which worker answered."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.http.servers import unused_port, wait_until_listening
from tests.peers import redis_server

APP = Path(__file__).with_name("app.py")
ROOT = Path(__file__).resolve().parents[2]
HAPROXY_CONFIG = """\
global
    maxconn 200
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
frontend mcp
    bind 127.0.0.1:{port}
    default_backend workers
backend workers
    balance roundrobin
    http-response set-header X-Worker %[srv_name]
{servers}
"""


@dataclass(frozen=True)
class Cluster:
    url: str  # haproxy's /mcp
    workers: tuple[str, ...]  # each worker's own /mcp
    redis: str


# Workers sharing a state must share the requestState sealing keys (a startup error else):
# every app and worker process of these tests reads this one from the environment.
REQUEST_STATE_KEY = "scaleout-tests-request-state-key-1"


@pytest.fixture(scope="package", autouse=True)
def request_state_keys() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCPKIT_REQUEST_STATE_KEYS", REQUEST_STATE_KEY)
        yield REQUEST_STATE_KEY


@pytest.fixture(scope="package")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@contextlib.contextmanager
def processes(argvs: list[list[str]]) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Start every command line, end them all (terminate, then wait) when the block ends;
    yields the processes, in order."""
    started = [subprocess.Popen(argv, cwd=ROOT) for argv in argvs]
    try:
        yield started
    finally:
        for process in started:
            process.terminate()
        for process in started:
            process.wait(10)


def mcpkit_run(port: int, redis: str, *more: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit", "run", str(APP), "--transport", "http",
            "--port", str(port), "--redis", redis, *more]  # fmt: skip


def script_worker(port: int, redis: str, prefix: str, idle: float, cap: int) -> list[str]:
    return [sys.executable, str(APP), str(port), redis, prefix, str(idle), str(cap)]


@contextlib.contextmanager
def haproxy(ports: list[int]) -> Iterator[str]:
    """haproxy on an unused loopback port, round robin over `ports`; yields its /mcp URL."""
    binary = shutil.which("haproxy") or (
        "/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy") else None
    )
    if binary is None:
        message = "haproxy is not installed; run `bash scripts/system-packages.sh`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    port = unused_port()
    servers = "\n".join(f"    server w{i} 127.0.0.1:{p}" for i, p in enumerate(ports, 1))
    config = Path(f"/tmp/mcpkit-haproxy-{port}.cfg")
    config.write_text(HAPROXY_CONFIG.format(port=port, servers=servers))
    process = subprocess.Popen([binary, "-db", "-f", str(config)])
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("haproxy did not start")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)
        config.unlink(missing_ok=True)


@pytest.fixture(scope="package")
def cluster(redis_url: str) -> Iterator[Cluster]:
    """Two `mcpkit run APP --transport http --redis URL` workers behind haproxy."""
    ports = [unused_port(), unused_port()]
    with processes([mcpkit_run(port, redis_url) for port in ports]):
        urls = tuple(f"http://127.0.0.1:{port}/mcp" for port in ports)
        for url in urls:
            wait_until_listening(url, 20)
        with haproxy(ports) as url:
            yield Cluster(url, urls, redis_url)


@pytest.fixture(scope="package")
def cluster3(redis_url: str) -> Iterator[Cluster]:
    """Three `mcpkit run APP --transport http --redis URL` workers behind haproxy."""
    ports = [unused_port() for _ in range(3)]
    with processes([mcpkit_run(port, redis_url) for port in ports]):
        urls = tuple(f"http://127.0.0.1:{port}/mcp" for port in ports)
        for url in urls:
            wait_until_listening(url, 20)
        with haproxy(ports) as url:
            yield Cluster(url, urls, redis_url)
