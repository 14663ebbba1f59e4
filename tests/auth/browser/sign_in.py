"""$BROWSER for `mcpkit login` in tests: a real headless Chromium (Selenium and the system
chromedriver) that does what a person does on the authorization server's consent page.

    BROWSER="python sign_in.py %s" mcpkit login URL

Environment: SIGN_IN_USER; SIGN_IN_PASSWORDS, tried in order (comma-separated: a wrong one
first shows the error a person would see); SIGN_IN_DECISION "approve" or "deny"; SIGN_IN_SHOTS,
a directory where each page is kept as a screenshot (NN-name.png) and its visible text
(NN-name.txt) for the test to read and for people to look at.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def keep(driver: webdriver.Chrome, shots: Path, name: str) -> None:
    number = len(list(shots.glob("*.png"))) + 1
    driver.save_screenshot(str(shots / f"{number:02}-{name}.png"))
    text = driver.find_element(By.TAG_NAME, "body").text
    (shots / f"{number:02}-{name}.txt").write_text(f"{driver.current_url}\n{text}")


def page_after_submit(before: str) -> Callable[[webdriver.Chrome], bool]:
    """Loaded, and either elsewhere (the redirect) or showing the form's error."""

    def ready(driver: webdriver.Chrome) -> bool:
        if driver.execute_script("return document.readyState") != "complete":
            return False
        return driver.current_url != before or bool(driver.find_elements(By.CLASS_NAME, "error"))

    return ready


def sign_in(url: str) -> None:
    shots = Path(os.environ["SIGN_IN_SHOTS"])
    passwords = os.environ["SIGN_IN_PASSWORDS"].split(",")
    decision = os.environ.get("SIGN_IN_DECISION", "approve")
    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=900,800"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        driver.get(url)
        keep(driver, shots, "consent")
        for attempt, password in enumerate(passwords, 1):
            if decision == "approve":
                driver.find_element(By.NAME, "username").send_keys(os.environ["SIGN_IN_USER"])
                driver.find_element(By.NAME, "password").send_keys(password)
            waiting = page_after_submit(driver.current_url)
            driver.find_element(By.CSS_SELECTOR, f"button[value='{decision}']").click()
            WebDriverWait(driver, 20).until(waiting)
            if "/callback" in driver.current_url or attempt == len(passwords):
                keep(driver, shots, "returned")
                return
            keep(driver, shots, f"attempt-{attempt}")
            driver.find_element(By.NAME, "password").clear()
    finally:
        driver.quit()


if __name__ == "__main__":
    sign_in(sys.argv[1])
