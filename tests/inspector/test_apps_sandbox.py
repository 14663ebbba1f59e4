"""The inspector's MCP Apps backend over HTTP, as the page and the browser use it: the
sandbox origin (proxy page, the view under its CSP, once, CSP reports), the bridge relay
(POST /api/view, /api/view/message) and a view kept to the connection it was opened on.
The browser side is test_apps_browser.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit.host.apps import content_security_policy
from tests.inspector.running import Page, inspector_page

ROOT = Path(__file__).resolve().parents[2]
CHART = [sys.executable, str(ROOT / "examples" / "apps" / "chart_server.py")]
JSONObject = dict[str, Any]

pytestmark = pytest.mark.timeout(120)


async def open_chart(page: Page) -> JSONObject:
    await page.connect(CHART)
    result = await page.result("tools/call", {"name": "show_chart", "arguments": {}})
    return await page.post("/api/view", {"tool": "show_chart", "arguments": {}, "result": result})


async def relay(page: Page, view_id: str, message: JSONObject) -> JSONObject:
    return await page.post("/api/view/message", {"id": view_id, "message": message})


def request(request_id: int, method: str, params: JSONObject | None = None) -> JSONObject:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}


INITIALIZE = request(1, "ui/initialize", {"appCapabilities": {}, "appInfo": {"name": "t"}})
INITIALIZED = {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}


async def test_the_proxy_and_the_view_are_served_on_the_sandbox_origin_only() -> None:
    async with inspector_page() as page, httpx.AsyncClient(timeout=30) as browser:
        opened = await open_chart(page)
        origin = opened["origin"]
        assert origin != page.base and origin.startswith("http://127.0.0.1:")
        assert page.token not in opened["url"]  # the token never reaches the sandbox
        page_csp = (await page.http.get("/")).headers["content-security-policy"]
        assert page_csp.endswith(f"; frame-src {origin}")

        proxy = await browser.get(opened["url"], params={"host": page.base})
        assert proxy.status_code == 200
        assert f"frame-ancestors {page.base}" in proxy.headers["content-security-policy"]
        assert 'sandbox="allow-scripts allow-forms"' in proxy.text  # no allow-same-origin
        assert f'src="/view/{opened["id"]}"' in proxy.text
        # framed by another page: refused (only the inspector's own origins)
        foreign = await browser.get(opened["url"], params={"host": "http://evil.example"})
        assert foreign.status_code == 404

        view = await browser.get(f"{origin}/view/{opened['id']}")
        assert view.status_code == 200 and "Add a point" in view.text
        policy = view.headers["content-security-policy"]
        assert policy.startswith(content_security_policy({}))  # the restrictive default
        assert "object-src 'none'" in policy and "connect-src 'none'" in policy
        assert f"report-uri /csp-report/{opened['id']}" in policy
        again = await browser.get(f"{origin}/view/{opened['id']}")
        assert again.status_code == 404  # served once: nothing else loads it later

        unknown = await browser.get(f"{origin}/view/{'x' * 24}")
        assert unknown.status_code == 404
        rebound = await browser.get(opened["url"], headers={"host": "evil.example"})
        assert rebound.status_code == 403  # DNS rebinding


async def test_nothing_is_posted_to_the_view_before_it_is_initialized() -> None:
    async with inspector_page() as page:
        opened = await open_chart(page)
        hello = await relay(page, opened["id"], INITIALIZE)
        context = hello["answer"]["result"]["hostContext"]
        assert context["toolInfo"]["tool"]["name"] == "show_chart"
        assert context["containerDimensions"] == {"maxHeight": 4000}  # the height is the view's
        assert hello["posts"] == []  # the call's input and result wait for `initialized`
        ready = await relay(page, opened["id"], INITIALIZED)
        methods = [post["method"] for post in ready["posts"]]
        assert methods == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        assert ready["posts"][1]["params"]["structuredContent"] == {"points": [3, 5, 2, 6]}
        call = request(2, "tools/call", {"name": "add_point", "arguments": {"value": 1}})
        added = await relay(page, opened["id"], call)
        assert added["answer"]["result"]["structuredContent"]["points"][-1] == 1


async def test_a_view_cannot_reach_the_server_of_a_later_connection() -> None:
    async with inspector_page() as page:
        opened = await open_chart(page)
        await relay(page, opened["id"], INITIALIZE)
        await page.connect(CHART)  # the same tools, another server process
        call = request(2, "tools/call", {"name": "add_point", "arguments": {"value": 9}})
        answer = (await relay(page, opened["id"], call))["answer"]
        assert answer["error"]["code"] == -32000
        shown = await page.result("tools/call", {"name": "show_chart", "arguments": {}})
        assert shown["structuredContent"] == {"points": [3, 5, 2, 6]}


async def test_csp_reports_reach_the_pages_log() -> None:
    async with inspector_page() as page, httpx.AsyncClient(timeout=30) as browser:
        opened = await open_chart(page)
        report = {
            "csp-report": {
                "blocked-uri": "http://127.0.0.1:1/x",
                "violated-directive": "connect-src",
            }
        }
        sent = await browser.post(f"{opened['origin']}/csp-report/{opened['id']}", json=report)
        assert sent.status_code == 204
        event = await page.event(lambda e: "CSP blocked" in str(e.get("params", {}).get("data")))
        assert event["params"]["logger"] == "view ui://chart/view"
        assert event["params"]["data"] == "CSP blocked http://127.0.0.1:1/x (connect-src)"


async def test_a_view_request_for_a_tool_without_a_view_is_refused() -> None:
    async with inspector_page() as page:
        await page.connect(CHART)
        answer = await page.http.post(
            "/api/view", json={"tool": "add_point", "arguments": {}, "result": {"content": []}}
        )
        assert answer.status_code == 400 and "has no view" in answer.json()["error"]
        missing = await page.http.post("/api/view/message", json={"id": "nope", "message": {}})
        assert missing.status_code == 404


def test_the_webrtc_guard_comes_first_after_the_doctype() -> None:
    """Before the view's own code, and never before the doctype (a quirks page otherwise);
    the browser side is test_apps_browser.py's WebRTC test."""
    from mcpkit.inspector.sandbox import guarded

    for prologue in ("<!DOCTYPE html>", "\ufeff <!-- made by x -->\n<!doctype html >", ""):
        served = guarded(f"{prologue}<html><script>view()</script>")
        assert served.startswith(f"{prologue}<script>"), served[:80]
        assert "RTCPeerConnection" in served.split("view()")[0]
        assert served.endswith("</script><html><script>view()</script>")
    # a declarative shadow root would hide its frames from the guard: an inert template
    tamed = guarded('<template ShadowRootMode="open"></template><script>x.shadowRootMode</script>')
    assert '<template ShadowRootModx="open">' in tamed and "x.shadowRootModx" in tamed
