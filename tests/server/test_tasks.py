"""Tasks served in both eras (2025-11-25 `params.task`; the 2026-07-28 extension), through the
real client in process: lifecycle, questions asked inside a task, cancellation, errors, bounds,
ownership, and every kind of bad input the spec names an error for."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from mcpkit import Client, Server
from mcpkit.errors import INTERNAL_ERROR, LocalProtocolViolation, ProtocolError, TaskCancelled
from mcpkit.server import Context
from mcpkit.server.tasks import TaskSettings
from tests.clock import FakeClock

MODES = ["handshake", "2026-07-28"]
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def make_server(**settings: Any) -> tuple[Server, dict[str, Any]]:
    server = Server("tasks", tasks=TaskSettings(**settings) if settings else None)
    seen: dict[str, Any] = {"cancelled": asyncio.Event()}

    @server.tool(task=True)
    async def slow(seconds: float = 0.05, label: str = "") -> str:
        await asyncio.sleep(seconds)
        return f"slept {label}"

    @server.tool(task=True)
    async def endless() -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            seen["cancelled"].set()
            raise
        return "never"

    @server.tool(task=True)
    async def confirm(ctx: Context) -> str:
        await ctx.report_progress(1, 3, "asking")
        answer = await ctx.elicit("Go on?", CONFIRM)
        seen["task_id"] = ctx.task_id
        return f"ok={(answer.data or {}).get('ok')}"

    @server.tool(task="required", structured_output=False)
    async def tool_error() -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "bad input"}], "isError": True}

    @server.tool(task=True)
    async def crash() -> str:
        raise ProtocolError(INTERNAL_ERROR, "the job crashed", {"why": "test"})

    @server.tool()
    def plain(name: str) -> str:
        return f"Hello, {name}!"

    return server, seen


async def accept(request: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


def client(server: Server, mode: str, **options: Any) -> Client:
    return Client(server, mode=mode, elicitation=accept, **options)


@pytest.mark.parametrize("mode", MODES)
async def test_a_task_runs_to_its_result_and_the_handle_shows_each_state(mode: str) -> None:
    server, _ = make_server()
    async with client(server, mode) as c:
        handle = await c.start_tool("confirm")
        assert re.fullmatch(r"[A-Za-z0-9_-]{22,}", handle.task_id)  # >= 128 random bits
        states = [state async for state in handle]
        assert states[-1].status == "completed"
        assert "asking" in {s.status_message for s in states}  # progress -> statusMessage
        result = await handle.result()
        assert result.content[0].text == "ok=True"
        assert (await handle.status()).status == "completed"


@pytest.mark.parametrize("mode", MODES)
async def test_call_tool_follows_a_required_task_to_its_result(mode: str) -> None:
    server, _ = make_server()
    async with client(server, mode) as c:
        await c.list_tools()  # the client learns taskSupport "required"
        result = await c.call_tool("tool_error")
        assert result.is_error and result.content[0].text == "bad input"  # type: ignore[union-attr]


async def test_modern_call_tool_becomes_a_task_and_answers_its_question_through_the_handler() -> (
    None
):
    server, seen = make_server()
    async with client(server, "2026-07-28") as c:
        result = await c.call_tool("confirm")
        assert result.content[0].text == "ok=True"  # type: ignore[union-attr]
        assert seen["task_id"]  # it ran as a task (the server decides at 2026-07-28)


async def test_handshake_call_tool_stays_inline_for_an_optional_tool() -> None:
    server, seen = make_server()
    async with client(server, "handshake") as c:
        result = await c.call_tool("confirm")
        assert result.content[0].text == "ok=True"  # type: ignore[union-attr]
        assert seen["task_id"] is None  # inline: the client did not ask for a task


@pytest.mark.parametrize("mode", MODES)
async def test_cancel_stops_the_handler_and_the_status_says_so(mode: str) -> None:
    server, seen = make_server()
    async with client(server, mode) as c:
        handle = await c.start_tool("endless")
        await handle.cancel()
        await asyncio.wait_for(seen["cancelled"].wait(), 5)  # the asyncio task was cancelled
        assert (await handle.status()).status == "cancelled"
        with pytest.raises(TaskCancelled):
            await handle.result()


async def test_cancel_of_a_finished_task_is_refused_at_2025_11_25_and_acknowledged_at_2026() -> (
    None
):
    server, _ = make_server()
    async with client(server, "handshake") as c:
        handle = await c.start_tool("slow")
        await handle.result()
        with pytest.raises(ProtocolError) as refused:
            await handle.cancel()
        assert refused.value.code == -32602 and "terminal status 'completed'" in str(refused.value)
    async with client(server, "2026-07-28") as c:
        handle = await c.start_tool("slow")
        await handle.result()
        await handle.cancel()  # an empty acknowledgement
        assert (await handle.status()).status == "completed"


async def test_a_tool_error_fails_the_task_at_2025_11_25_and_completes_it_at_2026() -> None:
    server, _ = make_server()
    async with client(server, "handshake") as c:
        handle = await c.start_tool("tool_error")
        result = await handle.result()  # tasks/result returns what the call would have
        assert result.is_error is True
        assert (await handle.status()).status == "failed"
    async with client(server, "2026-07-28") as c:
        handle = await c.start_tool("tool_error")
        result = await handle.result()
        assert result.is_error is True
        assert handle.state.status == "completed"  # the extension's rule


@pytest.mark.parametrize("mode", MODES)
async def test_a_json_rpc_error_fails_the_task_with_that_error(mode: str) -> None:
    server, _ = make_server()
    async with client(server, mode) as c:
        handle = await c.start_tool("crash")
        with pytest.raises(ProtocolError) as failed:
            await handle.result()
        assert failed.value.code == INTERNAL_ERROR
        assert failed.value.message == "the job crashed" and failed.value.data == {"why": "test"}
        assert (await handle.status()).status == "failed"


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_task_ids_are_invalid_params(mode: str) -> None:
    server, _ = make_server()
    async with client(server, mode) as c:
        for method in ("tasks/get", "tasks/cancel"):
            with pytest.raises(ProtocolError) as unknown:
                await c.request(method, {"taskId": "no-such-task"})
            assert unknown.value.code == -32602 and "Task not found" in unknown.value.message
        with pytest.raises(ProtocolError) as malformed:
            await c.request("tasks/get", {"taskId": 7})
        assert malformed.value.code == -32602


async def test_another_session_gets_not_found_never_the_task() -> None:
    server, _ = make_server()
    async with client(server, "handshake") as owner, client(server, "handshake") as other:
        handle = await owner.start_tool("endless")
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            with pytest.raises(ProtocolError) as refused:
                await other.request(method, {"taskId": handle.task_id})
            assert refused.value.code == -32602 and "Task not found" in refused.value.message
        listed = await other.request("tasks/list")
        assert listed["tasks"] == []
        assert (await handle.status()).status == "working"  # undisturbed
        await handle.cancel()


async def test_tasks_list_pages_through_the_callers_tasks() -> None:
    server, _ = make_server(page_size=2)
    async with client(server, "handshake") as c:
        ids = [(await c.start_tool("slow", {"seconds": 0})).task_id for _ in range(5)]
        seen: list[str] = []
        cursor = None
        while True:
            page = await c.request("tasks/list", {"cursor": cursor} if cursor else None)
            seen += [task["taskId"] for task in page["tasks"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert seen == ids
        with pytest.raises(ProtocolError) as bad:
            await c.request("tasks/list", {"cursor": "not-a-cursor"})
        assert bad.value.code == -32602


async def test_the_ttl_asked_for_is_honoured_capped_and_then_the_task_is_gone() -> None:
    clock = FakeClock()
    server, _ = make_server(max_ttl_ms=60_000, clock=clock)
    async with client(server, "handshake") as c:
        capped = await c.request(
            "tools/call", {"name": "slow", "arguments": {"seconds": 0}, "task": {"ttl": 10**9}}
        )
        assert capped["task"]["ttl"] == 60_000 and capped["task"]["pollInterval"] == 500
        short = await c.start_tool("slow", {"seconds": 0}, ttl=2)
        assert short.state.ttl_ms == 2000
        await short.result()
        clock.advance(1.9)
        assert (await short.status()).status == "completed"  # kept for its ttl
        clock.advance(0.1)
        with pytest.raises(ProtocolError) as gone:
            await short.status()
        assert gone.value.code == -32602


async def test_malformed_task_params_and_tasks_for_tools_that_cannot_be_tasks() -> None:
    server, _ = make_server()
    async with client(server, "handshake") as c:
        with pytest.raises(ProtocolError) as malformed:
            await c.request("tools/call", {"name": "slow", "arguments": {}, "task": 5})
        assert malformed.value.code == -32602
        with pytest.raises(ProtocolError) as forbidden:
            await c.request("tools/call", {"name": "plain", "arguments": {"name": "x"}, "task": {}})
        assert forbidden.value.code == -32601 and "does not support task" in forbidden.value.message
        with pytest.raises(ProtocolError) as required:
            await c.request("tools/call", {"name": "tool_error", "arguments": {}})
        assert required.value.code == -32601 and "runs only as a task" in required.value.message
        # a request type that no task can wrap is served as usual, the task field ignored
        assert (await c.request("tools/list", {"task": {}}))["tools"]


async def test_bounds_refuse_new_tasks_with_a_clear_error() -> None:
    server, _ = make_server(max_running=2)
    async with client(server, "handshake") as c:
        running = [await c.start_tool("endless") for _ in range(2)]
        with pytest.raises(ProtocolError) as busy:
            await c.start_tool("endless")
        assert busy.value.code == -32000 and "2 tasks are running" in busy.value.message
        for handle in running:
            await handle.cancel()
    server, _ = make_server(max_stored=3)
    async with client(server, "handshake") as c:
        for _ in range(3):
            await (await c.start_tool("slow", {"seconds": 0})).result()
        with pytest.raises(ProtocolError) as full:
            await c.start_tool("slow", {"seconds": 0})
        assert full.value.code == -32000 and "holds its limit of 3 tasks" in full.value.message


async def test_modern_tasks_need_the_extension_declared_in_the_request() -> None:
    server, _ = make_server()
    async with client(server, "2026-07-28") as c:
        bare = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            with pytest.raises(ProtocolError) as missing:
                await c.request(method, {"taskId": "x", "inputResponses": {}, "_meta": bare})
            assert missing.value.code == -32021
            assert (
                "io.modelcontextprotocol/tasks"
                in missing.value.data["requiredCapabilities"]["extensions"]
            )
        with pytest.raises(ProtocolError) as required:
            await c.request("tools/call", {"name": "tool_error", "arguments": {}, "_meta": bare})
        assert required.value.code == -32021
        inline = await c.request("tools/call", {"name": "slow", "arguments": {}, "_meta": bare})
        assert inline["resultType"] == "complete" and "taskId" not in inline
        # tasks/result and tasks/list do not exist at 2026-07-28: this client does not send
        # them (the server's -32601 for them is scored by the conformance suite)
        for removed in ("tasks/result", "tasks/list"):
            with pytest.raises(LocalProtocolViolation):
                await c.request(removed, {"taskId": "x"})


async def test_tasks_update_bad_answers_are_refused_and_the_task_keeps_waiting() -> None:
    server, _ = make_server()
    async with client(server, "2026-07-28") as c:
        created = await c.request("tools/call", {"name": "confirm", "arguments": {}})
        task_id = created["taskId"]
        state = await c.request("tasks/get", {"taskId": task_id})
        while state["status"] != "input_required":
            await asyncio.sleep(0.01)
            state = await c.request("tasks/get", {"taskId": task_id})
        (key,) = state["inputRequests"]
        wrong = {key: {"action": "accept", "content": {"ok": "not a boolean"}}}
        with pytest.raises(ProtocolError) as refused:
            await c.request("tasks/update", {"taskId": task_id, "inputResponses": wrong})
        assert refused.value.code == -32602 and key in refused.value.message
        with pytest.raises(ProtocolError) as malformed:
            await c.request("tasks/update", {"taskId": task_id, "inputResponses": [1]})
        assert malformed.value.code == -32602
        # unknown keys are ignored (acknowledged), the question is still open
        ack = await c.request("tasks/update", {"taskId": task_id, "inputResponses": {"x": {}}})
        assert ack == {"resultType": "complete"} or ack.get("resultType") == "complete"
        state = await c.request("tasks/get", {"taskId": task_id})
        assert state["status"] == "input_required" and list(state["inputRequests"]) == [key]
        right = {key: {"action": "accept", "content": {"ok": True}}}
        await c.request("tasks/update", {"taskId": task_id, "inputResponses": right})
        result = await c.task(task_id).result()
        assert result.content[0].text == "ok=True"


async def test_tasks_update_for_a_task_not_waiting_is_acknowledged_and_changes_nothing() -> None:
    server, _ = make_server()
    async with client(server, "2026-07-28") as c:
        handle = await c.start_tool("slow", {"seconds": 0.2})
        answer = {"elicit-1": {"action": "accept", "content": {"ok": True}}}
        await c.request("tasks/update", {"taskId": handle.task_id, "inputResponses": answer})
        assert (await handle.result()).content[0].text == "slept "


async def test_status_notifications_reach_a_handshake_client() -> None:
    server, _ = make_server()
    statuses: list[str] = []

    async def on_notification(method: str, params: Any) -> None:
        if method == "notifications/tasks/status":
            statuses.append(params["status"])

    async with client(server, "handshake", on_notification=on_notification) as c:
        await (await c.start_tool("confirm")).result()
        for _ in range(100):
            if "completed" in statuses:
                break
            await asyncio.sleep(0.01)
    assert statuses[-1] == "completed" and "input_required" in statuses


async def test_the_question_of_a_handshake_task_carries_the_related_task_meta() -> None:
    server, _ = make_server()
    metas: list[Any] = []

    async def elicit(request: Any) -> dict[str, Any]:
        metas.append(request.to_wire().get("_meta"))
        return {"action": "accept", "content": {"ok": True}}

    async with Client(server, mode="handshake", elicitation=elicit) as c:
        handle = await c.start_tool("confirm")
        await handle.result()
    assert metas == [{"io.modelcontextprotocol/related-task": {"taskId": handle.task_id}}]


async def test_modern_status_notifications_follow_the_tasks_a_subscription_names() -> None:
    server, _ = make_server()
    async with client(server, "2026-07-28") as c:
        handle = await c.start_tool("endless")
        async with c.listen(task_ids=[handle.task_id, "no-such-task"]) as subscription:
            assert subscription.acknowledged == {"taskIds": [handle.task_id]}
            await handle.cancel()
            note = await asyncio.wait_for(anext(aiter(subscription)), 5)
        assert note.method == "notifications/tasks"
        assert note.params["taskId"] == handle.task_id
        assert note.params["status"] == "cancelled" and note.params["ttlMs"] == 3_600_000
        bare = {"io.modelcontextprotocol/clientCapabilities": {}}
        with pytest.raises(ProtocolError) as missing:
            await c.request(
                "subscriptions/listen", {"notifications": {"taskIds": ["x"]}, "_meta": bare}
            )
        assert missing.value.code == -32021


@pytest.mark.parametrize("mode", MODES)
async def test_call_tool_surfaces_a_tasks_status_messages_as_progress(mode: str) -> None:
    server = Server("progress")

    @server.tool(task="required")
    async def steps(ctx: Context) -> str:
        for step in range(1, 4):
            await ctx.report_progress(step, 3, f"step {step}")
            await asyncio.sleep(0.3)
        return "done"

    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with Client(server, mode=mode) as c:
        await c.list_tools()
        result = await c.call_tool("steps", on_progress=on_progress)
    assert result.content[0].text == "done"  # type: ignore[union-attr]
    messages = [message for _, message in seen]
    assert "step 2" in messages and messages == sorted(messages)
    assert [progress for progress, _ in seen] == list(range(1, len(seen) + 1))
