"""The inspector's API against real servers: our demo server over stdio and a task server over
Streamable HTTP, each in both eras, and the npm reference server-everything; every kind of
request, progress and notifications as events, the server's questions answered through
/api/answer, the history with timing and the recording file."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.http.servers import script_serving
from tests.inspector.running import inspector_page
from tests.peers import node_env, npm_command

ROOT = Path(__file__).resolve().parents[2]
DEMO = [sys.executable, str(ROOT / "examples" / "demo_server.py")]
TASKS = ROOT / "tests" / "fixtures" / "task_server.py"
MODES = ["legacy", "per-request"]
JSONObject = dict[str, Any]


def texts(result: JSONObject) -> list[str]:
    return [block["text"] for block in result["content"] if block["type"] == "text"]


def is_ask(method: str) -> Any:
    return lambda event: event["type"] == "ask" and event["method"] == method


@pytest.mark.parametrize("mode", MODES)
async def test_every_request_kind_against_the_demo_server(mode: str) -> None:
    async with inspector_page() as page:
        state = await page.connect(DEMO, mode)
        era = "handshake" if mode == "legacy" else "per-request"
        assert (state["server"]["era"], state["server"]["info"]["name"]) == (era, "demo")
        assert "Arithmetic" in state["server"]["instructions"]

        tools = await page.result("tools/list")
        assert {"add", "countdown", "confirm", "ask_model"} <= {t["name"] for t in tools["tools"]}
        added = await page.result("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        assert texts(added) == ["5"]

        resources = await page.result("resources/list")
        assert "demo://readme" in {r["uri"] for r in resources["resources"]}
        templates = await page.result("resources/templates/list")
        assert "notes://{name}" in [t["uriTemplate"] for t in templates["resourceTemplates"]]
        read = await page.result("resources/read", {"uri": "notes://welcome"})
        assert read["contents"][0]["text"] == "Welcome to mcpkit."

        prompts = await page.result("prompts/list")
        assert [p["name"] for p in prompts["prompts"]] == ["review"]
        prompt = await page.result("prompts/get", {"name": "review", "arguments": {"code": "x"}})
        assert "python code" in prompt["messages"][0]["content"]["text"]
        completion = await page.result(
            "completion/complete",
            {"ref": {"type": "ref/resource", "uri": "notes://{name}"},
             "argument": {"name": "name", "value": "w"}},
        )  # fmt: skip
        assert completion["completion"]["values"] == ["welcome"]

        if mode == "legacy":  # no ping at 2026-07-28: refused before anything is sent
            assert await page.result("ping") == {}
        refused = await page.request("tools/call", {"name": "no-such-tool", "arguments": {}})
        assert "error" in refused or refused["result"].get("isError") is True
        assert refused["ms"] >= 0


@pytest.mark.parametrize("mode", MODES)
async def test_progress_and_logs_arrive_as_events(mode: str) -> None:
    async with inspector_page() as page:
        await page.connect(DEMO, mode)
        assert await page.result("logging/setLevel", {"level": "debug"}) == {}
        called = asyncio.create_task(
            page.result("tools/call", {"name": "countdown", "arguments": {"start": 2}})
        )
        progress = [
            await page.event(
                lambda e, n=n: (
                    e["type"] == "notification"
                    and e["method"] == "notifications/progress"
                    and e["params"]["progress"] == n
                )
            )
            for n in (1, 2, 3)
        ]
        assert [p["params"]["total"] for p in progress] == [3, 3, 3]
        log = await page.event(
            lambda e: e["type"] == "notification" and e["method"] == "notifications/message"
        )
        assert log["params"]["level"] == "debug"
        assert texts(await called) == ['["2","1","0"]']


async def test_a_subscribed_resources_updates_arrive_as_events() -> None:
    async with inspector_page() as page:
        await page.connect(DEMO, "legacy")
        assert await page.result("resources/subscribe", {"uri": "notes://todo"}) == {}
        await page.result(
            "tools/call", {"name": "write_note", "arguments": {"name": "todo", "text": "x"}}
        )
        updated = await page.event(
            lambda e: (
                e["type"] == "notification" and e["method"] == "notifications/resources/updated"
            )
        )
        assert updated["params"]["uri"] == "notes://todo"


@pytest.mark.parametrize("mode", MODES)
async def test_the_servers_questions_are_answered_through_the_page(mode: str) -> None:
    async with inspector_page() as page:
        await page.connect(DEMO, mode)
        confirm = asyncio.create_task(
            page.result("tools/call", {"name": "confirm", "arguments": {"action": "deploy"}})
        )
        ask = await page.event(is_ask("elicitation/create"))
        assert "Really deploy?" in ask["params"]["message"]
        answer = {"action": "accept", "content": {"confirm": True, "note": "go"}}
        assert await page.post("/api/answer", {"id": ask["id"], "result": answer}) == {}
        assert texts(await confirm) == ["confirmed: True go"]

        sampled = asyncio.create_task(
            page.result("tools/call", {"name": "ask_model", "arguments": {"question": "2+2?"}})
        )
        ask = await page.event(is_ask("sampling/createMessage"))
        assert ask["params"]["messages"][0]["content"]["text"] == "2+2?"
        reply = {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "person"}
        await page.post("/api/answer", {"id": ask["id"], "result": reply})
        assert texts(await sampled) == ["4"]

        rooted = asyncio.create_task(page.result("tools/call", {"name": "roots", "arguments": {}}))
        ask = await page.event(is_ask("roots/list"))
        await page.post(
            "/api/answer", {"id": ask["id"], "result": {"roots": [{"uri": "file:///w"}]}}
        )
        assert "file:///w" in texts(await rooted)[0]

        declined = asyncio.create_task(
            page.request("tools/call", {"name": "ask_model", "arguments": {"question": "?"}})
        )
        ask = await page.event(is_ask("sampling/createMessage"))
        await page.post("/api/answer", {"id": ask["id"], "error": {"code": -1, "message": "no"}})
        assert (await declined)["error"]["message"] == "no"  # the tool let it through


async def test_a_question_still_open_when_the_connection_closes_is_withdrawn() -> None:
    async with inspector_page() as page:
        await page.connect(DEMO, "legacy")
        called = asyncio.create_task(
            page.request("tools/call", {"name": "confirm", "arguments": {"action": "x"}})
        )
        ask = await page.event(is_ask("elicitation/create"))
        await page.post("/api/disconnect", {})
        await page.event(lambda e: e["type"] == "ask-cancelled" and e["id"] == ask["id"])
        late = await page.http.post("/api/answer", json={"id": ask["id"], "result": {}})
        assert late.status_code == 404
        assert "error" in await called


async def test_a_question_the_server_withdraws_is_withdrawn_from_the_page() -> None:
    async with inspector_page() as page:
        server = [sys.executable, str(Path(__file__).with_name("withdrawing_server.py"))]
        await page.connect(server, "legacy")  # a request to cancel: the handshake era
        asked = asyncio.create_task(page.result("tools/call", {"name": "ask", "arguments": {}}))
        ask = await page.event(is_ask("elicitation/create"))
        await page.result("tools/call", {"name": "withdraw", "arguments": {}})
        await page.event(lambda e: e["type"] == "ask-cancelled" and e["id"] == ask["id"])
        assert texts(await asked) == ["withdrawn"]
        late = await page.http.post("/api/answer", json={"id": ask["id"], "result": {}})
        assert late.status_code == 404


@pytest.mark.parametrize("mode", MODES)
async def test_a_task_tool_over_http(mode: str) -> None:
    with script_serving(TASKS) as url:
        async with inspector_page() as page:
            state = await page.connect(url, mode)
            headers = state["server"]["headers"]
            assert ("Mcp-Session-Id" in headers) is (mode == "legacy")
            assert headers.get("Mcp-Protocol-Version", "2026-07-28") == "2026-07-28" or (
                mode == "legacy"
            )
            call = {"name": "count", "arguments": {"to": 2}, "task": {"ttl": 60000}}
            created = await page.result("tools/call", call)
            task = created.get("task", created)  # the handshake era wraps it in "task"
            task_id = task["taskId"]
            got = await page.result("tasks/get", {"taskId": task_id})
            assert got["taskId"] == task_id
            if mode == "legacy":  # tasks/result waits for the end
                done = await page.result("tasks/result", {"taskId": task_id})
            else:  # 2026-07-28: tasks/get at the server's interval, the result inlined
                while got["status"] == "working":
                    await asyncio.sleep(got.get("pollIntervalMs", 100) / 1000)
                    got = await page.result("tasks/get", {"taskId": task_id})
                done = got["result"]
            assert texts(done) == ["counted to 2"]


async def test_server_everything_over_stdio() -> None:
    argv = [*npm_command("mcp-server-everything"), "stdio"]
    async with inspector_page(client_options={"env": node_env()}) as page:
        state = await page.connect(argv)
        assert state["server"]["info"]["name"] == "mcp-servers/everything"
        tools = {tool["name"] for tool in (await page.result("tools/list"))["tools"]}
        assert {"echo", "trigger-sampling-request", "get-roots-list"} <= tools
        echoed = await page.result("tools/call", {"name": "echo", "arguments": {"message": "hé"}})
        assert texts(echoed) == ["Echo: hé"]
        sampled = asyncio.create_task(
            page.result(
                "tools/call",
                {"name": "trigger-sampling-request", "arguments": {"prompt": "hi", "maxTokens": 5}},
            )
        )
        ask = await page.event(is_ask("sampling/createMessage"))
        reply = {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}
        await page.post("/api/answer", {"id": ask["id"], "result": reply})
        assert "hello" in " ".join(texts(await sampled))

        arguments = {"url": "https://example.com/connect", "elicitationId": "e7"}
        opened = asyncio.create_task(
            page.result("tools/call", {"name": "trigger-url-elicitation", "arguments": arguments})
        )
        ask = await page.event(is_ask("elicitation/create"))
        assert (ask["params"]["mode"], ask["params"]["url"]) == ("url", arguments["url"])
        await page.post("/api/answer", {"id": ask["id"], "result": {"action": "accept"}})
        assert "completed the URL elicitation" in texts(await opened)[0]

        required = await page.request(
            "tools/call",
            {"name": "trigger-url-elicitation",
             "arguments": {"url": "https://example.com/pay", "errorPath": True}},
        )  # fmt: skip
        assert required["error"]["code"] == -32042  # the URL to open is in its data
        assert required["error"]["data"]["elicitations"][0]["url"].startswith("https://")


async def test_a_python_file_target() -> None:
    async with inspector_page() as page:
        state = await page.connect(str(ROOT / "examples" / "demo_server.py"))
        assert state["server"]["info"]["name"] == "demo"


async def test_history_and_recording(tmp_path: Path) -> None:
    record = tmp_path / "session.jsonl"
    async with inspector_page(record=record) as page:
        await page.connect(DEMO, "legacy")
        await page.result("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        history = (await page.http.get("/api/history")).json()["messages"]
        methods = [m["message"].get("method") for m in history if m["dir"] == "send"]
        assert methods[:3] == ["initialize", "notifications/initialized", "tools/call"]
        answer = next(m for m in history if m["dir"] == "recv" and m["message"].get("id") == 2)
        assert answer["ms"] is not None and answer["ms"] >= 0
        sent = await page.event(lambda e: e["type"] == "message" and e["dir"] == "send")
        assert sent["message"]["method"] == "initialize"
        download = await page.http.get("/api/history.jsonl")
        assert download.headers["content-type"] == "application/x-ndjson"
    lines = [orjson.loads(line) for line in record.read_bytes().splitlines()]
    meta, *messages = lines
    assert meta["dir"] == "meta" and meta["mode"] == "legacy" and meta["t"] == 0
    assert meta["server"]["info"]["name"] == "demo" and "protocolVersion" in meta["server"]
    assert [m["dir"] for m in messages[:2]] == ["send", "recv"]
    assert messages[0]["message"]["method"] == "initialize"
    assert any(m["message"].get("result", {}).get("content") for m in messages)
    assert [orjson.loads(line) for line in download.content.splitlines()] == lines


async def test_a_server_of_an_mcpservers_file(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    entry = {"command": DEMO[0], "args": DEMO[1:], "roots": ["file:///configured"]}
    config.write_bytes(orjson.dumps({"mcpServers": {"demo": entry}}))
    async with inspector_page() as page:
        state = await page.connect(f"{config}#demo")
        assert state["server"]["info"]["name"] == "demo"
        roots = await page.result("tools/call", {"name": "roots", "arguments": {}})
        assert texts(roots) == ['["file:///configured"]']  # the entry's roots, nobody asked
        missing = await page.post("/api/connect", {"target": f"{config}#nope", "mode": "auto"})
        assert not missing["connected"] and "no server 'nope'" in missing["error"]


async def test_a_recording_file_that_cannot_be_written_is_the_states_error(
    tmp_path: Path,
) -> None:
    async with inspector_page(record=tmp_path / "no" / "such" / "folder.jsonl") as page:
        state = await page.post("/api/connect", {"target": DEMO, "mode": "auto"})
        assert not state["connected"] and "folder.jsonl" in state["error"]


async def test_a_server_that_goes_away_is_reported() -> None:
    async with inspector_page() as page:
        await page.connect([sys.executable, str(ROOT / "tests/fixtures/stdio_server.py")])
        await page.request("tools/call", {"name": "crash", "arguments": {"code": 3}})
        state = await page.event(lambda e: e["type"] == "state" and not e["connected"])
        assert "closed" in state["error"]
        answer = await page.request("tools/list")
        assert answer["error"]["message"] == "not connected"
        again = await page.connect(DEMO)  # reconnects
        assert again["server"]["info"]["name"] == "demo"


def test_page_module_is_importable_without_uvicorn_being_loaded() -> None:
    import subprocess

    code = "import mcpkit.inspector, sys; print('uvicorn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_run_inspector_prints_its_url_and_stops_on_ctrl_c() -> None:
    import signal
    import subprocess

    import httpx

    code = "from mcpkit.inspector import run_inspector; run_inspector(None, open_browser=False)"
    argv = [sys.executable, "-c", code]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    with subprocess.Popen(argv, **pipes) as process:  # type: ignore[call-overload]
        try:
            line = process.stdout.readline()
            assert line.startswith("mcpkit inspector: http://127.0.0.1:"), line
            url = line.split(": ", 1)[1].strip()
            assert "?token=" in url
            state = httpx.get(url.replace("/?", "/api/state?"), timeout=30).json()
            assert state["connected"] is False
            with httpx.stream("GET", url.replace("/?", "/api/events?"), timeout=30) as events:
                assert next(events.iter_lines()).startswith("data: ")  # a tab is open
                process.send_signal(signal.SIGINT)
                assert process.wait(30) == 0  # uvicorn did not wait for the stream to end
            assert "Traceback" not in process.stderr.read()
        finally:
            process.kill()


async def test_the_target_given_is_connected_once_serving() -> None:
    async with inspector_page(target=DEMO, mode="legacy") as page:
        if not page.inspector.state()["connected"]:
            await page.event(lambda e: e["type"] == "state" and e["connected"])
        state = (await page.http.get("/api/state")).json()
        assert (state["mode"], state["server"]["era"]) == ("legacy", "handshake")


async def test_the_page_and_its_assets_are_served_from_the_package() -> None:
    async with inspector_page() as page:
        index = await page.http.get(f"/?token={page.token}")
        assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
        assert "{{TOKEN}}" not in index.text
        assert f"/static/inspector.js?token={page.token}" in index.text  # assets carry it
        for name, kind in (("inspector.js", "text/javascript"), ("inspector.css", "text/css")):
            asset = await page.http.get(f"/static/{name}?token={page.token}")
            assert asset.status_code == 200 and asset.headers["content-type"].startswith(kind)
        for name in ("../app.py", "..%2fapp.py", "nothing.js", ".hidden.js", "index"):
            assert (await page.http.get(f"/static/{name}")).status_code == 404, name
