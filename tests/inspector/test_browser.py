"""The inspector's page in a real browser: headless Chromium (Debian's chromium and
chromium-driver, through Selenium) against `mcpkit inspect` run as a subprocess, connected
from the page's connect bar to our demo server, a task server, the npm server-everything and a
hostile server. Screenshots of each panel go to test-artifacts/inspector/ for people to look at.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.inspector.browser import MARKS, ROOT, BasePage, chromium, inspector
from tests.peers import node_env, npm_command

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import (  # noqa: E402
    NoAlertPresentException,
)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

SHOTS = ROOT / "test-artifacts" / "inspector"
DEMO = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'examples' / 'demo_server.py'))}"
TASKS = f"{shlex.quote(sys.executable)} {ROOT / 'tests' / 'fixtures' / 'task_server.py'}"
CONTENT = f"{shlex.quote(sys.executable)} {Path(__file__).parent / 'content_server.py'}"
HOSTILE = f"{shlex.quote(sys.executable)} {Path(__file__).parent / 'hostile_page_server.py'}"
pytestmark = MARKS


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium(900, SHOTS) as browser:
        yield browser


@pytest.fixture
def inspector_url() -> Iterator[str]:
    with inspector(node_env()) as url:  # the page may start server-everything (npx)
        yield url


class Page(BasePage):
    """The inspector's page as a person uses it."""

    def text_of(self, css: str, contains: str) -> WebElement:
        """The first element matching `css` whose visible text contains `contains`."""

        def found(d: Any) -> WebElement | bool:
            for element in d.find_elements(By.CSS_SELECTOR, css):
                if contains in element.text:
                    return element
            return False

        element: WebElement = self.until(found)
        return element

    def connect(self, target: str, mode: str = "handshake") -> None:
        field = self.find("#target")
        field.clear()
        field.send_keys(target)
        Select(self.find("#mode")).select_by_value(mode)
        self.find("#connect").click()
        self.text_of("#status", "connected:")

    def tab(self, name: str) -> None:
        self.find(f"#tabs [data-panel={name}]").click()
        self.until(lambda d: d.find_element(By.ID, f"panel-{name}").is_displayed())

    def open_tool(self, name: str) -> None:
        self.tab("tools")
        item = f"#tool-list li[data-name='{name}']"
        self.until(lambda d: d.find_element(By.CSS_SELECTOR, item).click() or True)
        self.find(f"#tool-view[data-tool='{name}']")

    def fill(self, name: str, value: str) -> None:
        field = self.find(f"#tool-view input[name='{name}']")
        field.clear()
        field.send_keys(value)

    def call(self) -> WebElement:
        self.find("#tool-view button[type=submit]").click()
        return self.until(_done_output)

    def shot(self, name: str, css: str | None = None) -> Path:
        path = SHOTS / f"{name}.png"
        if css is None:
            self.driver.save_screenshot(str(path))
        else:
            self.find(css).screenshot(str(path))
        return path


def _done_output(d: Any) -> WebElement | bool:
    output = d.find_element(By.CSS_SELECTOR, "#tool-view .output")
    return output if output.text and "calling…" not in output.text else False


@pytest.fixture
def page(driver: Any, inspector_url: str) -> Iterator[Page]:
    yield Page(driver, inspector_url)
    driver.get("about:blank")  # closes the page's event stream before the inspector stops


def test_connect_call_a_tool_from_its_form_and_see_each_result(page: Page) -> None:
    page.connect("examples/demo_server.py")  # a file, as a person types it (cwd: the repo)
    page.text_of("#server-view", "Arithmetic, greetings")
    page.shot("connect-bar", "#connect-bar")
    page.shot("server", "#panel-server")

    page.open_tool("greet")
    page.text_of("#tool-view .required", "*")  # name is required
    assert page.find("#tool-view input[name='punctuation']").get_attribute("value") == "!"
    page.fill("name", "Ada")
    assert "Hello, Ada!" in page.call().text

    page.open_tool("statistics")  # an array: add items; structured content checked
    for value in ("2", "4"):
        page.find("#tool-view button.add").click()
        page.find("#tool-view .array-items li:last-child input").send_keys(value)
    output = page.call()
    assert "Matches the outputSchema" in output.text
    assert '"mean": 3' in output.text
    page.shot("tools", "#panel-tools")

    page.open_tool("pixel")  # an image, from a data: URL the page built
    page.call()
    image = page.find("#tool-view .output img")
    assert image.get_attribute("src").startswith("data:image/png;base64,")
    assert page.driver.execute_script("return arguments[0].naturalWidth", image) == 1


def test_raw_json_switch(page: Page) -> None:
    page.connect(DEMO, "per-request")
    page.open_tool("add")
    page.find("#tool-view .raw-switch").click()
    raw = page.find("#tool-view textarea.raw-json")
    raw.clear()
    raw.send_keys('{"a": 40,')
    page.find("#tool-view .raw-switch").click()  # back to the form: refused, the text kept
    page.text_of("#tool-view .schema-form .error", "Not valid")
    raw.send_keys(' "b": 2}')
    page.find("#tool-view .raw-switch").click()  # back to the form, filled from the JSON
    assert page.find("#tool-view input[name='a']").get_attribute("value") == "40"
    assert page.call().text.startswith("42")


def test_answer_an_elicitation_from_its_form(page: Page) -> None:
    page.connect(DEMO)
    page.open_tool("confirm")
    page.fill("action", "deploy")
    page.find("#tool-view button[type=submit]").click()
    ask = page.find("#asks .ask[data-method='elicitation/create']")
    assert "Really deploy?" in ask.text
    ask.find_element(By.CSS_SELECTOR, "input[name='confirm']").click()
    ask.find_element(By.CSS_SELECTOR, "input[name='note']").send_keys("today")
    page.shot("asks", "#asks")
    ask.find_element(By.CSS_SELECTOR, "button.primary").click()
    assert "confirmed: True today" in page.until(_done_output).text
    page.until(lambda d: not d.find_element(By.ID, "asks").is_displayed())


def test_a_progress_bar_moves(page: Page) -> None:
    page.connect(TASKS)
    page.open_tool("count")
    page.fill("to", "12")
    # every value the bar takes, seen by the page itself (no polling race)
    page.driver.execute_script(
        "window.seen = [];"
        "new MutationObserver(() => document.querySelectorAll('#progress-list progress')"
        "  .forEach(p => window.seen.push(p.value)))"
        ".observe(document.getElementById('progress-list'),"
        "  {subtree: true, attributes: true, childList: true, characterData: true});"
    )
    assert "counted to 12" in page.call().text
    page.tab("log")
    bar = page.find("#progress-list progress")
    assert (bar.get_attribute("value"), bar.get_attribute("max")) == ("12", "12")
    seen = page.driver.execute_script("return window.seen")
    assert len(set(seen)) >= 3 and seen == sorted(seen), seen  # it moved, forward
    page.text_of("#progress-list", "counted 12 of 12")
    page.shot("progress", "#panel-log")


@pytest.mark.parametrize("mode", ["handshake", "per-request"])
def test_run_a_task_and_get_its_result(page: Page, mode: str) -> None:
    page.connect(TASKS, mode)
    page.open_tool("count")
    page.fill("to", "3")
    page.find("#tool-view input.as-task").click()
    assert "Task created" in page.call().text
    page.tab("tasks")
    result = "//tbody[@id='task-rows']//button[text()='Result']"  # re-rendered on each status
    page.until(lambda d: d.find_element(By.XPATH, result).click() or True)
    page.text_of("#task-view", "counted to 3")
    page.text_of("#task-rows .task-status", "completed")
    page.shot("tasks", "#panel-tasks")


def test_resources_templates_with_completion_and_prompts(page: Page) -> None:
    page.connect(DEMO)
    page.tab("resources")
    page.text_of("#resource-list li", "demo://readme").click()
    page.find("#resource-view .output pre")
    page.text_of("#template-list li", "notes://{name}").click()
    field = page.find("#resource-view input[name='name']")
    field.send_keys("w")
    # the server's completion reaches the field's suggestions
    suggested = (
        "const list = document.getElementById(arguments[0].getAttribute('list'));"
        "return list && [...list.options].map(o => o.value).includes('welcome');"
    )
    page.until(lambda d: d.execute_script(suggested, field))
    field.send_keys("elcome")
    page.text_of("#resource-view code.uri", "notes://welcome")
    page.find("#resource-view form button[type=submit]").click()
    page.text_of("#resource-view .output", "Welcome to mcpkit.")
    page.find("#resource-view button.watch").click()  # subscribe, then change the note
    page.text_of("#resource-view button.watch", "Unsubscribe")
    page.shot("resources", "#panel-resources")
    page.open_tool("write_note")
    page.fill("name", "welcome")
    page.fill("text", "Changed while watched.")
    assert "saved notes://welcome" in page.call().text
    page.tab("resources")
    page.text_of("#resource-view .output", "Changed while watched.")  # re-read on the update
    page.tab("log")
    page.text_of("#log-list", "notes://welcome")
    Select(page.find("#log-level")).select_by_value("debug")
    page.find("#log-level-set").click()
    page.text_of("#log-list", "level set to debug")
    page.open_tool("countdown")  # progress and debug lines
    page.fill("start", "3")
    page.call()
    page.tab("log")
    page.text_of("#log-list", "counted 0")
    page.text_of("#progress-list", "4 / 4 at 0")
    page.shot("log", "#panel-log")

    page.tab("prompts")
    page.text_of("#prompt-list li", "review").click()
    page.find("#prompt-view input[name='code']").send_keys("print(1)")
    language = page.find("#prompt-view input[name='language']")
    language.send_keys("r")
    page.until(lambda d: d.execute_script(suggested.replace("welcome", "rust"), language))
    language.send_keys("ust")
    page.find("#prompt-view button[type=submit]").click()
    page.text_of("#prompt-view .output", "review this rust code")
    page.shot("prompts", "#panel-prompts")


def test_history_filter_and_download(page: Page) -> None:
    page.connect(DEMO)
    page.open_tool("add")
    page.fill("a", "1")
    page.fill("b", "2")
    page.call()
    page.tab("history")
    rows = page.driver.find_elements(By.CSS_SELECTOR, "#history-rows tr.msg")
    assert len(rows) >= 4  # initialize, initialized, tools/list, tools/call and answers
    page.find("#history-filter").send_keys("tools/call")
    shown = page.until(
        lambda d: [
            r for r in d.find_elements(By.CSS_SELECTOR, "#history-rows tr.msg") if r.is_displayed()
        ]
    )
    # the call and its answer, named after it
    assert [row.find_elements(By.TAG_NAME, "td")[2].text for row in shown] == [
        "tools/call",
        "tools/call result",
    ]
    shown[0].click()  # its JSON
    page.text_of("#history-rows tr.detail", '"name": "add"')
    page.shot("history", "#panel-history")
    origin = page.driver.current_url.split("/?", 1)[0]
    page.driver.execute_cdp_cmd(
        "Browser.grantPermissions",
        {"origin": origin, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
    )
    shown[0].find_element(By.TAG_NAME, "button").click()  # Copy: the message as JSON
    read = "navigator.clipboard.readText().then(arguments[0], e => arguments[0](String(e)))"
    copied = page.until(lambda d: (text := d.execute_async_script(read)).startswith("{") and text)
    assert json.loads(copied)["params"]["name"] == "add"
    href = page.find("#history-download").get_attribute("href")
    text = page.driver.execute_async_script(
        "fetch(arguments[0]).then(r => r.text()).then(arguments[1])", href
    )
    assert '"method":"tools/call"' in text.replace(" ", "")


def test_server_everything(page: Page) -> None:
    argv = npm_command("mcp-server-everything")
    page.connect(shlex.join([*argv, "stdio"]))
    page.open_tool("echo")
    page.fill("message", "hé")
    assert "Echo: hé" in page.call().text

    page.open_tool("get-tiny-image")
    page.call()
    image = page.find("#tool-view .output img")
    assert page.driver.execute_script("return arguments[0].naturalWidth", image) > 0

    page.open_tool("trigger-sampling-request")
    page.fill("prompt", "hi")
    page.find("#tool-view button[type=submit]").click()
    ask = page.find("#asks .ask[data-method='sampling/createMessage']")
    ask.find_element(By.CSS_SELECTOR, "textarea").send_keys("hello from a person")
    ask.find_element(By.CSS_SELECTOR, "button.primary").click()
    assert "hello from a person" in page.until(_done_output).text

    page.open_tool("trigger-url-elicitation")
    page.fill("url", "javascript:window.pwned=1")  # a URL the page must not offer to open
    page.find("#tool-view button[type=submit]").click()
    ask = page.find("#asks .ask[data-method='elicitation/create']")
    assert "javascript:window.pwned=1" in ask.text
    assert not ask.find_elements(By.CSS_SELECTOR, "a, button.open-url")
    ask.find_element(By.XPATH, ".//button[text()='Decline']").click()
    page.until(_done_output)


def test_a_hostile_server_runs_nothing_in_the_page(page: Page) -> None:
    page.connect(HOSTILE)
    page.text_of("#server-view", "<script>window.pwned='script'</script>")  # shown as text
    page.tab("log")
    Select(page.find("#log-level")).select_by_value("debug")
    page.find("#log-level-set").click()
    page.text_of("#log-list", "level set to debug")
    page.open_tool("echo")
    page.text_of("#tool-view .description", "onerror=")
    page.fill("text", "!")
    output = page.call()
    assert "<img src=x onerror=" in output.text
    page.tab("prompts")
    page.text_of("#prompt-list li", "attack").click()
    page.find("#prompt-view input[name='topic']").send_keys("x")
    page.find("#prompt-view button[type=submit]").click()
    page.text_of("#prompt-view .output", "prompt <script>")
    page.tab("log")
    page.text_of("#log-list", "log <script>")
    page.shot("hostile", None)

    state = page.driver.execute_script(
        "return {pwned: window.pwned === undefined ? null : window.pwned,"
        " scripts: document.scripts.length,"
        " foreign: document.querySelectorAll("
        "   'main img[src$=\"/x\"], [onerror], #tool-view a, #prompt-view a, #asks a').length,"
        " jsLinks: [...document.links].filter(a => !/^https?:/.test(a.href)).length}"
    )
    # no markup became elements (the CSP would stop them running, but none should exist)
    assert state == {"pwned": None, "scripts": 1, "foreign": 0, "jsLinks": 0}
    with pytest.raises(NoAlertPresentException):
        page.driver.switch_to.alert.text  # noqa: B018


def test_answer_roots(page: Page) -> None:
    page.connect(DEMO, "per-request")
    page.open_tool("roots")
    page.find("#tool-view button[type=submit]").click()
    ask = page.find("#asks .ask[data-method='roots/list']")
    ask.find_element(By.CSS_SELECTOR, "textarea").send_keys("file:///srv/project Project")
    ask.find_element(By.CSS_SELECTOR, "button.primary").click()
    assert "file:///srv/project" in page.until(_done_output).text


def test_nested_form_audio_links_and_an_https_url_to_open(page: Page) -> None:
    page.connect(CONTENT)
    page.open_tool("order")
    view = page.find("#tool-view")
    Select(view.find_element(By.CSS_SELECTOR, "select[name='size']")).select_by_visible_text("M")
    assert not view.find_element(By.CSS_SELECTOR, "input[name='gift']").is_selected()  # default
    page.fill("street", "1 Main St")
    page.fill("city", "Lyon")
    view.find_element(By.XPATH, ".//fieldset[legend[contains(., 'tags')]]//button").click()
    page.find("#tool-view .array-items input").send_keys("red")
    assert "M gift=False to 1 Main St, Lyon ['red']" in page.call().text
    page.shot("tools-nested", "#panel-tools")

    page.open_tool("media")
    output = page.call()
    audio = output.find_element(By.TAG_NAME, "audio")
    assert audio.get_attribute("src").startswith("data:audio/wav;base64,")
    assert audio.get_attribute("controls") is not None
    link = output.find_element(By.CSS_SELECTOR, "a.uri")
    assert (link.get_attribute("href"), link.get_attribute("rel")) == (
        "https://example.com/guide",
        "noopener noreferrer",
    )
    assert "memo text" in output.text
    page.shot("tools-media", "#tool-view")

    page.open_tool("sign_in")
    page.find("#tool-view button[type=submit]").click()
    ask = page.find("#asks .ask[data-method='elicitation/create']")
    assert "https://example.com/login" in ask.text
    assert ask.find_elements(By.CSS_SELECTOR, "button.open-url")  # http(s): offered to open
    ask.find_element(By.CSS_SELECTOR, "button.primary").click()
    assert "answer: accept" in page.until(_done_output).text

    page.open_tool("grow")  # tools/list_changed: the list reloads, the shown tool stays
    assert "added grown" in page.call().text
    page.find("#tool-list li[data-name='grown']")
    page.find("#tool-list li.selected[data-name='grow']")
    page.tab("log")
    page.text_of("#log-list", "tools changed")


def test_disconnect_and_a_target_that_fails(page: Page) -> None:
    page.connect(DEMO)
    page.open_tool("add")
    page.find("#disconnect").click()
    page.until(lambda d: d.find_element(By.ID, "status").text == "not connected")
    page.text_of("#tool-view", "Not connected.")  # the old server's tool is not on show
    assert not page.driver.find_elements(By.CSS_SELECTOR, "#tool-list li")
    assert not page.find("#disconnect").is_enabled()
    field = page.find("#target")
    field.clear()
    field.send_keys(f"{shlex.quote(sys.executable)} -c 'raise SystemExit(3)'")
    page.find("#connect").click()
    status = page.text_of("#status", "not connected: ")  # why, in the page
    assert "bad" in status.get_attribute("class")
    page.connect(DEMO, "per-request")  # and connecting again works
    page.text_of("#status", "per-request")


def test_cancel_a_task(page: Page) -> None:
    page.connect(TASKS)
    page.open_tool("forever")
    page.find("#tool-view input.as-task").click()
    assert "Task created" in page.call().text
    page.tab("tasks")
    page.text_of("#task-rows .task-status", "working")
    cancel = "//tbody[@id='task-rows']//button[text()='Cancel']"
    page.until(lambda d: d.find_element(By.XPATH, cancel).click() or True)
    page.text_of("#task-rows .task-status", "cancelled")
    assert not page.find("#task-rows button[disabled]").is_enabled()  # nothing left to cancel
