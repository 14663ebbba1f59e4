"""The official SDK's client (`mcp` 2.3.0) against mcpkit's server over stdio, in both eras.

Our server is `tests/modern_server.py` in a real subprocess. The official client runs in
auto mode (probes `server/discover`, stays on 2026-07-28), pinned to 2026-07-28 (no probe),
and pinned to the handshake era (`initialize`, 2025-11-25). The handlers are the same code
in every case; they report the protocol version they saw, which is how these tests know
what the server was spoken to in. Asking handlers (elicitation, sampling, roots) are real
server->client requests for the handshake client and `input_required` rounds, answered by
the official client's retry loop, at 2026-07-28. (`test_interop_official.py` covers the
handshake revisions one by one and the auto-mode probe itself.)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")

from mcp import StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from .official_modern_client import (  # noqa: E402
    ERA_OF_MODE,
    LANDMARK,
    MODERN,
    ROOTS,
    TRIP,
    Asked,
    check_subscription_ends_both_ways,
    official_client,
    say_the_word,
)

pytestmark = pytest.mark.interop

OUR_SERVER = StdioServerParameters(
    command=sys.executable, args=[str(Path(__file__).parent / "modern_server.py")]
)
TRIP_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
    "required": ["city", "nights"],
}


@pytest.fixture
def errlog() -> Iterator[IO[str]]:
    """Where the server's stderr goes (the SDK wants a real file)."""
    with tempfile.TemporaryFile("w+") as file:
        yield file


def connect(mode: str, errlog: IO[str], asked: Asked | None = None) -> mcp.Client:
    return official_client(stdio_client(OUR_SERVER, errlog=errlog), mode, asked)


def expected_interview(version: str) -> dict[str, Any]:
    return {
        "action": "accept",
        **TRIP,
        "landmark": LANDMARK,
        "roots": ROOTS,
        "protocol_version": version,
    }


async def run_counts(client: mcp.Client) -> dict[str, int]:
    counted = await client.call_tool("run_counts", {})
    assert counted.structured_content is not None
    return dict(counted.structured_content)


@pytest.mark.parametrize("mode", list(ERA_OF_MODE))
async def test_tools_resources_and_prompts_in_each_era(mode: str, errlog: IO[str]) -> None:
    era = ERA_OF_MODE[mode]
    async with connect(mode, errlog) as client:
        assert client.protocol_version == era
        if era == MODERN:
            assert client.session.initialize_result is None
            assert client.session.discover_result is not None
        else:
            assert client.session.initialize_result is not None
        if mode != MODERN:  # a pinned client synthesizes its discover result: no server info
            assert client.session.server_info is not None
            assert (client.session.server_info.name, client.session.server_info.version) == (
                "modern-interop",
                "2.0.0",
            )

        # What the server saw of the request: the version the client speaks, and the era.
        whoami = await client.call_tool("whoami", {})
        assert whoami.is_error is False
        assert whoami.structured_content == {
            "protocol_version": era,
            "modern": era == MODERN,
            "client_name": "mcp",
        }

        listed = await client.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        assert [tool.name for tool in listed.tools] == sorted(tools)
        assert {"whoami", "add", "route", "interview", "interview_at_once"} <= set(tools)
        assert tools["add"].input_schema["required"] == ["a", "b"]
        assert tools["whoami"].output_schema is not None
        assert set(tools["whoami"].output_schema["properties"]) == {
            "protocol_version",
            "modern",
            "client_name",
        }

        added = await client.call_tool("add", {"a": 40, "b": 2})
        assert added.is_error is False
        assert added.structured_content == {"result": 42}
        assert [(block.type, block.text) for block in added.content] == [("text", "42")]  # type: ignore[union-attr]

        read = await client.read_resource("note://groceries")
        assert len(read.contents) == 1
        note = read.contents[0]
        assert isinstance(note, types.TextResourceContents)
        assert (str(note.uri), note.text) == ("note://groceries", f"note groceries at {era}")

        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert len(prompt.messages) == 1
        assert prompt.messages[0].role == "user"
        content = prompt.messages[0].content
        assert isinstance(content, types.TextContent)
        assert content.text == f"Review this ({era}): x = 1"


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_elicit_sample_and_roots_from_one_tool_in_each_era(
    mode: str, errlog: IO[str]
) -> None:
    era = ERA_OF_MODE[mode]
    asked = Asked()
    async with connect(mode, errlog, asked) as client:
        result = await client.call_tool("interview", {})
        assert result.is_error is False
        assert result.structured_content == expected_interview(era)

        # The same callbacks answered both ways, in the handler's order; the sampling prompt
        # shows the elicited answer reached the handler before it sampled.
        assert asked.kinds() == ["elicit", "sample", "roots"]
        assert asked.calls[0][2] == TRIP_SCHEMA
        assert asked.calls[1][2] == "Name one landmark in Lisbon."
        counts = await run_counts(client)
        if era == MODERN:
            # input_required rounds: the asks came as the server's keys, and the handler ran
            # once per round (three asks, one after the other: four runs).
            assert asked.request_ids() == ["elicit-1", "sample-2", "roots-3"]
            assert counts == {"interview": 4}
        else:
            # Real server->client requests, each with its own JSON-RPC id, during one run.
            ids = asked.request_ids()
            assert all(isinstance(request_id, int) for request_id in ids)
            assert len(set(ids)) == 3
            assert counts == {"interview": 1}


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_gathered_asks_and_asking_prompts_and_resources(mode: str, errlog: IO[str]) -> None:
    era = ERA_OF_MODE[mode]
    asked = Asked()
    async with connect(mode, errlog, asked) as client:
        gathered = await client.call_tool("interview_at_once", {})
        assert gathered.structured_content == expected_interview(era)
        assert sorted(asked.kinds()) == ["elicit", "roots", "sample"]

        plan = await client.get_prompt("plan", {})
        content = plan.messages[0].content
        assert isinstance(content, types.TextContent)
        assert content.text == "Plan 3 nights in Lisbon."

        read = await client.read_resource("workspace://roots")
        workspace = read.contents[0]
        assert isinstance(workspace, types.TextResourceContents)
        assert workspace.text == " ".join(ROOTS)

        assert asked.kinds()[3:] == ["elicit", "roots"]
        counts = await run_counts(client)
        if era == MODERN:
            # One round for the three gathered asks (keys by position), one for each of the
            # prompt's and the resource's single asks.
            assert sorted(asked.request_ids()[:3]) == ["elicit-1", "roots-3", "sample-2"]
            assert asked.request_ids()[3:] == ["elicit-1", "roots-1"]
            assert counts == {"interview_at_once": 2, "plan": 2, "workspace": 2}
        else:
            assert all(isinstance(request_id, int) for request_id in asked.request_ids())
            assert counts == {"interview_at_once": 1, "plan": 1, "workspace": 1}


async def test_a_modern_ask_the_client_cannot_answer_is_a_capability_error(
    errlog: IO[str],
) -> None:
    """No callbacks: the official client declares neither elicitation nor roots, and sees
    -32021 with the capability that was missing, before anything is asked."""
    async with connect(MODERN, errlog) as client:
        with pytest.raises(MCPError) as elicit:
            await client.call_tool("interview", {})
        assert elicit.value.error.code == -32021
        assert elicit.value.error.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}

        with pytest.raises(MCPError) as roots:
            await client.read_resource("workspace://roots")
        assert roots.value.error.code == -32021
        assert roots.value.error.data == {"requiredCapabilities": {"roots": {}}}

        # Each failed before its first ask: the handlers ran once each, and the
        # connection still works.
        assert await run_counts(client) == {"interview": 1, "workspace": 1}


# -- beyond the basics: notifications, errors, completion, cancellation, subscriptions ---------


@pytest.mark.parametrize("log_level", ["info", None])
async def test_modern_progress_and_opted_in_logs(log_level: str | None, errlog: IO[str]) -> None:
    """Progress reaches the official client's callback; log messages only when the request
    opted in with a level (`Client(log_level=...)` stamps it into every request's _meta)."""
    logs: list[tuple[str, Any]] = []
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append((params.level, params.data))

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    target = stdio_client(OUR_SERVER, errlog=errlog)
    async with mcp.Client(target, mode=MODERN, logging_callback=on_log, log_level=log_level) as c:
        result = await c.call_tool("steps", {"count": 3}, progress_callback=on_progress)
        assert result.content[0].text == "3 steps"  # type: ignore[union-attr]
        for _ in range(20):  # log messages reach the callback in tasks of their own
            await asyncio.sleep(0.02)
            if len(logs) >= 3:
                break
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    if log_level is None:
        assert logs == []
    else:
        assert logs == [("info", "did step 1"), ("info", "did step 2"), ("info", "did step 3")]


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_errors_and_completion_in_each_era(mode: str, errlog: IO[str]) -> None:
    era = ERA_OF_MODE[mode]
    async with connect(mode, errlog) as client:
        failed = await client.call_tool("fail", {"reason": "kaput"})
        assert failed.is_error is True
        assert failed.content[0].text == "kaput"  # type: ignore[union-attr]

        invalid = await client.call_tool("add", {"a": "two", "b": 1})
        assert invalid.is_error is True
        assert "a: expected integer" in invalid.content[0].text  # type: ignore[union-attr]

        with pytest.raises(MCPError) as unknown:
            await client.call_tool("no_such_tool", {})
        assert unknown.value.error.code == -32602
        with pytest.raises(MCPError) as no_prompt:
            await client.get_prompt("no_such_prompt", {})
        assert no_prompt.value.error.code == -32602
        with pytest.raises(MCPError) as missing:
            await client.read_resource("nothing://here")
        # Resource not found: -32602 from 2026-07-28 on, -32002 before.
        assert missing.value.error.code == (-32602 if era == MODERN else -32002)
        assert missing.value.error.data == {"uri": "nothing://here"}

        completed = await client.complete(
            types.PromptReference(type="ref/prompt", name="review"), {"name": "code", "value": "p"}
        )
        assert completed.completion.values == ["print(1)", "pass"]


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_a_timed_out_call_cancels_the_handler(mode: str, errlog: IO[str]) -> None:
    async with connect(mode, errlog) as client:
        # Up and answering first: a pinned 2026-07-28 client has no handshake to wait for,
        # and a call cancelled before the server read it would never start its handler.
        assert await run_counts(client) == {}
        with pytest.raises(MCPError) as timed_out:
            await client.call_tool("nap", {"seconds": 30}, read_timeout_seconds=0.2)
        assert timed_out.value.error.code == -32001  # the official client's own timeout code
        for _ in range(100):  # the cancellation notice reaches the server soon after
            if await run_counts(client) == {"nap": 1, "nap cancelled": 1}:
                break
            await asyncio.sleep(0.02)
        assert await run_counts(client) == {"nap": 1, "nap cancelled": 1}


async def test_modern_subscriptions_deliver_list_changes_and_updates(errlog: IO[str]) -> None:
    async with connect(MODERN, errlog) as client:
        before = {tool.name for tool in (await client.list_tools()).tools}
        async with client.listen(
            tools_list_changed=True, resource_subscriptions=["note://a"]
        ) as sub:
            assert sub.honored.tools_list_changed is True
            assert sub.honored.resource_subscriptions == ["note://a"]
            await client.call_tool("grow", {"tool_name": "extra"})
            await client.call_tool("touch", {"name": "b"})  # not subscribed: not delivered
            await client.call_tool("touch", {"name": "a"})
            events: list[Any] = []
            async with asyncio.timeout(5):
                async for event in sub:
                    events.append(event)
                    if len(events) == 2:
                        break
        assert [type(event).__name__ for event in events] == ["ToolsListChanged", "ResourceUpdated"]
        assert events[1].uri == "note://a"
        # The change evicted the official client's cached listing: the new tool shows.
        after = {tool.name for tool in (await client.list_tools()).tools}
        assert after == before | {"extra"}
        await check_subscription_ends_both_ways(client)


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_concurrent_asking_calls_keep_their_own_answers(mode: str, errlog: IO[str]) -> None:
    """Ten calls at once on one connection, each asking twice: every answer goes back to the
    call that asked (input_required rounds with their own request state at 2026-07-28,
    server->client requests with their own ids in the handshake era)."""
    words = [f"w{n}" for n in range(10)]
    target = stdio_client(OUR_SERVER, errlog=errlog)
    async with mcp.Client(target, mode=mode, elicitation_callback=say_the_word) as client:
        results = await asyncio.gather(
            *(client.call_tool("parrot", {"word": word}) for word in words)
        )
    assert [result.content[0].text for result in results] == [f"{w} {w}" for w in words]  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_change_notifications_only_where_asked_for(mode: str, errlog: IO[str]) -> None:
    """A 2026-07-28 client gets no notification it did not subscribe to (list changes and
    updates travel on subscriptions/listen); a handshake client gets list_changed from its
    session and resources/updated for what it subscribed to with resources/subscribe."""
    notes: list[Any] = []

    async def on_message(message: Any) -> None:
        notes.append(message)

    target = stdio_client(OUR_SERVER, errlog=errlog)
    async with mcp.Client(target, mode=mode, message_handler=on_message) as client:
        if mode == "legacy":
            with pytest.warns(mcp.MCPDeprecationWarning):
                await client.subscribe_resource("note://a")
        await client.call_tool("grow", {"tool_name": "extra"})
        await client.call_tool("touch", {"name": "b"})
        await client.call_tool("touch", {"name": "a"})
        # The official client hands notifications to the handler in tasks of their own:
        # give them time to land (the expected two, or, for the modern client, anything).
        for _ in range(20):
            await asyncio.sleep(0.02)
            if len(notes) >= 2:
                break
    if mode == "legacy":
        assert [type(note).__name__ for note in notes] == [
            "ToolListChangedNotification",
            "ResourceUpdatedNotification",
        ]
        assert notes[1].params.uri == "note://a"
    else:
        assert notes == []


class ToolSampler:
    """A sampling callback whose model calls the tool it was offered."""

    def __init__(self) -> None:
        self.offered: list[list[str]] = []

    async def __call__(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResultWithTools:
        self.offered.append([tool.name for tool in params.tools or []])
        call = types.ToolUseContent(
            type="tool_use", id="call-1", name="get_weather", input={"city": "Oslo"}
        )
        return types.CreateMessageResultWithTools(
            role="assistant", content=[call], model="interop-model", stop_reason="toolUse"
        )


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_sampling_with_tools_when_the_client_declares_them(
    mode: str, errlog: IO[str]
) -> None:
    sampler = ToolSampler()
    target = stdio_client(OUR_SERVER, errlog=errlog)
    declared = types.SamplingCapability(tools=types.SamplingToolsCapability())
    async with mcp.Client(
        target, mode=mode, sampling_callback=sampler, sampling_capabilities=declared
    ) as client:
        result = await client.call_tool("forecast", {"city": "Oslo"})
    assert result.is_error is False
    assert result.content[0].text == "tool_use get_weather (toolUse)"  # type: ignore[union-attr]
    assert sampler.offered == [["get_weather"]]


@pytest.mark.parametrize(
    "mode",
    [MODERN, "legacy"],
)
async def test_sampling_with_tools_is_not_sent_to_a_client_without_sampling_tools(
    mode: str, errlog: IO[str]
) -> None:
    sampler = ToolSampler()
    target = stdio_client(OUR_SERVER, errlog=errlog)
    async with mcp.Client(target, mode=mode, sampling_callback=sampler) as client:
        if mode == MODERN:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("forecast", {"city": "Oslo"})
            assert refused.value.error.code == -32021
            assert refused.value.error.data == {"requiredCapabilities": {"sampling": {"tools": {}}}}
        else:
            # As for any ask the client did not declare: a tool error, nothing sent.
            result = await client.call_tool("forecast", {"city": "Oslo"})
            assert result.is_error is True
    assert sampler.offered == []


@pytest.mark.parametrize(
    "mode",
    [MODERN, "legacy"],
)
async def test_form_elicitation_is_not_sent_to_a_url_only_client(
    mode: str, errlog: IO[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The official client declares both elicitation modes whenever it has a callback; we
    narrow its capability ad to URL mode only, as a URL-only client would declare it."""
    build = mcp.ClientSession._build_capabilities

    def url_only(self: mcp.ClientSession, version: str) -> types.ClientCapabilities:
        capabilities = build(self, version)
        capabilities.elicitation = types.ElicitationCapability(url=types.UrlElicitationCapability())
        return capabilities

    monkeypatch.setattr(mcp.ClientSession, "_build_capabilities", url_only)
    asked = Asked()
    async with connect(mode, errlog, asked) as client:
        if mode == MODERN:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("interview", {})
            assert refused.value.error.code == -32021
            assert refused.value.error.data == {
                "requiredCapabilities": {"elicitation": {"form": {}}}
            }
        else:
            result = await client.call_tool("interview", {})
            assert result.is_error is True
    assert asked.calls == []
