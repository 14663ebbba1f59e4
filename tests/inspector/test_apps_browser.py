"""MCP Apps views rendered by the inspector's page, in real headless Chromium (Debian's
chromium and chromium-driver, through Selenium) against `mcpkit inspect` run as a subprocess:
the chart example renders after its tool's call, its button calls the app-only tool and the
chart changes, the iframe follows the view's size; a hostile view (apps_hostile_server.py)
reaches no network outside its declared domain, runs no model-only tool, cannot read the
inspector's page or token, cannot navigate the top window, sends no UDP through WebRTC
(apps_webrtc_server.py); a FastMCP 4.1.6 server's view renders. Screenshots go to
test-artifacts/apps/.
"""

from __future__ import annotations

import json
import select
import shlex
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.inspector.browser import MARKS, ROOT, BasePage, chromium, inspector

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402

SHOTS = ROOT / "test-artifacts" / "apps"
PYTHON = shlex.quote(sys.executable)
CHART = f"{PYTHON} {shlex.quote(str(ROOT / 'examples' / 'apps' / 'chart_server.py'))}"
HOSTILE = f"{PYTHON} {shlex.quote(str(Path(__file__).with_name('apps_hostile_server.py')))}"
WEBRTC = f"{PYTHON} {shlex.quote(str(Path(__file__).with_name('apps_webrtc_server.py')))}"
WAYS = ["direct", "webkit", "childGlobal", "childIndex", "srcdocMarkup", "srcdocSet",
        "srcdocShadow", "javascriptUrl", "srcdocPoisoned", "dsdMarkup", "dsdParse",
        "dsdSrcdoc"]  # fmt: skip
QUIET = 3.0  # seconds without a datagram: ICE sends its first STUN request at once
FASTMCP_APPS = ROOT / "tests" / "host" / "fastmcp_apps_server.py"
pytestmark = MARKS


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium(1000, SHOTS) as browser:
        yield browser


class Hits(ThreadingHTTPServer):
    """A loopback HTTP server that records the paths asked of it (the view's targets)."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.hit = threading.Condition()
        super().__init__(("127.0.0.1", 0), _Recorder)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Recorder(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        server: Any = self.server
        with server.hit:
            server.paths.append(self.path)
            server.hit.notify_all()
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("access-control-allow-origin", "*")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hits() -> Iterator[tuple[Hits, Hits]]:
    """Two origins: the one the hostile view declares, and one it does not."""
    servers = (Hits(), Hits())
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


class Page(BasePage):
    """The inspector's page, and the view frames in it."""

    def connect(self, target: str) -> None:
        field = self.find("#target")
        field.clear()
        field.send_keys(target)
        self.find("#connect").click()
        self.until(lambda d: "connected:" in d.find_element(By.ID, "status").text)

    def call_tool(self, name: str) -> WebElement:
        """Call `name` from its form: the view's outer iframe once it is there."""
        self.find("#tabs [data-panel=tools]").click()
        item = f"#tool-list li[data-name='{name}']"
        self.until(lambda d: d.find_element(By.CSS_SELECTOR, item).click() or True)
        self.find(f"#tool-view[data-tool='{name}']")
        self.find("#tool-view button[type=submit]").click()
        return self.find("#tool-view .output iframe.app-frame")

    def in_view(self, frame: WebElement, read: Callable[[Any], Any]) -> Any:
        """`read(driver)` inside the view (the proxy's inner frame), waited for."""
        self.driver.switch_to.frame(frame)
        try:
            self.driver.switch_to.frame(self.find("#view"))
            return self.until(read)
        finally:
            self.driver.switch_to.default_content()

    def view_text(self, frame: WebElement, css: str, contains: str) -> str:
        def found(d: Any) -> str | bool:
            text: str = d.find_element(By.CSS_SELECTOR, css).text
            return text if contains in text else False

        text: str = self.in_view(frame, found)
        return text

    def log_text(self, contains: str) -> str:
        self.find("#tabs [data-panel=log]").click()

        def found(d: Any) -> str | bool:
            text: str = d.find_element(By.ID, "log-list").text
            return text if contains in text else False

        text: str = self.until(found)
        return text

    def shot(self, name: str, element: WebElement) -> None:
        self.driver.execute_script("arguments[0].scrollIntoView()", element)
        element.screenshot(str(SHOTS / f"{name}.png"))


@pytest.fixture
def chart_page(driver: Any) -> Iterator[Page]:
    with inspector() as url:
        yield Page(driver, url)
        driver.get("about:blank")


def fits(page: Page, frame: WebElement) -> bool:
    """The outer iframe is as tall as the view's content (+ its 1 px border each side)."""
    content = page.in_view(frame, lambda d: d.execute_script(
        "return document.documentElement.scrollHeight"))  # fmt: skip
    return bool(abs(frame.size["height"] - (content + 2)) <= 1)


def _bars(d: Any) -> int:
    return len(d.find_elements(By.CSS_SELECTOR, "#chart rect"))


def test_the_chart_renders_its_button_calls_the_app_only_tool_and_the_size_follows(
    chart_page: Page,
) -> None:
    page = chart_page
    page.connect(CHART)
    frame = page.call_tool("show_chart")
    # rendered with the call's result (tool-result, sent once the view is initialized)
    assert page.view_text(frame, "#title", "points") == "4 points"
    assert page.in_view(frame, _bars) == 4
    # the iframe's height is the view's content height it reported (not the 120 px start)
    page.until(lambda d: fits(page, frame))
    assert frame.size["height"] > 150
    page.shot("chart", page.find("#tool-view"))

    def click(d: Any) -> bool:
        button = d.find_element(By.ID, "add")
        if not button.is_enabled():
            return False
        button.click()
        return True

    page.in_view(frame, click)  # the view's button calls add_point (visibility ["app"])
    assert page.view_text(frame, "#title", "5 points") == "5 points"
    assert page.in_view(frame, _bars) == 5
    page.shot("chart-after-click", page.find("#tool-view"))
    page.shot("chart-view", page.find("#tool-view .app-view"))
    # the spec's audit trail: the policy the view was loaded under, in the page's log
    assert "connect-src 'none'" in page.log_text("rendered under: default-src 'none'")


def test_the_size_follows_a_view_that_grows(chart_page: Page) -> None:
    page = chart_page
    page.connect(CHART)
    frame = page.call_tool("show_chart")
    page.view_text(frame, "#title", "points")
    page.until(lambda d: frame.size["height"] > 150)
    before = frame.size["height"]

    def grow(d: Any) -> bool:
        d.execute_script("document.getElementById('chart').style.height = '400px'")
        return True

    page.in_view(frame, grow)  # the view's ResizeObserver reports its new height
    page.until(lambda d: frame.size["height"] >= before + 230 and fits(page, frame))


def _results(d: Any) -> Any:
    """The hostile view's record of its attempts, once it is complete."""
    import json

    found = json.loads(d.find_element(By.ID, "results").text or "{}")
    return found if found.get("done") and "forbiddenImage" in found else False


def test_a_hostile_view_stays_in_its_sandbox(
    driver: Any, hits: tuple[Hits, Hits], tmp_path: Path
) -> None:
    allowed, forbidden = hits
    mark = tmp_path / "secret-ran"
    env = {"ALLOWED": allowed.origin, "FORBIDDEN": forbidden.origin, "MARK": str(mark)}
    with inspector(env) as url:
        page = Page(driver, url)
        token = url.split("token=", 1)[1]
        try:
            page.connect(HOSTILE)
            frame = page.call_tool("open_view")
            results = page.in_view(frame, _results)
            page.shot("hostile", page.find("#tool-view .app-view"))
            # the network: its declared origin only; the other is never asked (CSP)
            assert results["allowedFetch"] == "sent"
            assert allowed.paths == ["/allowed"]
            assert results["forbiddenFetch"].startswith("blocked")
            assert results["forbiddenImage"] == "blocked"
            assert forbidden.paths == []
            # the browser saw the violations (the view's securitypolicyviolation events) ...
            assert f"{forbidden.origin}/exfiltrate connect-src" in results["violations"]
            # ... and reported them to the sandbox server, which logs them in the page
            log = page.log_text(f"CSP blocked {forbidden.origin}/exfiltrate")
            assert "connect-src" in log
            # a model-only tool: refused by the bridge, never run
            assert results["secret"] == "refused: -32000"
            assert not mark.exists()
            # the proxy and the inspector's page are other origins: nothing to read
            assert results["parentDocument"] == "blocked: SecurityError"
            assert results["topDocument"] == "blocked: SecurityError"
            assert results["topHref"] == "blocked: SecurityError"
            assert token not in results["ownHref"] and token not in results["referrer"]
            assert token not in frame.get_attribute("src")
        finally:
            driver.get("about:blank")


def test_a_hostile_view_cannot_navigate_the_top_window_or_open_a_popup(
    driver: Any, hits: tuple[Hits, Hits], tmp_path: Path
) -> None:
    allowed, forbidden = hits
    env = {"ALLOWED": allowed.origin, "FORBIDDEN": forbidden.origin}
    with inspector(env) as url:
        page = Page(driver, url)
        try:
            page.connect(HOSTILE)
            frame = page.call_tool("open_view")
            page.in_view(frame, _results)

            def escape(d: Any) -> Any:  # a real click: the user activation a navigation needs
                d.find_element(By.ID, "escape").click()
                found = _results(d)
                return found if "topNavigation" in found else False

            results = page.in_view(frame, escape)
            assert results["topNavigation"].startswith("blocked"), results
            assert results["popup"] == "read: null"
            assert driver.current_url == url
            assert len(driver.window_handles) == 1
            assert "/navigated" not in allowed.paths and "/popup" not in allowed.paths
        finally:
            driver.get("about:blank")


@pytest.fixture
def stun() -> Iterator[dict[str, socket.socket]]:
    """One UDP socket on 127.0.0.1 per way the WebRTC view tries: its "STUN server"."""
    sockets = {way: socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for way in WAYS}
    for sock in sockets.values():
        sock.bind(("127.0.0.1", 0))
    yield sockets
    for sock in sockets.values():
        sock.close()


def datagrams(sockets: dict[str, socket.socket], quiet: float) -> dict[str, int]:
    """The ways whose socket got a datagram before `quiet` seconds passed with none."""
    got: dict[str, int] = {}
    by_socket = {sock: way for way, sock in sockets.items()}
    while True:
        ready, _, _ = select.select(list(by_socket), [], [], quiet)
        if not ready:
            return got
        for sock in ready:
            sock.recv(4096)
            got[by_socket[sock]] = got.get(by_socket[sock], 0) + 1


def _done(d: Any) -> Any:
    found = json.loads(d.find_element(By.ID, "results").text or "{}")
    return found if found.get("done") else False


def test_a_view_sends_no_udp_through_webrtc(driver: Any, stun: dict[str, socket.socket]) -> None:
    ports = {way: sock.getsockname()[1] for way, sock in stun.items()}
    with inspector({"STUN": json.dumps(ports)}) as url:
        page = Page(driver, url)
        try:
            page.connect(WEBRTC)
            frame = page.call_tool("open_view")
            results = page.in_view(frame, _done)
            page.shot("webrtc", page.find("#tool-view .app-view"))
            assert datagrams(stun, QUIET) == {}, results
            # the view's own constructors are gone; a frame's globals were never its to read
            assert results["direct"] == "blocked: TypeError"
            assert results["webkit"] == "blocked: TypeError"
            assert results["childGlobal"] == results["childIndex"] == "blocked: SecurityError"
            assert results["compatMode"] == "CSS1Compat"  # still a standards-mode page
        finally:
            driver.get("about:blank")


@pytest.mark.interop
def test_a_fastmcp_servers_app_renders(chart_page: Page) -> None:
    from tests.peers import fastmcp_python

    page = chart_page
    page.connect(f"{shlex.quote(str(fastmcp_python()))} {shlex.quote(str(FASTMCP_APPS))}")
    frame = page.call_tool("show")  # FastMCP 4.1.6's AppConfig(resource_uri=...)
    assert page.view_text(frame, "body", "fastmcp board") == "fastmcp board"
    page.shot("fastmcp", page.find("#tool-view .app-view"))
    # loaded under the policy its declared connect domain gives
    log = page.log_text("rendered under:")
    assert "connect-src 'self' https://api.fm.example" in log
