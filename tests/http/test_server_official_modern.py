"""The official SDK's client (`mcp` 2.3.0) against mcpkit's Streamable HTTP app on uvicorn,
in both eras, with the wire recorded between them.

The server is `tests/modern_server.py`'s `make_server()` behind `Wiretap` (`servers.py`), an
ASGI middleware that notes each HTTP request (method, headers, JSON body) and its answer
(status, content type, JSON body when there is one). The official client runs in auto mode,
pinned to 2026-07-28 and in the handshake era; its elicitation, sampling and roots callbacks
answer `input_required` rounds (2026-07-28) and real server->client requests (handshake)
alike.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client, types
from mcp.shared.exceptions import MCPError

from ..modern_server import make_server
from ..official_modern_client import (
    ERA_OF_MODE,
    LANDMARK,
    LEGACY,
    MODERN,
    ROOTS,
    TRIP,
    Asked,
    check_subscription_ends_both_ways,
    official_client,
    say_the_word,
)
from .servers import Wiretap, serving

pytestmark = pytest.mark.interop

INTERVIEW = {"action": "accept", **TRIP, "landmark": LANDMARK, "roots": ROOTS}


async def call_structured(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert result.is_error is False, result.content
    return result.structured_content


# -- (a), (b), (c): the basics in each era -----------------------------------------------------


@pytest.mark.parametrize("mode", list(ERA_OF_MODE))
async def test_official_client_over_http_in_each_era(mode: str) -> None:
    era = ERA_OF_MODE[mode]
    tap = Wiretap(make_server().http_app())
    async with serving(tap) as base:
        async with official_client(base + "/mcp", mode) as client:
            assert client.protocol_version == era
            assert await call_structured(client, "whoami") == {
                "protocol_version": era,
                "modern": era == MODERN,
                "client_name": "mcp",
            }
            listed = await client.list_tools()
            tools = {tool.name: tool for tool in listed.tools}
            assert {"whoami", "add", "route", "interview", "interview_at_once"} <= set(tools)
            assert tools["route"].input_schema["properties"]["region"]["x-mcp-header"] == "Region"
            assert await call_structured(client, "add", a=40, b=2) == {"result": 42}

            read = await client.read_resource("note://groceries")
            note = read.contents[0]
            assert isinstance(note, types.TextResourceContents)
            assert note.text == f"note groceries at {era}"
            prompt = await client.get_prompt("review", {"code": "x = 1"})
            content = prompt.messages[0].content
            assert isinstance(content, types.TextContent)
            assert content.text == f"Review this ({era}): x = 1"

        # What went over the wire.
        rpc = [entry["body"]["method"] for entry in tap.posts()]
        assert all(entry["status"] in (200, 202) for entry in tap.seen)
        if era == MODERN:
            # Sessionless: every request stands alone, stamped with its version and method.
            assert rpc[0] == ("server/discover" if mode == "auto" else "tools/call")
            assert "initialize" not in rpc
            assert {entry["method"] for entry in tap.seen} == {"POST"}
            for entry in tap.posts():
                assert "mcp-session-id" not in entry["headers"]
                assert entry["headers"]["mcp-protocol-version"] == MODERN
                assert entry["headers"]["mcp-method"] == entry["body"]["method"]
                meta = entry["body"]["params"]["_meta"]
                assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN
        else:
            assert rpc[:2] == ["initialize", "notifications/initialized"]
            assert tap.seen[0]["answer"]["result"]["protocolVersion"] == LEGACY
            session_id = tap.seen[1]["headers"]["mcp-session-id"]
            assert all(e["headers"]["mcp-session-id"] == session_id for e in tap.seen[1:])
            assert tap.seen[-1]["method"] == "DELETE"
            assert not any("mcp-method" in entry["headers"] for entry in tap.seen)


# -- (d): the same asking handlers, two ways ---------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{}, {"response_mode": "json"}, {"response_mode": "sse"}, {"stateless": True}],
    ids=["auto-response", "json", "sse", "stateless"],
)
async def test_modern_asks_are_input_required_rounds(options: dict[str, Any]) -> None:
    asked = Asked()
    tap = Wiretap(make_server().http_app(**options))
    async with serving(tap) as base, official_client(base + "/mcp", MODERN, asked) as client:
        assert await call_structured(client, "interview") == {
            **INTERVIEW,
            "protocol_version": MODERN,
        }
        assert asked.kinds() == ["elicit", "sample", "roots"]
        keys = asked.request_ids()
        assert keys == ["elicit-1", "sample-2", "roots-3"]

        plan = await client.get_prompt("plan", {})
        assert plan.messages[0].content.text == "Plan 3 nights in Lisbon."  # type: ignore[union-attr]
        read = await client.read_resource("workspace://roots")
        assert read.contents[0].text == " ".join(ROOTS)  # type: ignore[union-attr]
        assert await call_structured(client, "run_counts") == {
            "interview": 4,
            "plan": 2,
            "workspace": 2,
        }

    # Four POSTs of the same tools/call: each answered input_required but the last, and
    # nothing else (the server sent no request of its own); each retry carried the new answer
    # and the server's sealed state, byte for byte.
    rounds = tap.calls_to("interview")
    assert len(rounds) == 4
    assert [len(entry["messages"]) for entry in rounds] == [1, 1, 1, 1]
    streamed = options.get("response_mode") == "sse"
    assert {entry["content_type"] for entry in rounds} == {
        "text/event-stream" if streamed else "application/json"
    }
    answers = [entry["answer"]["result"] for entry in rounds]
    assert [a["resultType"] for a in answers] == ["input_required"] * 3 + ["complete"]
    assert [set(a["inputRequests"]) for a in answers[:3]] == [
        {"elicit-1"},
        {"sample-2"},
        {"roots-3"},
    ]
    assert [
        a["inputRequests"][key]["method"] for a, key in zip(answers[:3], keys, strict=True)
    ] == [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]
    params = [entry["body"]["params"] for entry in rounds]
    assert "requestState" not in params[0] and "inputResponses" not in params[0]
    for before, retry, key in zip(answers[:3], params[1:], keys, strict=True):
        assert retry["requestState"] == before["requestState"]
        assert set(retry["inputResponses"]) == {key}
    assert params[1]["inputResponses"]["elicit-1"] == {"action": "accept", "content": TRIP}
    assert all(entry["status"] == 200 for entry in tap.seen)
    assert {entry["method"] for entry in tap.seen} == {"POST"}
    assert not any(
        message.get("method") == "elicitation/create"
        for entry in tap.seen
        for message in entry["messages"]
    )


async def test_handshake_asks_are_real_requests_on_the_call_stream() -> None:
    asked = Asked()
    tap = Wiretap(make_server().http_app())
    async with serving(tap) as base, official_client(base + "/mcp", "legacy", asked) as client:
        assert await call_structured(client, "interview") == {
            **INTERVIEW,
            "protocol_version": LEGACY,
        }
        assert asked.kinds() == ["elicit", "sample", "roots"]
        ids = asked.request_ids()
        assert all(isinstance(request_id, int) for request_id in ids)
        plan = await client.get_prompt("plan", {})
        assert plan.messages[0].content.text == "Plan 3 nights in Lisbon."  # type: ignore[union-attr]
        read = await client.read_resource("workspace://roots")
        assert read.contents[0].text == " ".join(ROOTS)  # type: ignore[union-attr]
        assert await call_structured(client, "run_counts") == {
            "interview": 1,
            "plan": 1,
            "workspace": 1,
        }

    # One POST of the call, answered with an event stream that carried the server's three
    # requests; the client POSTed each answer back (202), with the ids the server chose.
    (call,) = tap.calls_to("interview")
    assert call["content_type"] == "text/event-stream"
    replies = [
        entry
        for entry in tap.seen
        if isinstance(entry["body"], dict)
        and "result" in entry["body"]
        and "method" not in entry["body"]
    ]
    assert [entry["body"]["id"] for entry in replies[:3]] == ids[:3]
    assert all(entry["status"] == 202 for entry in replies)
    assert replies[0]["body"]["result"] == {"action": "accept", "content": TRIP}
    assert replies[1]["body"]["result"]["content"]["text"] == LANDMARK
    assert [root["uri"] for root in replies[2]["body"]["result"]["roots"]] == ROOTS


# -- (e): both eras at once on one server ------------------------------------------------------


async def test_a_modern_and_a_handshake_client_at_once() -> None:
    """Both clients are held mid-ask together (each elicitation answer waits for the other
    client's): the handshake client's handler is suspended on a real request while the
    modern client sits between rounds."""
    both_asked = asyncio.Barrier(2)
    modern = Asked(before_elicit_answer=both_asked.wait)
    legacy = Asked(before_elicit_answer=both_asked.wait)
    tap = Wiretap(make_server().http_app())

    async def session(url: str, mode: str, asked: Asked) -> tuple[Any, Any]:
        async with official_client(url, mode, asked) as client:
            return await call_structured(client, "whoami"), await call_structured(
                client, "interview"
            )

    async with serving(tap) as base:
        (modern_seen, modern_result), (legacy_seen, legacy_result) = await asyncio.wait_for(
            asyncio.gather(
                session(base + "/mcp", MODERN, modern), session(base + "/mcp", "legacy", legacy)
            ),
            8,
        )
        async with official_client(base + "/mcp", MODERN) as client:
            counts = await call_structured(client, "run_counts")

    assert (modern_seen["protocol_version"], modern_seen["modern"]) == (MODERN, True)
    assert (legacy_seen["protocol_version"], legacy_seen["modern"]) == (LEGACY, False)
    assert modern_result == {**INTERVIEW, "protocol_version": MODERN}
    assert legacy_result == {**INTERVIEW, "protocol_version": LEGACY}
    assert modern.request_ids() == ["elicit-1", "sample-2", "roots-3"]
    assert all(isinstance(request_id, int) for request_id in legacy.request_ids())
    assert counts == {"interview": 5}  # four rounds for one, one run for the other
    sessions = {e["headers"].get("mcp-session-id") for e in tap.calls_to("interview")}
    assert len(sessions - {None}) == 1  # the handshake client's; the modern calls had none
    assert len(tap.calls_to("interview")) == 5


# -- (f): x-mcp-header parameters ---------------------------------------------------------------


async def test_listed_header_parameters_travel_as_mcp_param_headers() -> None:
    tap = Wiretap(make_server().http_app())
    async with serving(tap) as base, official_client(base + "/mcp", MODERN) as client:
        await client.list_tools()
        plain = await client.call_tool("route", {"region": "us-west1", "query": "rows"})
        encoded = await client.call_tool("route", {"region": "Hello, 世界", "query": "rows"})
    assert plain.content[0].text == "us-west1: rows"  # type: ignore[union-attr]
    assert encoded.content[0].text == "Hello, 世界: rows"  # type: ignore[union-attr]
    calls = tap.calls_to("route")
    assert [entry["status"] for entry in calls] == [200, 200]
    assert [entry["headers"]["mcp-param-region"] for entry in calls] == [
        "us-west1",
        "=?base64?SGVsbG8sIOS4lueVjA==?=",
    ]
    assert [entry["headers"]["mcp-name"] for entry in calls] == ["route", "route"]


async def test_an_unlisted_header_tool_is_refused_then_relisted_and_retried() -> None:
    """Called before listing, the official client cannot know the header: we refuse with 400
    and HeaderMismatch (-32020), it lists the tools and sends the call again, with the
    header, and that succeeds."""
    tap = Wiretap(make_server().http_app())
    async with serving(tap) as base, official_client(base + "/mcp", MODERN) as client:
        result = await client.call_tool("route", {"region": "eu-west1", "query": "rows"})
    assert result.is_error is False
    assert result.content[0].text == "eu-west1: rows"  # type: ignore[union-attr]

    rpc = [(entry["body"]["method"], entry["status"]) for entry in tap.posts()]
    assert rpc == [("tools/call", 400), ("tools/list", 200), ("tools/call", 200)]
    refused, _, retried = tap.posts()
    assert "mcp-param-region" not in refused["headers"]
    assert refused["answer"]["error"]["code"] == -32020
    assert refused["answer"]["id"] == refused["body"]["id"]
    assert retried["headers"]["mcp-param-region"] == "eu-west1"


async def test_a_handshake_client_calls_a_header_tool_without_headers() -> None:
    tap = Wiretap(make_server().http_app())
    async with serving(tap) as base, official_client(base + "/mcp", "legacy") as client:
        await client.list_tools()
        result = await client.call_tool("route", {"region": "us-west1", "query": "rows"})
    assert result.content[0].text == "us-west1: rows"  # type: ignore[union-attr]
    (call,) = tap.calls_to("route")
    assert call["status"] == 200
    assert not any(name.startswith("mcp-param-") for name in call["headers"])


# -- subscriptions and cancellation over HTTP --------------------------------------------------


async def test_modern_subscription_over_http() -> None:
    tap = Wiretap(make_server().http_app())
    async with serving(tap) as base, official_client(base + "/mcp", MODERN) as client:
        async with client.listen(
            tools_list_changed=True, resource_subscriptions=["note://a"]
        ) as sub:
            assert sub.honored.tools_list_changed is True
            await client.call_tool("grow", {"tool_name": "extra"})
            await client.call_tool("touch", {"name": "a"})
            events: list[Any] = []
            async with asyncio.timeout(5):
                async for event in sub:
                    events.append(event)
                    if len(events) == 2:
                        break
        assert [type(event).__name__ for event in events] == ["ToolsListChanged", "ResourceUpdated"]
        assert "extra" in {tool.name for tool in (await client.list_tools()).tools}
        await check_subscription_ends_both_ways(client)
    listens = tap.posts("subscriptions/listen")
    assert len(listens) == 3
    listen = listens[0]
    assert listen["content_type"] == "text/event-stream"
    assert listen["headers"]["mcp-method"] == "subscriptions/listen"


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_a_timed_out_call_over_http_cancels_the_handler(mode: str) -> None:
    async with (
        serving(make_server().http_app()) as base,
        official_client(base + "/mcp", mode) as client,
    ):
        # Up and answering first: a pinned 2026-07-28 client has no handshake to wait for,
        # and a call cancelled before the server read it would never start its handler.
        assert await call_structured(client, "run_counts") == {}
        with pytest.raises(MCPError) as timed_out:
            await client.call_tool("nap", {"seconds": 30}, read_timeout_seconds=0.2)
        assert timed_out.value.error.code == -32001  # the official client's own timeout code
        for _ in range(100):
            if await call_structured(client, "run_counts") == {"nap": 1, "nap cancelled": 1}:
                break
            await asyncio.sleep(0.02)
        assert await call_structured(client, "run_counts") == {"nap": 1, "nap cancelled": 1}


async def test_concurrent_asking_calls_in_both_eras_keep_their_own_answers() -> None:
    """Ten calls at once from each of a modern and a handshake client on one server, each
    call asking twice: every answer goes back to the call that asked."""
    words = [f"w{n}" for n in range(10)]

    async def parrot_all(url: str, mode: str) -> list[str]:
        async with Client(url, mode=mode, elicitation_callback=say_the_word) as client:
            results = await asyncio.gather(
                *(client.call_tool("parrot", {"word": f"{mode}-{w}"}) for w in words)
            )
        return [result.content[0].text for result in results]  # type: ignore[union-attr]

    async with serving(make_server().http_app()) as base:
        modern, legacy = await asyncio.gather(
            parrot_all(base + "/mcp", MODERN), parrot_all(base + "/mcp", "legacy")
        )
    assert modern == [f"{MODERN}-{w} {MODERN}-{w}" for w in words]
    assert legacy == [f"legacy-{w} legacy-{w}" for w in words]


async def test_every_round_of_an_asking_header_tool_carries_the_header() -> None:
    asked = Asked()
    tap = Wiretap(make_server().http_app())
    async with serving(tap) as base, official_client(base + "/mcp", MODERN, asked) as client:
        await client.list_tools()
        result = await client.call_tool("book", {"region": "eu-west1"})
    assert result.content[0].text == "eu-west1 -> Lisbon, 3 nights"  # type: ignore[union-attr]
    assert asked.request_ids() == ["elicit-1"]
    rounds = tap.calls_to("book")
    assert [entry["status"] for entry in rounds] == [200, 200]
    assert [entry["headers"]["mcp-param-region"] for entry in rounds] == ["eu-west1"] * 2
    assert "requestState" in rounds[1]["body"]["params"]


async def test_names_that_are_not_plain_ascii_travel_encoded_in_mcp_name() -> None:
    tap = Wiretap(make_server().http_app())
    async with serving(tap) as base, official_client(base + "/mcp", MODERN) as client:
        read = await client.read_resource("note://café")
        prompt = await client.get_prompt("grüße", {"name": "Jörg"})
        spaced = await client.read_resource("note://a b")
    assert read.contents[0].text == f"note café at {MODERN}"  # type: ignore[union-attr]
    assert prompt.messages[0].content.text == "Grüß Jörg!"  # type: ignore[union-attr]
    assert spaced.contents[0].text == f"note a b at {MODERN}"  # type: ignore[union-attr]
    assert [(entry["status"], entry["headers"]["mcp-name"]) for entry in tap.posts()] == [
        (200, "=?base64?bm90ZTovL2NhZsOp?="),
        (200, "=?base64?Z3LDvMOfZQ==?="),
        (200, "note://a b"),
    ]


async def test_an_exchange_driven_by_hand_and_resumed_by_another_client() -> None:
    """The official client's manual loop (`session.call_tool(..., allow_input_required=True)`):
    the first answer is input_required; a retry without the answers asks again; a second
    client resumes from the persisted state and finishes; a tampered state is -32602."""
    answer = types.ElicitResult(action="accept", content={"city": "Oslo", "nights": 2})
    async with serving(make_server().http_app()) as base:
        async with official_client(base + "/mcp", MODERN, Asked()) as first:
            asked = await first.session.call_tool("interview", {}, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult)
            assert set(asked.input_requests or {}) == {"elicit-1"}
            state = asked.request_state
            assert state is not None
            again = await first.session.call_tool(
                "interview", {}, request_state=state, allow_input_required=True
            )
            assert isinstance(again, types.InputRequiredResult)
            assert set(again.input_requests or {}) == {"elicit-1"}

        resumer = Asked()
        async with official_client(base + "/mcp", MODERN, resumer) as second:
            done = await second.call_tool(
                "interview", {}, input_responses={"elicit-1": answer}, request_state=state
            )
            assert done.structured_content == {
                **INTERVIEW,
                "city": "Oslo",
                "nights": 2,
                "landmark": LANDMARK,
                "protocol_version": MODERN,
            }
            assert resumer.request_ids() == ["sample-2", "roots-3"]  # the elicitation was done
            assert resumer.calls[0][2] == "Name one landmark in Oslo."

            tampered = state[:-6] + ("AAAAAA" if not state.endswith("AAAAAA") else "BBBBBB")
            with pytest.raises(MCPError) as refused:
                await second.call_tool(
                    "interview", {}, input_responses={"elicit-1": answer}, request_state=tampered
                )
            assert refused.value.error.code == -32602


@pytest.mark.parametrize("ttl", [None, 0], ids=["default-ttl", "ttl-0"])
async def test_the_official_client_caches_lists_as_long_as_we_say(ttl: int | None) -> None:
    """Our tools/list carries ttlMs (60 s public by default) and the official client serves
    repeat listings from its cache for that long: a tool added meanwhile shows after a
    refresh (or a subscription event). With `Server(cache={"tools/list": 0})` every listing
    goes to the server."""
    server = make_server() if ttl is None else make_server(cache={"tools/list": ttl})
    tap = Wiretap(server.http_app())
    async with serving(tap) as base, official_client(base + "/mcp", MODERN) as client:
        await client.list_tools()
        await client.call_tool("grow", {"tool_name": "extra"})
        again = {tool.name for tool in (await client.list_tools()).tools}
        refreshed = await client.list_tools(cache_mode="refresh")
    ttl_ms = [entry["answer"]["result"]["ttlMs"] for entry in tap.posts("tools/list")]
    if ttl is None:
        assert "extra" not in again
        assert ttl_ms == [60_000, 60_000]
    else:
        assert "extra" in again
        assert ttl_ms == [0, 0, 0]
    assert "extra" in {tool.name for tool in refreshed.tools}
