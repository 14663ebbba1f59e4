"""What the browser tests share: headless Chromium (Debian's chromium and chromium-driver,
through Selenium), `mcpkit inspect --no-browser` as a subprocess, and the page's waits."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import (  # noqa: E402
    NoSuchElementException,
    StaleElementReferenceException,
)
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
WAIT = 30  # seconds a page change may take on a loaded 2-core machine
MARKS = [
    pytest.mark.skipif(not CHROMIUM.exists() or not CHROMEDRIVER.exists(), reason="no chromium"),
    pytest.mark.timeout(180),
]


@contextlib.contextmanager
def chromium(height: int, shots: Path) -> Iterator[Any]:
    """A headless Chromium 1280 px wide; screenshots go to `shots`."""
    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size=1280,{height}"):
        options.add_argument(flag)
    browser = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    shots.mkdir(parents=True, exist_ok=True)
    try:
        yield browser
    finally:
        browser.quit()


@contextlib.contextmanager
def inspector(env: dict[str, str] | None = None, browser: str | None = None) -> Iterator[str]:
    """`mcpkit inspect --no-browser` with no target (the page chooses one); its URL. With a
    `browser` command, that is its $BROWSER and it opens it."""
    args = ["--no-browser"] if browser is None else []
    env = {**(env or {}), **({"BROWSER": browser} if browser is not None else {})}
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "inspect", *args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # printed once it listens
        match = re.match(r"mcpkit inspector: (http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        assert match, line
        yield match.group(1)
    finally:
        process.terminate()
        process.wait(timeout=20)
        if process.stdout is not None:
            process.stdout.close()


class BasePage:
    """The inspector's page, loaded and ready."""

    def __init__(self, driver: Any, url: str) -> None:
        self.driver = driver
        self.url = url
        driver.get(url)
        self.until(lambda d: d.execute_script("return document.body.dataset.ready") == "true")

    def until(self, condition: Callable[[Any], Any], timeout: float = WAIT) -> Any:
        # a list the page re-renders (list_changed) leaves stale elements: look again
        ignored = (NoSuchElementException, StaleElementReferenceException)
        wait = WebDriverWait(self.driver, timeout, poll_frequency=0.05, ignored_exceptions=ignored)
        return wait.until(condition)

    def find(self, css: str) -> WebElement:
        element: WebElement = self.until(lambda d: d.find_element(By.CSS_SELECTOR, css))
        return element
