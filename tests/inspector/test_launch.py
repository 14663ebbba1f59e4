"""`mcpkit inspect` opens the browser on a file, not on the tokened URL: the $BROWSER command's
arguments (which any local user reads in the process list) carry no token; the file is this
user's only, redirects a real headless Chromium into the working page, and is gone once the
inspector stops."""

from __future__ import annotations

import json
import shlex
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from tests.inspector.browser import MARKS, ROOT, WAIT, BasePage, chromium, inspector

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SHOTS = ROOT / "test-artifacts" / "inspector"
RECORDER = Path(__file__).with_name("recording_browser.py")
pytestmark = MARKS


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium(900, SHOTS) as browser:
        yield browser


def test_the_browser_gets_a_private_file_that_redirects_to_the_page(
    driver: Any, tmp_path: Path
) -> None:
    recorded = tmp_path / "argv.json"
    browser = f"{shlex.quote(sys.executable)} {shlex.quote(str(RECORDER))} %s"
    with inspector({"BROWSER_ARGV": str(recorded)}, browser=browser) as url:
        token = url.split("token=", 1)[1]
        WebDriverWait(driver, WAIT).until(lambda _: recorded.exists())
        argv = json.loads(recorded.read_text())
        assert all(token not in arg for arg in argv), argv
        opened = argv[-1]
        assert opened.startswith("file:///"), argv
        launcher = Path(unquote(urlsplit(opened).path))
        assert stat.S_IMODE(launcher.stat().st_mode) == 0o600
        assert stat.S_IMODE(launcher.parent.stat().st_mode) == 0o700
        page = BasePage(driver, opened)  # the page, loaded and ready, after the redirect
        assert driver.current_url == url
        assert page.find("#status").text
        driver.get("about:blank")
    assert not launcher.exists() and not launcher.parent.exists()
