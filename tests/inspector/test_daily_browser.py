"""The inspector as a daily tool, in headless Chromium (the page and fixtures of
test_browser.py): a task's question answered from the page in both eras, a hostile server's
bidi overrides kept in their place, recursive schemas, a restarted `mcpkit dev` server, a hint
to the mode that works, and long texts clipped. Screenshots go to test-artifacts/inspector/."""

from __future__ import annotations

import shlex
import sys

import pytest

from tests.inspector import test_browser
from tests.inspector.test_browser import MARKS, ROOT, Page

# test_browser.py's fixtures: its browser, its `mcpkit inspect`, its page
driver, inspector_url, page = test_browser.driver, test_browser.inspector_url, test_browser.page

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

LONG_TASK = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'examples' / 'long_task.py'))}"
pytestmark = MARKS


@pytest.mark.parametrize("mode", ["auto", "handshake"])
def test_a_tasks_question_is_asked_and_answered_in_the_page(page: Page, mode: str) -> None:
    page.connect(LONG_TASK, mode)
    page.open_tool("build_report")
    page.fill("topic", "tides")
    page.fill("seconds_per_stage", "0.05")
    page.find("#tool-view input.as-task").click()
    assert "Task created" in page.call().text
    page.tab("tasks")
    result = "//tbody[@id='task-rows']//button[text()='Result']"
    page.until(lambda d: d.find_element(By.XPATH, result).click() or True)
    ask = page.find("#asks .ask[data-method='elicitation/create']")
    assert "Include charts in the report on tides?" in ask.text
    ask.find_element(By.CSS_SELECTOR, "input[name='charts']").click()
    page.shot(f"task-question-{mode}", "#asks")
    ask.find_element(By.CSS_SELECTOR, "button.primary").click()
    page.text_of("#task-view", "Report on tides with charts: 4 stages done.")
    page.text_of("#task-rows .task-status", "completed")
    page.shot(f"task-answered-{mode}", "#panel-tasks")
