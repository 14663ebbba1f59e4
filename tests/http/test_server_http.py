"""mcpkit's Streamable HTTP server over real uvicorn on 127.0.0.1, driven by raw httpx requests
so that status codes, headers and SSE framing are checked exactly."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from mcpkit.protocol.http import event_stream

from .server_fixture import HEADERS, call, make_server, open_session, read_events, slow_finished
from .servers import serving


async def test_json_answer_when_the_handler_sends_nothing_else() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        session_id = headers["mcp-session-id"]
        assert session_id and all(0x21 <= ord(ch) <= 0x7E for ch in session_id)
        answer = await c.post("/mcp", headers=headers, json=call("add", a=2, b=3))
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        assert answer.json()["result"]["structuredContent"] == {"result": 5}


async def test_sse_when_the_handler_sends_first() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        body = call("chatty", token="t", steps=3)
        async with c.stream("POST", "/mcp", headers=headers, json=body) as answer:
            assert answer.status_code == 200
            assert answer.headers["content-type"] == "text/event-stream"
            assert answer.headers["x-accel-buffering"] == "no"
            assert answer.headers["mcp-session-id"] == headers["mcp-session-id"]
            events = await read_events(answer)
    primer, *messages = events
    assert primer.data == "" and primer.id is not None and primer.retry == 1000
    payloads = [json.loads(e.data) for e in messages]
    assert [p["params"]["progress"] for p in payloads[:3]] == [1, 2, 3]
    assert payloads[3]["id"] == 2 and payloads[3]["result"]["content"][0]["text"] == "chatted"
    ids = [e.id for e in events]
    assert len(set(ids)) == len(ids) and len({event_stream(i) for i in ids}) == 1  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "kind"), [("json", "application/json"), ("sse", "text/event-stream")]
)
async def test_response_mode_can_be_fixed(mode: str, kind: str) -> None:
    app = make_server().http_app(response_mode=mode)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        answer = await c.post("/mcp", headers=headers, json=call("chatty", token="t", steps=2))
        assert answer.headers["content-type"] == kind
        assert "chatted" in answer.text


async def test_request_checks() -> None:
    app = make_server().http_app(max_body=1000)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        only_json = {**headers, "accept": "application/json"}
        assert (await c.post("/mcp", headers=only_json, json=ping)).status_code == 406
        as_text = {**headers, "content-type": "text/plain"}
        assert (await c.post("/mcp", headers=as_text, json=ping)).status_code == 415
        big = await c.post("/mcp", headers=headers, content=b" " * 2000)
        assert big.status_code == 413
        broken = await c.post("/mcp", headers=headers, content=b"{nope")
        assert broken.status_code == 400
        assert broken.json()["id"] is None and broken.json()["error"]["code"] == -32700
        future = {**headers, "mcp-protocol-version": "2099-01-01"}
        assert (await c.post("/mcp", headers=future, json=ping)).status_code == 400
        unversioned = {k: v for k, v in headers.items() if k != "mcp-protocol-version"}
        assert (await c.post("/mcp", headers=unversioned, json=ping)).status_code == 200
        put = await c.put("/mcp", headers=headers, json=ping)
        assert put.status_code == 405 and put.headers["allow"] == "GET, POST, DELETE"
        anonymous = {k: v for k, v in headers.items() if k != "mcp-session-id"}
        assert (await c.post("/mcp", headers=anonymous, json=ping)).status_code == 400
        stranger = {**headers, "mcp-session-id": "nope"}
        assert (await c.post("/mcp", headers=stranger, json=ping)).status_code == 404
        get_json = {**headers, "accept": "application/json"}
        assert (await c.get("/mcp", headers=get_json)).status_code == 406
        assert (await c.get("/elsewhere")).status_code == 404


async def test_a_failed_handshake_leaves_no_session() -> None:
    app = make_server().http_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        bad = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
        answer = await c.post("/mcp", headers=HEADERS, json=bad)
        assert answer.status_code == 200 and answer.json()["error"]["code"] == -32602
        assert "mcp-session-id" not in answer.headers
        assert len(app.sessions) == 0


async def test_delete_ends_the_session() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        assert (await c.delete("/mcp", headers=headers)).status_code == 200
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        assert (await c.post("/mcp", headers=headers, json=ping)).status_code == 404
        assert (await c.delete("/mcp", headers=headers)).status_code == 404


async def test_server_request_travels_on_the_request_stream() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c, roots={})
        async with c.stream("POST", "/mcp", headers=headers, json=call("ask")) as answer:
            _primer, asked_event = await read_events(answer, 2)
            asked = json.loads(asked_event.data)
            assert asked["method"] == "roots/list"
            reply = {"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}}
            accepted = await c.post("/mcp", headers=headers, json=reply)
            assert accepted.status_code == 202
            rest = [json.loads(e.data) for e in await read_events(answer) if e.data]
        assert rest[-1]["result"]["content"][0]["text"] == "0 roots"


async def test_unrelated_messages_go_to_the_get_stream() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        get_headers = {**headers, "accept": "text/event-stream"}
        async with c.stream("GET", "/mcp", headers=get_headers) as stream:
            assert stream.status_code == 200
            second = await c.get("/mcp", headers=get_headers)
            assert second.status_code == 409  # one GET stream per session
            grown = await c.post("/mcp", headers=headers, json=call("grow", tool_name="extra"))
            assert grown.headers["content-type"] == "application/json"
            assert "list_changed" not in grown.text
            _primer, event = await read_events(stream, 2)
            events = [event]
        assert json.loads(events[0].data)["method"] == "notifications/tools/list_changed"


async def test_a_lost_stream_resumes_with_last_event_id() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        async with c.stream("POST", "/mcp", headers=headers, json=call("paced", token=1)) as answer:
            _primer, first = await read_events(answer, 2)
        assert json.loads(first.data)["params"]["progress"] == 1
        await asyncio.sleep(0.5)  # the rest is sent while nobody listens
        resume = {**headers, "accept": "text/event-stream", "last-event-id": first.id or ""}
        async with c.stream("GET", "/mcp", headers=resume) as again:
            assert again.status_code == 200
            replayed = [json.loads(e.data) for e in await read_events(again) if e.data]
        assert replayed[0]["params"]["progress"] == 2
        assert replayed[1]["result"]["content"][0]["text"] == "paced"
        assert len(replayed) == 2  # nothing of other streams, nothing twice


async def test_the_server_may_close_a_stream_early() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        async with c.stream(
            "POST", "/mcp", headers=headers, json=call("polled", token=1)
        ) as answer:
            events = await read_events(answer)  # ends without the answer
        assert [json.loads(e.data)["params"]["progress"] for e in events if e.data] == [1]
        assert events[0].retry == 1000
        resume = {**headers, "accept": "text/event-stream", "last-event-id": events[-1].id or ""}
        async with c.stream("GET", "/mcp", headers=resume) as again:
            rest = [json.loads(e.data) for e in await read_events(again) if e.data]
        assert rest[0]["params"]["progress"] == 2
        assert rest[1]["result"]["content"][0]["text"] == "polled"


async def test_no_priming_event_before_2025_11_25_and_keepalive_comments() -> None:
    app = make_server().http_app(keepalive=0.05)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c, "2025-06-18")
        body = call("paced", token=1, pause=0.3)
        async with c.stream("POST", "/mcp", headers=headers, json=body) as answer:
            raw = b"".join([chunk async for chunk in answer.aiter_bytes()])
        assert raw.startswith(b"id: ") and b"retry:" not in raw
        assert b"\ndata:\n" not in raw  # no event with empty data
        assert b": \n\n" in raw  # keep-alive comments while the tool paused


async def test_disconnection_is_not_cancellation_but_cancelled_is() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        with pytest.raises(httpx.ReadTimeout):
            await c.post(
                "/mcp", headers=headers, json=call("slow", seconds=0.3, tag="left"), timeout=0.1
            )
        pending = asyncio.ensure_future(
            c.post("/mcp", headers=headers, json=call("slow", 5, seconds=2, tag="cancelled"))
        )
        await asyncio.sleep(0.2)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
        assert (await c.post("/mcp", headers=headers, json=cancel)).status_code == 202
        ended = await asyncio.wait_for(pending, 1)
        assert ended.status_code == 202 and ended.content == b""
        await asyncio.sleep(0.3)
        assert "left" in slow_finished and "cancelled" not in slow_finished


async def test_batch_at_2025_03_26() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c, "2025-03-26")
        batch = [call("add", 1, a=1, b=1), {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
        answer = await c.post("/mcp", headers=headers, json=batch)
        assert answer.status_code == 200
        assert sorted(item["id"] for item in answer.json()) == [1, 2]
        only = [{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]
        assert (await c.post("/mcp", headers=headers, json=only)).status_code == 202


async def test_stateless_mode() -> None:
    app = make_server().http_app(stateless=True)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        versioned = {**HEADERS, "mcp-protocol-version": "2025-11-25"}
        answer = await c.post("/mcp", headers=versioned, json=call("add", a=1, b=2))
        assert answer.status_code == 200 and "mcp-session-id" not in answer.headers
        assert answer.json()["result"]["structuredContent"] == {"result": 3}
        # no header: 2025-03-26, which has no structured output
        old = await c.post("/mcp", headers=HEADERS, json=call("add", a=1, b=2))
        assert "structuredContent" not in old.json()["result"]
        get = await c.get("/mcp", headers={"accept": "text/event-stream"})
        assert get.status_code == 405 and get.headers["allow"] == "POST"
        asked = await c.post("/mcp", headers=versioned, json=call("ask"), timeout=5)
        assert asked.status_code == 200  # no server->client requests: answered, not stuck
        outcome = asked.json()
        assert "error" in outcome or outcome["result"]["isError"] is True
        sse = await c.post("/mcp", headers=HEADERS, json=call("chatty", token=1, steps=2))
        assert sse.headers["content-type"] == "text/event-stream" and "chatted" in sse.text
