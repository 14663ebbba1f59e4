"""The inspector's defences, each against the attack it stops, on a real uvicorn on 127.0.0.1
(the official Inspector's history: CVE-2025-49596, a local proxy any web page could drive;
CVE-2025-58444, a server's text run as script; a DNS-rebinding hole). Each test was checked to
fail with its defence disabled (docs/inspector.md, Security)."""

from __future__ import annotations

import os
import shlex
import socket
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from mcpkit.inspector import Inspector
from tests.inspector.running import Page, inspector_page

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = [sys.executable, str(Path(__file__).with_name("hostile_server.py"))]
GETS = ["/", "/static/inspector.js", "/static/inspector.css", "/api/state", "/api/events",
        "/api/history", "/api/history.jsonl"]  # fmt: skip
POSTS = ["/api/connect", "/api/disconnect", "/api/request", "/api/answer"]


def bare(page: Page) -> httpx.AsyncClient:
    """An HTTP client with no token (the page's own client carries it in a header)."""
    return httpx.AsyncClient(base_url=page.base, timeout=30)


async def status(http: httpx.AsyncClient, method: str, path: str, **options: object) -> int:
    """The status a request gets (an event stream is not read past its headers)."""
    async with http.stream(method, path, **options) as answer:  # type: ignore[arg-type]
        return answer.status_code


def marker_command(marker: Path) -> list[str]:
    """A target whose start leaves a file behind (then stays up as a plain stdio server)."""
    run = f"import runpy; runpy.run_path({HOSTILE[1]!r}, run_name='__main__')"
    code = f"open({str(marker)!r}, 'w').close(); {run}"
    return [sys.executable, "-c", code]


def children() -> set[int]:
    """The pids of this process's children (from /proc)."""
    mine, found = str(os.getpid()), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == mine:
                found.add(int(entry))
    return found


async def test_every_route_wants_the_token() -> None:
    async with inspector_page() as page, bare(page) as http:
        wrong = "x" + page.token[1:]
        for path in GETS:
            assert await status(http, "GET", path) == 403, path
            assert await status(http, "GET", f"{path}?token={wrong}") == 403, path
            bearer = {"authorization": f"Bearer {wrong}"}
            assert await status(http, "GET", path, headers=bearer) == 403, path
        for path in POSTS:
            assert await status(http, "POST", path, json={}) == 403, path
            assert await status(http, "POST", f"{path}?token={wrong}", json={}) == 403, path
        # the right token, in the query (the page, its assets, EventSource) or a header
        assert await status(http, "GET", f"/api/state?token={page.token}") == 200
        assert await status(http, "GET", f"/api/events?token={page.token}") == 200
        assert await status(page.http, "GET", "/api/history") == 200


async def test_a_foreign_host_name_is_refused() -> None:
    """DNS rebinding: a page at evil.example whose name now resolves to 127.0.0.1 sends its
    own name as Host."""
    async with inspector_page() as page:
        port = page.base.rsplit(":", 1)[1]
        for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1:{int(port) + 1}"):
            answer = await page.http.get("/api/state", headers={"host": host})
            assert answer.status_code == 403, host
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            assert (await page.http.get("/api/state", headers={"host": host})).status_code == 200


async def test_a_foreign_origin_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    async with inspector_page() as page:
        port = page.base.rsplit(":", 1)[1]
        connect = {"target": marker_command(marker), "mode": "auto"}
        for origin in ("http://evil.example", "null", f"http://127.0.0.1:{int(port) + 1}",
                       f"https://127.0.0.1:{port}"):  # fmt: skip
            refused = await page.http.post("/api/connect", json=connect, headers={"origin": origin})
            assert refused.status_code == 403, origin
        assert not marker.exists()
        own = {"origin": f"http://localhost:{port}"}
        assert (await page.http.post("/api/connect", json=connect, headers=own)).status_code == 200
        assert marker.exists()  # the same request from the page itself starts the server


async def test_no_get_starts_a_process(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    target = quote(shlex.join(marker_command(marker)))
    async with inspector_page() as page:
        before = children()
        for path in GETS + POSTS:
            query = f"?token={page.token}&target={target}&command={target}&mode=auto"
            await status(page.http, "GET", path + query)
        assert not marker.exists()
        assert children() <= before
        assert (await page.http.get("/api/state")).json()["connected"] is False


async def test_it_listens_on_loopback_127_0_0_1_only() -> None:
    async with inspector_page() as page:
        port = int(page.base.rsplit(":", 1)[1])
        # 127.0.0.2 is loopback too: reachable for a socket bound to 0.0.0.0, not 127.0.0.1
        with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.2", port)):
            pass
    with pytest.raises(ValueError, match=r"127\.0\.0\.1 only"):
        async with Inspector().serving(host="0.0.0.0"):
            pass


async def test_the_token_is_never_a_cookie_nor_in_an_answer_header() -> None:
    async with inspector_page() as page, bare(page) as http:
        for path in GETS:
            for client, query in ((page.http, ""), (http, ""), (http, f"?token={page.token}")):
                async with client.stream("GET", path + query) as answer:
                    assert "set-cookie" not in answer.headers, path
                    assert all(page.token not in value for value in answer.headers.values())
        refused = await http.get("/api/state?token=nope")
        assert page.token not in refused.text


async def test_the_page_runs_only_its_own_script_and_sends_no_referrer() -> None:
    async with inspector_page() as page:
        answer = await page.http.get("/")
        policy = answer.headers.get("content-security-policy", "")
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert "unsafe-inline" not in policy.split("script-src", 1)[1].split(";", 1)[0]
        assert answer.headers["referrer-policy"] == "no-referrer"  # the URL holds the token
        assert answer.headers["x-content-type-options"] == "nosniff"


async def test_a_hostile_servers_text_is_handed_over_as_data() -> None:
    async with inspector_page() as page:
        state = await page.connect(HOSTILE, "legacy")
        assert state["server"]["info"]["name"].startswith("hostile<script>")
        listed = await page.http.post("/api/request", json={"method": "tools/list"})
        assert listed.headers["content-type"] == "application/json"
        assert listed.headers["x-content-type-options"] == "nosniff"  # never sniffed as HTML
        tool = listed.json()["result"]["tools"][0]
        assert "<script>" in tool["description"]  # unchanged: escaping is the page's job
        called = await page.result("tools/call", {"name": "echo", "arguments": {"text": "!"}})
        assert called["content"][1]["uri"] == "javascript:alert(1)"


async def test_a_strange_static_path_is_a_404_and_no_traceback(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async with inspector_page() as page:
        for name in ("inspector.js%00.png", "inspector.js%00", "%00", "..%2Finspector.js"):
            assert await status(page.http, "GET", f"/static/{name}") == 404, name
        assert await status(page.http, "GET", "/static/inspector.js") == 200
    assert "Traceback" not in capfd.readouterr().err
