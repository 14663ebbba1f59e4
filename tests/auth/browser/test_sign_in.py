"""`mcpkit login` as a person does it: the example OAuth server (examples/oauth_server.py, a
user alice) in one process, `mcpkit login URL` in another, and the browser it opens a real
headless Chromium ($BROWSER, sign_in.py) that signs in on the consent page, first with a wrong
password. Screenshots of each page are kept (tests/auth/browser/screenshots/, ignored by git)
and their text checked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.http.servers import unused_port
from tests.peers import fastmcp_python

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SHOTS = HERE / "screenshots"
MEMORY_ALICE = ("--memory", "--user", "alice:wonderland")


def need_chromium() -> None:
    missing = [p for p in ("/usr/bin/chromium", "/usr/bin/chromedriver") if not Path(p).exists()]
    if missing:  # a failure, not a skip: .ci/run installs both (scripts/system-packages.sh)
        pytest.fail(f"{', '.join(missing)} missing: run scripts/system-packages.sh")


@pytest.fixture
def oauth_server() -> Iterator[str]:
    port = unused_port()
    process = subprocess.Popen(
        [sys.executable, "examples/oauth_server.py", "--port", str(port), *MEMORY_ALICE],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/.well-known/oauth-authorization-server", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the example OAuth server did not start") from None
                time.sleep(0.1)
        yield f"{url}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def mcpkit(config: Path, shots: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    browser = f"{sys.executable} {HERE / 'sign_in.py'} %s"
    environment = dict(
        os.environ, XDG_CONFIG_HOME=str(config), BROWSER=browser, SIGN_IN_SHOTS=str(shots), **env
    )
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        check=False,
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        timeout=120,
    )


def pages(shots: Path) -> dict[str, str]:
    return {p.stem.split("-", 1)[1]: p.read_text() for p in sorted(shots.glob("*.txt"))}


def fresh(name: str) -> Path:
    shots = SHOTS / name
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    return shots


def test_login_in_a_real_browser_then_call(oauth_server: str, tmp_path: Path) -> None:
    need_chromium()
    shots = fresh("approve")
    signed = mcpkit(
        tmp_path,
        shots,
        "login",
        oauth_server,
        SIGN_IN_USER="alice",
        SIGN_IN_PASSWORDS="not-the-password,wonderland",
    )
    assert signed.returncode == 0, signed.stderr
    assert f"Logged in to {oauth_server}" in signed.stdout
    seen = pages(shots)
    assert list(seen) == ["consent", "attempt-1", "returned"]
    consent = seen["consent"]
    assert "Allow mcpkit" in consent and "127.0.0.1" in consent and "mcp" in consent
    assert "your own computer" in consent  # the loopback redirect is pointed out
    assert "wonderland" not in "".join(seen.values())
    assert "incorrect" in seen["attempt-1"].lower() or "wrong" in seen["attempt-1"].lower()
    returned_url, returned_text = seen["returned"].split("\n", 1)
    assert returned_url.startswith("http://127.0.0.1:") and "/callback" in returned_url
    assert "code=" in returned_url and "authorization received" in returned_text.lower()
    for png in shots.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000

    called = mcpkit(tmp_path, shots, "call", oauth_server, "whoami")
    assert called.returncode == 0, called.stderr
    assert "alice via" in called.stdout and "mcp" in called.stdout


def test_deny_in_the_browser_fails_the_login_clearly(oauth_server: str, tmp_path: Path) -> None:
    need_chromium()
    shots = fresh("deny")
    denied = mcpkit(
        tmp_path, shots, "login", oauth_server, SIGN_IN_PASSWORDS="-", SIGN_IN_DECISION="deny"
    )
    assert denied.returncode != 0
    assert "access_denied" in denied.stderr and "Traceback" not in denied.stderr
    returned_url, returned_text = pages(shots)["returned"].split("\n", 1)
    assert "/callback" in returned_url and "error=access_denied" in returned_url
    assert "not authorized" in returned_text and "received" not in returned_text
    assert not list(tmp_path.rglob("oauth.json")) or "access_token" not in "".join(
        p.read_text() for p in tmp_path.rglob("oauth.json")
    )


def test_fastmcp_client_logs_in_through_the_browser(oauth_server: str, tmp_path: Path) -> None:
    """FastMCP 4.1.6's client and its OAuth helper against our server and authorization
    server. It opens the browser from its event loop and waits for it, so $BROWSER starts
    Chromium in the background."""
    need_chromium()
    shots = fresh("fastmcp")
    browser = f"sh -c '{sys.executable} {HERE / 'sign_in.py'} \"$0\" &' %s"
    environment = dict(
        os.environ,
        HOME=str(tmp_path),  # FastMCP keeps its tokens under the home directory
        BROWSER=browser,
        SIGN_IN_SHOTS=str(shots),
        SIGN_IN_USER="alice",
        SIGN_IN_PASSWORDS="wonderland",
    )
    ran = subprocess.run(
        [str(fastmcp_python()), str(HERE / "fastmcp_whoami.py"), oauth_server],
        check=False,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.startswith("alice via ") and "mcp" in ran.stdout
    seen = pages(shots)
    assert "Allow FastMCP Client" in seen["consent"]
    assert "/callback?code=" in seen["returned"].split("\n", 1)[0]
