"""The workers' bus: what one worker makes for a client whose stream (or waiting handler) is
on another gets there. Each test talks to the workers directly (not through haproxy), so
which worker gets which request is chosen, not left to the balancer."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from mcpkit import Client
from tests.http.test_server_modern import headers_for, listen, tool_call
from tests.scaleout.conftest import Cluster
from tests.scaleout.test_resumption import open_session

Message = dict[str, Any]


async def messages(response: httpx.Response) -> AsyncIterator[Message]:
    """The JSON-RPC messages of an SSE response, as they arrive."""
    buffer = ""
    async for chunk in response.aiter_text():
        buffer += chunk.replace("\r\n", "\n")
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            for line in block.splitlines():
                if line.startswith("data: ") and line[6:].strip():
                    yield json.loads(line[6:])


class Stream:
    """An SSE response read message by message, across several waits."""

    def __init__(self, response: httpx.Response) -> None:
        self._messages = messages(response)

    async def first(self, wanted: Callable[[Message], bool], seen: list[Message]) -> Message:
        """The first message `wanted` picks (those before it are appended to `seen`)."""
        async for message in self._messages:
            if wanted(message):
                return message
            seen.append(message)
        raise AssertionError(f"the stream ended first; it carried {seen}")


async def first(stream: Stream, wanted: Callable[[Message], bool], seen: list[Message]) -> Message:
    return await asyncio.wait_for(stream.first(wanted, seen), 10)


def call(request_id: int, tool: str, **arguments: Any) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}  # fmt: skip


def method(suffix: str) -> Callable[[Message], bool]:
    """Picks a message whose method ends with `suffix`."""
    return lambda message: str(message.get("method", "")).endswith(suffix)


async def test_an_answer_posted_to_another_worker_reaches_the_waiting_handler(
    cluster: Cluster,
) -> None:
    first_worker, second_worker = cluster.workers
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, first_worker)
        sampling = {"sampling": {}}
        await _declare(http, first_worker, headers, sampling)
        async with http.stream(
            "POST", first_worker, json=call(2, "ask"), headers=headers
        ) as response:
            stream = Stream(response)
            seen: list[Message] = []
            request = await first(stream, method("sampling/createMessage"), seen)
            answer = {"jsonrpc": "2.0", "id": request["id"],
                      "result": {"role": "assistant", "model": "m",
                                 "content": {"type": "text", "text": "from afar"}}}  # fmt: skip
            posted = await http.post(second_worker, json=answer, headers=headers)
            assert posted.status_code == 202
            result = await first(stream, lambda m: m.get("id") == 2, seen)
    assert "from afar" in result["result"]["content"][0]["text"]


async def _declare(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], capabilities: Message
) -> None:
    """Open the session again declaring `capabilities` (open_session declares none)."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": headers["mcp-protocol-version"],
                       "capabilities": capabilities, "clientInfo": {"name": "t"}}}  # fmt: skip
    answer = await http.post(url, json=init, headers={"accept": headers["accept"]})
    headers["mcp-session-id"] = answer.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=done, headers=headers)).status_code == 202


async def test_sampling_mid_call_through_the_balancer_many_times(cluster: Cluster) -> None:
    """Our client through haproxy: each answer may land on either worker."""
    asked: list[Any] = []

    async def sampling(params: Any) -> dict[str, Any]:
        asked.append(params)
        text = f"answer {len(asked)}"
        return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "m"}

    async with Client(cluster.url, mode="handshake", sampling=sampling) as client:
        for round_ in range(1, 7):
            result = await asyncio.wait_for(client.call_tool("ask", {}), 10)
            assert f"answer {round_}" in result.content[0].text  # type: ignore[union-attr]
    assert len(asked) == 6


async def test_a_message_made_on_one_worker_reaches_the_get_stream_on_another(
    cluster: Cluster,
) -> None:
    first_worker, second_worker = cluster.workers
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, first_worker)
        async with http.stream("GET", first_worker, headers=headers) as response:
            stream = Stream(response)
            assert response.status_code == 200
            await _copy_on(http, second_worker, headers)
            made = await http.post(second_worker, json=call(3, "announce", text="hi"),
                                   headers=headers)  # fmt: skip
            assert made.status_code == 200
            seen: list[Message] = []
            message = await first(stream, method("notifications/message"), seen)
    assert message["params"]["data"] == "hi"


async def _copy_on(http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> None:
    """A request on that worker: it builds its copy of the session (not the GET stream's
    home: that stream is open elsewhere)."""
    ping = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
    assert (await http.post(url, json=ping, headers=headers)).status_code == 200


@pytest.mark.parametrize("copy_on_both", [True, False])
async def test_a_resource_update_made_on_one_worker_reaches_a_subscriber_on_another_once(
    cluster: Cluster, copy_on_both: bool
) -> None:
    first_worker, second_worker = cluster.workers
    uri, later = f"notes://bus-{copy_on_both}", f"notes://bus-{copy_on_both}-later"
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, first_worker)
        for request_id, each in enumerate((uri, later), 2):
            subscribe = {"jsonrpc": "2.0", "id": request_id, "method": "resources/subscribe",
                         "params": {"uri": each}}  # fmt: skip
            answer = await http.post(first_worker, json=subscribe, headers=headers)
            assert answer.status_code == 200
        async with http.stream("GET", first_worker, headers=headers) as response:
            stream = Stream(response)
            if copy_on_both:  # the second worker holds a copy that is not the stream's home
                await _copy_on(http, second_worker, headers)
            other = await open_session(http, second_worker)  # the change, made elsewhere
            updates: list[Message] = []
            for request_id, each in enumerate((uri, later), 4):
                touched = await http.post(second_worker, json=call(request_id, "touch", uri=each),
                                          headers=other)  # fmt: skip
                assert touched.status_code == 200
                update = await first(stream, method("resources/updated"), [])
                updates.append(update)
    # once each: a duplicate of the first would have come before the second
    assert [u["params"]["uri"] for u in updates] == [uri, later]


async def test_list_changed_made_on_one_worker_reaches_every_worker_s_clients(
    cluster: Cluster,
) -> None:
    first_worker, second_worker = cluster.workers
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, first_worker)
        async with http.stream("GET", first_worker, headers=headers) as response:
            stream = Stream(response)
            other = await open_session(http, second_worker)
            added = await http.post(second_worker, json=call(2, "add_tool", name="late_tool"),
                                    headers=other)  # fmt: skip
            assert added.status_code == 200
            seen: list[Message] = []
            changed = await first(stream, method("list_changed"), seen)
    assert changed["method"] == "notifications/tools/list_changed"


async def test_a_per_request_listen_stream_hears_an_update_made_on_another_worker(
    cluster: Cluster,
) -> None:
    """2026-07-28: subscriptions/listen on one worker, the update on the other."""
    first_worker, second_worker = cluster.workers
    uri = "notes://listen-bus"
    subscribe = listen("l1", resourceSubscriptions=[uri])
    touch = tool_call(2, "touch", uri=uri)
    async with (
        httpx.AsyncClient(timeout=10) as http,
        http.stream(
            "POST", first_worker, json=subscribe, headers=headers_for(subscribe)
        ) as response,
    ):
        stream, seen = Stream(response), []
        await first(stream, method("subscriptions/acknowledged"), seen)
        touched = await http.post(second_worker, json=touch, headers=headers_for(touch))
        assert touched.status_code == 200, touched.text
        update = await first(stream, method("resources/updated"), seen)
    assert update["params"]["uri"] == uri


async def test_a_get_stream_reopened_on_another_worker_takes_the_session_s_messages(
    cluster: Cluster,
) -> None:
    """The GET stream was open on the second worker, then opens on the first: the second
    stops keeping the session's messages and sends them to the first."""
    first_worker, second_worker = cluster.workers
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, second_worker)
        async with http.stream("GET", second_worker, headers=headers) as response:
            assert response.status_code == 200  # the second worker is home, then the stream ends
        async with http.stream("GET", first_worker, headers=headers) as response:
            stream = Stream(response)
            arrived = None
            for attempt in range(5):  # "home moved" crosses the bus while the POST is made
                told = call(10 + attempt, "announce", text=f"hello {attempt}")
                assert (await http.post(second_worker, json=told, headers=headers)).is_success
                with contextlib.suppress(TimeoutError):
                    arrived = await asyncio.wait_for(
                        stream.first(method("notifications/message"), []), 1
                    )
                    break
    assert arrived is not None and arrived["params"]["data"].startswith("hello")
