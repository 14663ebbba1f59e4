"""Streamable HTTP at 2026-07-28 ("modern") over real uvicorn on 127.0.0.1, raw httpx: no
sessions, headers checked against the body, the HTTP status of every protocol error, SSE only
when something comes before the answer, a closed response cancels, subscriptions/listen on
its own long-lived stream -- and the handshake era still served on the same endpoint."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Annotated, Any

import httpx
import pytest
import uvicorn

from mcpkit import Server
from mcpkit.protocol.per_request import CLIENT_CAPABILITIES, PROTOCOL_VERSION, SUBSCRIPTION_ID
from mcpkit.server import Context
from mcpkit.server.schema import Header
from mcpkit.server.subscriptions import SubscriptionHub
from mcpkit.transports.http.app import MCPHTTPApp

from .server_fixture import HEADERS, call, make_server, open_session, read_events
from .servers import serving

MODERN = "2026-07-28"
cancelled: list[str] = []


def envelope(version: str = MODERN, **extra: Any) -> dict[str, Any]:
    return {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: {}, **extra}


def body(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    params = dict(params or {})
    params.setdefault("_meta", envelope())
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def tool_call(request_id: Any, name: str, token: Any = None, **arguments: Any) -> dict[str, Any]:
    meta = envelope() if token is None else envelope(progressToken=token)
    return body(request_id, "tools/call", {"name": name, "arguments": arguments, "_meta": meta})


def headers_for(message: dict[str, Any], **extra: str) -> dict[str, str]:
    """What a conforming client sends with `message`."""
    out = {**HEADERS, "mcp-protocol-version": MODERN, "mcp-method": message["method"]}
    params = message.get("params") or {}
    name = params.get("name", params.get("uri"))
    if name is not None and message["method"] in ("tools/call", "resources/read", "prompts/get"):
        out["mcp-name"] = name
    out.update(extra)
    return out


def modern_server() -> tuple[Server, SubscriptionHub]:
    server = make_server()

    @server.tool()
    def locate(
        region: Annotated[str, Header("Region")],
        query: str = "",
        count: Annotated[int | None, Header("Count")] = None,
    ) -> str:
        """A tool whose region and count travel in Mcp-Param headers too."""
        return f"{region}:{query}:{count}"

    @server.tool()
    async def hang(ctx: Context, chatter: bool = False, tag: str = "") -> str:
        """Wait until cancelled (optionally after progress, so the answer is an SSE stream)."""
        if chatter:
            await ctx.report_progress(1, 2)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(tag)
            raise
        return "never"

    @server.resource("memo://caf\u00e9")
    def cafe() -> str:
        """A URI outside the header-safe set: Mcp-Name travels base64-encoded."""
        return "served"

    return server, server.subscriptions


def modern_app(**options: Any) -> tuple[MCPHTTPApp, Server, SubscriptionHub]:
    server, hub = modern_server()
    app = server.http_app(**options)  # Header() parameters name the Mcp-Param headers
    return app, server, hub


async def post(c: httpx.AsyncClient, message: Any, headers: dict[str, str]) -> httpx.Response:
    return await c.post("/mcp", headers=headers, content=json.dumps(message))


async def raw_status(base: str, headers: dict[str, str], content: bytes) -> int:
    """POST with headers exactly as given (httpx refuses spaces around a value)."""
    host, port = base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    lines = ["POST /mcp HTTP/1.1", f"host: {host}:{port}", f"content-length: {len(content)}"]
    lines += [f"{name}:{value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + content)
    status = int((await reader.readline()).split()[1])
    writer.close()
    await writer.wait_closed()
    return status


def error_of(answer: httpx.Response) -> dict[str, Any]:
    assert answer.headers["content-type"] == "application/json"
    payload = answer.json()
    assert "result" not in payload
    return payload["error"]  # type: ignore[no-any-return]


async def test_a_modern_call_is_answered_without_a_session() -> None:
    app, _, _ = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        message = tool_call(1, "add", a=2, b=3)
        answer = await post(c, message, headers_for(message, **{"mcp-session-id": "stale"}))
        assert answer.status_code == 400  # a session id keeps it in the handshake era
        answer = await post(c, message, headers_for(message))
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == "application/json"
        assert "mcp-session-id" not in answer.headers
        payload = answer.json()
        assert payload["id"] == 1
        assert payload["result"]["structuredContent"] == {"result": 5}
        assert payload["result"]["resultType"] == "complete"
        discover = body("d", "server/discover")
        found = await post(c, discover, headers_for(discover))
        assert found.status_code == 200
        assert MODERN in found.json()["result"]["supportedVersions"]
        assert len(app.sessions) == 0


async def test_standard_header_rules() -> None:
    app, _, _ = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        message = tool_call(5, "add", a=1, b=1)
        good = headers_for(message)
        cases = {
            "no Mcp-Method": {k: v for k, v in good.items() if k != "mcp-method"},
            "wrong Mcp-Method": {**good, "mcp-method": "tools/list"},
            "no Mcp-Name": {k: v for k, v in good.items() if k != "mcp-name"},
            "wrong Mcp-Name": {**good, "mcp-name": "sub"},
            "version header differs from _meta": {**good, "mcp-protocol-version": "2025-11-25"},
            "no version header": {k: v for k, v in good.items() if k != "mcp-protocol-version"},
            "Mcp-Name case differs": {**good, "mcp-name": "ADD"},
        }
        spaced = {**good, "mcp-name": "  add\t"}  # spaces around a value are not part of it
        assert await raw_status(base, spaced, json.dumps(message).encode()) == 200
        for case, headers in cases.items():
            answer = await post(c, message, headers)
            assert answer.status_code == 400, case
            assert answer.json()["id"] == 5, case
            assert error_of(answer)["code"] == -32020, case
        encoded = "=?base64?" + base64.b64encode(b"add").decode() + "?="
        answer = await post(c, message, {**good, "mcp-name": encoded})
        assert answer.status_code == 200, answer.text
        cafe = body(6, "resources/read", {"uri": "memo://caf\u00e9"})
        name = "=?base64?" + base64.b64encode("memo://caf\u00e9".encode()).decode() + "?="
        answer = await post(c, cafe, {**headers_for(body(6, "resources/read")), "mcp-name": name})
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["contents"][0]["text"] == "served"
        listing = body(7, "tools/list")
        assert (await post(c, listing, headers_for(listing))).status_code == 200


async def test_mcp_param_headers_are_checked_against_the_arguments() -> None:
    app, _, _ = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        message = tool_call(1, "locate", region="us-west1", query="q", count=42)
        base_headers = headers_for(message)
        ok = {**base_headers, "mcp-param-region": "us-west1", "mcp-param-count": "42"}
        answer = await post(c, message, ok)
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["content"][0]["text"] == "us-west1:q:42"
        numeric = {**ok, "mcp-param-count": "42.0"}  # compared as numbers
        assert (await post(c, message, numeric)).status_code == 200
        encoded = {**ok, "mcp-param-region": "=?base64?dXMtd2VzdDE=?="}
        assert (await post(c, message, encoded)).status_code == 200
        for case, headers in {
            "missing": {k: v for k, v in ok.items() if k != "mcp-param-region"},
            "mismatched": {**ok, "mcp-param-region": "eu-west1"},
            "number mismatched": {**ok, "mcp-param-count": "43"},
        }.items():
            answer = await post(c, message, headers)
            assert answer.status_code == 400, case
            assert error_of(answer)["code"] == -32020, case
        # a parameter absent from the arguments: no header expected
        bare = tool_call(2, "locate", region="eu")
        headers = {**headers_for(bare), "mcp-param-region": "eu"}
        assert (await post(c, bare, headers)).status_code == 200


async def test_protocol_errors_and_their_status_codes() -> None:
    app, _, _ = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        old = body(1, "tools/list", {"_meta": envelope("1900-01-01")})
        answer = await post(c, old, headers_for(old, **{"mcp-protocol-version": "1900-01-01"}))
        assert answer.status_code == 400
        error = error_of(answer)
        assert error["code"] == -32022 and answer.json()["id"] == 1
        assert error["data"]["requested"] == "1900-01-01"
        assert MODERN in error["data"]["supported"]
        # a header that disagrees with the body outranks the version the body names
        mismatch = body(9, "server/discover", {"_meta": envelope("v999")})
        answer = await post(c, mismatch, headers_for(mismatch))
        assert answer.status_code == 400 and error_of(answer)["code"] == -32020
        for removed in ("initialize", "ping", "logging/setLevel", "resources/subscribe"):
            old_style = body(10, removed)
            answer = await post(c, old_style, headers_for(old_style))
            assert answer.status_code == 404, removed
            assert error_of(answer)["code"] == -32601, removed
        assert len(app.sessions) == 0
        bare = body(2, "tools/list", {"_meta": {PROTOCOL_VERSION: MODERN}})
        answer = await post(c, bare, headers_for(bare))
        assert answer.status_code == 400 and error_of(answer)["code"] == -32602
        nothing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}
        answer = await post(c, nothing, headers_for(nothing))
        assert answer.status_code == 400 and error_of(answer)["code"] == -32602
        assert answer.json()["id"] == 3
        unknown = body(4, "tools/frobnicate")
        answer = await post(c, unknown, headers_for(unknown))
        assert answer.status_code == 404 and error_of(answer)["code"] == -32601
        batch = [body(6, "tools/list"), body(7, "tools/list")]
        answer = await post(c, batch, headers_for(batch[0]))
        assert answer.status_code == 400
        notification = {"jsonrpc": "2.0", "method": "notifications/whatever"}
        answer = await post(c, notification, {**HEADERS, "mcp-protocol-version": MODERN})
        assert answer.status_code == 202 and answer.content == b""
        assert "mcp-session-id" not in answer.headers
        # a tool's own error is a result, not an HTTP error
        failing = tool_call(8, "add", a="x", b=1)
        answer = await post(c, failing, headers_for(failing))
        assert answer.status_code == 200


async def test_get_and_delete_without_a_session_are_not_allowed() -> None:
    app, _, _ = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        for verb in ("GET", "DELETE"):
            for version in (MODERN, None):
                headers = {"accept": "text/event-stream"}
                if version is not None:
                    headers["mcp-protocol-version"] = version
                answer = await c.request(verb, "/mcp", headers=headers)
                assert answer.status_code == 405, (verb, version)
                assert answer.headers["allow"] == "POST"


async def test_the_handshake_era_is_served_beside_on_the_same_endpoint() -> None:
    app, _, _ = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        legacy = await open_session(c)
        get_headers = {**legacy, "accept": "text/event-stream"}
        async with c.stream("GET", "/mcp", headers=get_headers) as stream:
            assert stream.status_code == 200  # the legacy GET stream still opens
            results = await asyncio.gather(
                *(
                    post(c, tool_call(i, "add", a=i, b=1), headers_for(tool_call(i, "add")))
                    if i % 2
                    else c.post("/mcp", headers=legacy, json=call("add", request_id=i, a=i, b=1))
                    for i in range(10)
                )
            )
        for i, answer in enumerate(results):
            assert answer.status_code == 200
            assert answer.json()["result"]["structuredContent"] == {"result": i + 1}
            assert ("mcp-session-id" in answer.headers) == (i % 2 == 0)
            assert ("resultType" in answer.json()["result"]) == (i % 2 == 1)
        assert len(app.sessions) == 1
        assert (await c.delete("/mcp", headers=legacy)).status_code == 200


async def test_the_same_id_from_two_clients_at_once() -> None:
    app, _, _ = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        messages = [tool_call(1, "slow", seconds=0.2, tag=f"t{i}") for i in range(3)]
        answers = await asyncio.gather(*(post(c, m, headers_for(m)) for m in messages))
        assert [a.status_code for a in answers] == [200, 200, 200]
        assert all(a.json()["id"] == 1 for a in answers)
        assert [a.json()["result"]["content"][0]["text"] for a in answers] == ["done"] * 3
        assert not app.sessionless.busy()


async def test_progress_then_the_answer_on_an_event_stream() -> None:
    app, _, _ = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        message = tool_call(9, "chatty", token="p", steps=3)
        async with c.stream("POST", "/mcp", headers=headers_for(message), json=message) as answer:
            assert answer.status_code == 200
            assert answer.headers["content-type"] == "text/event-stream"
            assert "mcp-session-id" not in answer.headers
            events = await read_events(answer)
    assert all(e.id is None and e.retry is None for e in events)  # no ids, no priming event
    payloads = [json.loads(e.data) for e in events]
    assert [p["params"]["progress"] for p in payloads[:3]] == [1, 2, 3]
    assert payloads[3]["id"] == 9 and payloads[3]["result"]["resultType"] == "complete"


@pytest.mark.parametrize("chatter", [False, True], ids=["waiting-for-json", "streaming"])
async def test_closing_the_response_cancels_the_request(chatter: bool) -> None:
    app, _, _ = modern_app()
    tag = f"closed-{chatter}"
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        message = tool_call(3, "hang", chatter=chatter, tag=tag)
        headers = headers_for(message)
        if chatter:
            message["params"]["_meta"]["progressToken"] = 1
            async with c.stream("POST", "/mcp", headers=headers, json=message) as answer:
                assert answer.headers["content-type"] == "text/event-stream"
                assert len(await read_events(answer, 1)) == 1
        else:
            with pytest.raises(httpx.ReadTimeout):
                await c.post("/mcp", headers=headers, json=message, timeout=0.3)
        for _ in range(100):
            if tag in cancelled:
                break
            await asyncio.sleep(0.02)
        assert tag in cancelled
        assert not app.sessionless.busy()
        again = tool_call(3, "add", a=1, b=2)  # the id is free again
        assert (await post(c, again, headers_for(again))).status_code == 200


async def test_origin_and_host_checks_apply() -> None:
    app, _, _ = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        message = tool_call(1, "add", a=1, b=2)
        evil = headers_for(message, origin="http://evil.example")
        assert (await post(c, message, evil)).status_code == 403
        assert (
            await post(c, message, headers_for(message, host="evil.example"))
        ).status_code == 421


# -- subscriptions/listen --------------------------------------------------------------------


def listen(request_id: Any, **notifications: Any) -> dict[str, Any]:
    return body(request_id, "subscriptions/listen", {"notifications": notifications})


async def test_listen_over_http_acknowledges_then_streams_tagged_notifications() -> None:
    app, server, hub = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        message = listen("s1", toolsListChanged=True, promptsListChanged=True)
        async with c.stream("POST", "/mcp", headers=headers_for(message), json=message) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"] == "text/event-stream"
            assert "mcp-session-id" not in stream.headers
            [ack] = await read_events(stream, 1)
            first = json.loads(ack.data)
            assert first["method"] == "notifications/subscriptions/acknowledged"
            assert first["params"]["_meta"] == {SUBSCRIPTION_ID: "s1"}
            # no prompts: the server does not declare them, so that part is not honoured
            assert first["params"]["notifications"] == {"toolsListChanged": True}
            server.add_tool(lambda: "x", name="fresh")
            assert hub.publish("notifications/tools/list_changed") == 1
            [changed] = await read_events(stream, 1)
            assert json.loads(changed.data) == {
                "jsonrpc": "2.0",
                "method": "notifications/tools/list_changed",
                "params": {"_meta": {SUBSCRIPTION_ID: "s1"}},
            }
            assert len(hub) == 1 and app.sessionless.busy()
        # the client closed the stream: the subscription ends, nothing is left in flight
        for _ in range(100):
            if not len(hub) and not app.sessionless.busy():
                break
            await asyncio.sleep(0.02)
        assert len(hub) == 0 and not app.sessionless.busy()
        assert hub.publish("notifications/tools/list_changed") == 0


async def test_listen_over_http_ends_gracefully_when_the_server_drains() -> None:
    app, _, hub = modern_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        message = listen(11, toolsListChanged=True)
        async with c.stream("POST", "/mcp", headers=headers_for(message), json=message) as stream:
            [ack] = await read_events(stream, 1)
            assert json.loads(ack.data)["method"] == "notifications/subscriptions/acknowledged"
            draining = asyncio.ensure_future(app.drain())
            rest = await asyncio.wait_for(read_events(stream), 5)  # to the end of the stream
            await asyncio.wait_for(draining, 5)
        [last] = [json.loads(e.data) for e in rest]
        assert last["id"] == 11
        assert last["result"]["resultType"] == "complete"
        assert last["result"]["_meta"][SUBSCRIPTION_ID] == 11
        assert len(hub) == 0


async def test_json_mode_still_streams_a_modern_request_that_sends_first() -> None:
    app, _, _ = modern_app(response_mode="json")  # "json" is for the handshake era
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        message = tool_call(1, "chatty", token="p", steps=2)
        answer = await post(c, message, headers_for(message))
        assert answer.headers["content-type"] == "text/event-stream"
        assert answer.text.count("notifications/progress") == 2
        quick = tool_call(2, "add", a=1, b=2)
        answer = await post(c, quick, headers_for(quick))
        assert answer.headers["content-type"] == "application/json"
        message = listen(3, toolsListChanged=True)
        async with c.stream("POST", "/mcp", headers=headers_for(message), json=message) as stream:
            [ack] = await read_events(stream, 1)
            assert json.loads(ack.data)["params"]["_meta"] == {SUBSCRIPTION_ID: 3}
            await app.drain()


class DrainingServer(uvicorn.Server):
    """How a runner lets subscriptions end gracefully: uvicorn waits for open responses to end
    before it sends the lifespan shutdown, so the app is drained first."""

    def __init__(self, config: uvicorn.Config, app: MCPHTTPApp) -> None:
        super().__init__(config)
        self.mcp_app = app

    async def shutdown(self, sockets: Any = None) -> None:
        await self.mcp_app.drain()
        await super().shutdown(sockets)


async def test_uvicorn_shutdown_ends_subscriptions_with_their_result() -> None:
    app, _, hub = modern_app()
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = DrainingServer(config, app)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as c:
        message = listen("bye", resourcesListChanged=True)
        async with c.stream("POST", "/mcp", headers=headers_for(message), json=message) as stream:
            [ack] = await read_events(stream, 1)
            assert json.loads(ack.data)["params"]["notifications"] == {"resourcesListChanged": True}
            server.should_exit = True
            rest = await asyncio.wait_for(read_events(stream), 5)
    [last] = [json.loads(e.data) for e in rest]
    assert last["id"] == "bye" and last["result"]["_meta"][SUBSCRIPTION_ID] == "bye"
    await asyncio.wait_for(task, 5)
    assert len(hub) == 0


async def test_a_changed_configuration_is_served_from_the_next_request() -> None:
    server = Server("empty")  # no tools yet: it does not declare them
    app = server.http_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        listing = body(1, "tools/list")
        assert (await post(c, listing, headers_for(listing))).status_code == 404
        discover = body(2, "server/discover")
        before = (await post(c, discover, headers_for(discover))).json()["result"]
        assert "tools" not in before["capabilities"]
        server.add_tool(lambda: "x", name="x")  # the first tool: the capability appears
        server.instructions = "now with a tool"
        answer = await post(c, listing, headers_for(listing))
        assert answer.status_code == 200
        assert [t["name"] for t in answer.json()["result"]["tools"]] == ["x"]
        after = (await post(c, discover, headers_for(discover))).json()["result"]
        assert "tools" in after["capabilities"]
        assert after["instructions"] == "now with a tool"


async def test_answers_given_in_the_same_loop_turn_each_reach_their_request() -> None:
    """Requests served inline in one event-loop turn: the first answer leaves at once, the
    others at the end of the turn; each still goes to its own request, whole."""
    app, _, _ = modern_app()
    await app.start()
    sent: dict[int, list[dict[str, Any]]] = {}

    async def one(i: int) -> None:
        message = tool_call(i, "add", a=i, b=1)
        data = json.dumps(message).encode()
        headers = [(k.encode(), v.encode()) for k, v in headers_for(message).items()]
        headers.append((b"host", b"127.0.0.1"))
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
        scope.update(client=("127.0.0.1", 1), server=("127.0.0.1", 2), query_string=b"")

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": data, "more_body": False}

        async def send(event: dict[str, Any]) -> None:
            sent.setdefault(i, []).append(event)

        await app(scope, receive, send)

    try:
        await asyncio.gather(*(one(i) for i in range(8)))
    finally:
        await app.stop()
    for i in range(8):
        start, content = sent[i]
        assert start["status"] == 200 and content.get("more_body", False) is False
        answer = json.loads(content["body"])
        assert answer["id"] == i and answer["result"]["structuredContent"] == {"result": i + 1}
        assert dict(start["headers"])[b"content-length"] == b"%d" % len(content["body"])
