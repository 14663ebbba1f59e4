"""The inspector as a daily tool, in headless Chromium (the page and fixtures of
test_browser.py): a task's question answered from the page in both eras, a hostile server's
bidi overrides kept in their place, recursive schemas, a restarted `mcpkit dev` server, a hint
to the mode that works, and long texts clipped. Screenshots go to test-artifacts/inspector/."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.inspector_process import running
from tests.cli.test_dev import APP as CLI_APP
from tests.cli.test_dev import NEW_TOOL
from tests.inspector import test_browser
from tests.inspector.test_browser import MARKS, ROOT, Page, _done_output
from tests.peers import fastmcp_python

# test_browser.py's fixtures: its browser, its `mcpkit inspect`, its page
driver, inspector_url, page = test_browser.driver, test_browser.inspector_url, test_browser.page

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402


def _script(path: Path) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


LONG_TASK = _script(ROOT / "examples" / "long_task.py")
BIDI = _script(Path(__file__).parent / "bidi_server.py")
DAILY = _script(Path(__file__).parent / "daily_server.py")
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


# The horizontal order in which `parts` (each found once in `css`'s text) are drawn.
DRAWN_ORDER = """
const [css, parts] = arguments;
const root = document.querySelector(css);
const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
const left = {};
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  for (const part of parts) {
    const at = node.data.indexOf(part);
    if (at < 0 || part in left) continue;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + 1);
    left[part] = range.getBoundingClientRect().left;
  }
}
return parts.filter((p) => p in left).sort((a, b) => left[a] - left[b]);
"""


def test_bidi_overrides_are_isolated_and_marked(page: Page) -> None:
    page.connect(BIDI, "handshake")
    status = page.text_of("#status", "connected:")
    # drawn left to right as written: "(handshake, 2025-11-25)", not "(52-11-5202 ,ekahsdnah)"
    parts = ["(", "handshake", "2025", ")"]
    assert page.driver.execute_script(DRAWN_ORDER, "#status", parts) == parts
    assert [m.text for m in status.find_elements(By.CSS_SELECTOR, ".bidi-mark")] == ["U+202E"]
    page.tab("log")  # the server's log lines: asked for
    page.find("#log-level-set").click()
    page.text_of("#log-list", "level set to")
    page.open_tool("echo")
    page.until(
        lambda d: (
            d.execute_script(DRAWN_ORDER, "#tool-view .description", ["then", "(more)"])
            == ["then", "(more)"]
        )
    )
    page.find("#tool-view .description .bidi-mark")
    page.fill("text", "abc (x)")
    page.call()
    order = ["abc", "(x)"]
    assert page.driver.execute_script(DRAWN_ORDER, "#tool-view .output", order) == order
    page.tab("log")
    page.text_of("#log-list", "line (after)")
    assert page.driver.execute_script(DRAWN_ORDER, "#log-list", ["line", "(after)"]) == [
        "line",
        "(after)",
    ]
    page.tab("tools")
    page.shot("bidi", None)


def test_a_recursive_schema_is_expanded_on_demand(page: Page) -> None:
    page.connect(DAILY)
    page.open_tool("tree")
    values = "#tool-view input[name='value']"
    page.find(values).send_keys("a")
    assert len(page.driver.find_elements(By.CSS_SELECTOR, values)) == 1  # one level shown
    page.find("#tool-view .recursive button.expand").click()  # Set child: one level more
    page.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, values)) == 2)
    page.driver.find_elements(By.CSS_SELECTOR, values)[1].send_keys("b")
    page.shot("recursive-form", "#tool-view")
    assert "a: depth 2" in page.call().text
    page.find("#tool-view .raw-switch").click()  # the raw JSON, and back to the form from it
    raw = page.find("#tool-view textarea.raw-json")
    assert json.loads(raw.get_attribute("value")) == {
        "root": {"value": "a", "child": {"value": "b"}}
    }
    raw.clear()
    raw.send_keys('{"root": {"value": "x", "child": {"value": "y", "child": {"value": "z"}}}}')
    page.find("#tool-view .raw-switch").click()
    page.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, values)) == 3)
    assert "x: depth 3" in page.call().text


@pytest.mark.timeout(180)  # a dev server, started twice
def test_the_page_follows_a_dev_restart_by_itself(driver: Any, tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    shutil.copy(CLI_APP, app)
    with running("dev", "app.py", "--no-browser", cwd=tmp_path) as dev:
        dev.line("mcpkit dev: connected to app.py")
        page = Page(driver, f"{dev.base}/?token={dev.token}")
        page.open_tool("add")
        assert not driver.find_elements(By.CSS_SELECTOR, "#tool-list li[data-name='fresh']")
        app.write_text(app.read_text() + NEW_TOOL)
        page.find("#tool-list li[data-name='fresh']")  # no Refresh pressed
        page.text_of("#status", "app.py changed: restarted")
        page.tab("log")
        page.text_of("#log-list", "app.py changed: restarted; lists reloaded")
        page.shot("dev-restart", None)
        driver.get("about:blank")


@pytest.mark.parametrize("sdk", ["fastmcp", "sdk"])
def test_a_server_that_cannot_ask_at_2026_07_28_gets_a_hint_to_reconnect(
    page: Page, sdk: str
) -> None:
    server = [str(fastmcp_python()), str(Path(__file__).parent / "peer_ask_server.py"), sdk]
    page.connect(shlex.join(server), "auto")
    page.text_of("#status", "per-request")  # auto chose 2026-07-28
    page.open_tool("ask")
    output = page.call()
    assert "handshake" in output.find_element(By.CSS_SELECTOR, ".era-hint").text
    page.shot(f"era-hint-{sdk}", "#tool-view")
    output.find_element(By.CSS_SELECTOR, "button.reconnect-handshake").click()
    page.text_of("#status", "(handshake, ")
    page.open_tool("ask")
    page.find("#tool-view button[type=submit]").click()
    ask = page.find("#asks .ask[data-method='elicitation/create']")
    ask.find_element(By.CSS_SELECTOR, "input[name='charts']").click()
    ask.find_element(By.CSS_SELECTOR, "button.primary").click()
    assert "answer: accept" in page.until(_done_output).text


def height(page: Page, css: str) -> float:
    return float(
        page.driver.execute_script(
            "return document.querySelector(arguments[0]).getBoundingClientRect().height", css
        )
    )


def test_titles_app_tags_clipped_texts_and_the_history_copy_button(page: Page) -> None:
    page.connect(DAILY)
    page.open_tool("titled")  # labelled by the schema's title, the key beside it
    label = page.find("#tool-view label.field:has(input[name='seconds_per_stage']) .field-name")
    assert label.text.startswith("Seconds per stage") and "seconds_per_stage" in label.text
    assert page.find("#tool-view label.field:has(input[name='plain']) .field-name").text == "plain"
    page.shot("titles", "#tool-view")

    tags = {
        name: page.find(f"#tool-list li[data-name='{name}']").text
        for name in ("app_only", "with_view", "tree")
    }
    assert "app only" in tags["app_only"] and "view" in tags["with_view"]
    assert "app only" not in tags["tree"] and "view" not in tags["tree"]

    chatty = "#tool-list li[data-name='chatty']"
    assert height(page, chatty) < 120  # a 240,000-character description, clipped
    page.open_tool("chatty")
    description = "#tool-view .description"
    assert height(page, description) < 300
    page.shot("clipped", "#panel-tools")
    page.find("#tool-view button.more").click()  # and shown whole on demand
    page.until(lambda d: height(page, description) > 3000)

    page.tab("log")
    page.find("#log-level-set").click()
    page.text_of("#log-list", "level set to")
    page.open_tool("chatty")
    page.call()
    page.tab("log")
    line = "#log-list li.level-warning"
    page.find(line)
    assert height(page, line) < 300
    page.find(f"{line} button.more").click()
    page.until(lambda d: height(page, line) > 3000)

    page.tab("history")  # the Copy button on one line at 1280 px
    button = page.find("#history-rows tr.msg button")
    single = page.driver.execute_script(
        "const b = arguments[0], r = document.createRange(); r.selectNodeContents(b);"
        "return r.getClientRects().length",
        button,
    )
    assert single == 1, "the Copy button's text wraps"
    page.shot("history-copy", "#panel-history")


CONNECT = """
const [target, done] = arguments;
const token = new URLSearchParams(location.search).get("token");
fetch("/api/connect", {method: "POST", body: JSON.stringify({target, mode: "legacy"}),
  headers: {Authorization: `Bearer ${token}`, "Content-Type": "application/json"}})
  .then((answer) => answer.json()).then(done);
"""


def test_the_mode_is_called_handshake_and_the_old_name_still_connects(page: Page) -> None:
    modes = [option.text for option in Select(page.find("#mode")).options]
    assert modes == ["auto", "handshake (2025-11-25)", "per-request (2026-07-28)"]
    state = page.driver.execute_async_script(CONNECT, DAILY)  # the API's old spelling
    assert state["connected"] and state["server"]["era"] == "handshake"
    page.text_of("#status", "(handshake, ")
    assert Select(page.find("#mode")).first_selected_option.text == "handshake (2025-11-25)"
