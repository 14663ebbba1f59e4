"""The HTTP app as composed wrappers and tables (issue 23): what each path and method gets,
mounted or not; options given by the user over the server's; and the `state=` seam where
sessions and stream events live (what the scale-out issue plugs its shared state into).

Driven in process through httpx's ASGI transport: the real app, no sockets."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mcpkit import Server
from mcpkit.transports.http.event_store import MemoryEventStore
from mcpkit.transports.http.sessions import SessionOptions, SessionRegistry
from mcpkit.transports.http.state import LocalState

from .server_fixture import HEADERS, call, make_server, open_session

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def client(app: Any, root_path: str = "") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, root_path=root_path)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


@pytest.mark.parametrize(
    ("options", "method", "path", "headers", "status", "allow"),
    [
        ({}, "PUT", "/mcp", {}, 405, "GET, POST, DELETE"),
        ({}, "GET", "/mcp", {}, 405, "POST"),  # no session named: 2026-07-28 has no stream
        ({}, "DELETE", "/mcp/", {}, 405, "POST"),
        ({"stateless": True}, "GET", "/mcp", {"mcp-session-id": "x"}, 405, "POST"),
        ({}, "GET", "/mcp", {"mcp-session-id": "x"}, 404, None),  # unknown session
        ({}, "GET", "/sse", {}, 404, None),  # HTTP+SSE off
        ({"http_sse": True}, "POST", "/sse", {}, 404, None),  # its stream is GET only
        ({"http_sse": True}, "GET", "/messages/", {}, 405, "POST"),
        ({"path": "/custom"}, "POST", "/mcp", {}, 404, None),
        ({}, "GET", "/mcp", {"origin": "https://evil.example"}, 403, None),
        ({}, "GET", "/mcp", {"host": "evil.example"}, 421, None),
        ({"max_headers": 5}, "GET", "/mcp", {f"x-{i}": "v" for i in range(6)}, 431, None),
    ],
)
async def test_each_path_and_method_gets_what_it_got_before(
    options: dict[str, Any],
    method: str,
    path: str,
    headers: dict[str, str],
    status: int,
    allow: str | None,
) -> None:
    app = make_server().http_app(**options)
    async with client(app) as c:
        answer = await c.request(method, path, headers={**HEADERS, **headers})
        assert answer.status_code == status, answer.text
        assert answer.headers.get("allow") == allow


@pytest.mark.parametrize("path", ["/custom", "/custom/"])
async def test_mounted_the_endpoint_is_found_under_the_root_path(path: str) -> None:
    app = make_server().http_app(path="/custom")
    async with client(app, root_path="/mounted") as c:
        answer = await c.post("/mounted" + path, headers=HEADERS, content=PING)
        assert answer.status_code == 400  # reached the endpoint: a ping needs a session
        assert "Mcp-Session-Id" in answer.json()["error"]["message"]
        assert (await c.post("/mounted/mcp", headers=HEADERS, content=PING)).status_code == 404


async def test_tool_headers_given_by_the_user_replace_the_servers() -> None:
    """Decision: an explicit `tool_headers=` wins (before, the server's always did and the
    option was silently ignored)."""
    from tests.http.test_server_modern import headers_for, modern_server, tool_call

    server, _ = modern_server()
    message = tool_call(1, "locate", region="eu")
    async with client(server.http_app()) as c:  # the server's: Mcp-Param-Region required
        refused = await c.post("/mcp", headers=headers_for(message), json=message)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32020
    async with client(server.http_app(tool_headers=lambda name: None)) as c:
        answer = await c.post("/mcp", headers=headers_for(message), json=message)
        assert answer.status_code == 200, answer.text


class RecordingState(LocalState):
    """Another `HTTPState`: what the app asks it for is what it uses."""

    def __init__(self) -> None:
        self.store = MemoryEventStore(5)
        super().__init__(self.store)
        self.registries: list[SessionRegistry] = []
        self.asked: list[SessionOptions] = []

    def sessions(self, options: SessionOptions) -> SessionRegistry:
        self.asked.append(options)
        registry = super().sessions(options)
        self.registries.append(registry)
        return registry


async def test_sessions_and_events_live_in_the_state_given() -> None:
    state = RecordingState()
    app = make_server().http_app(state=state, max_sessions=3)
    assert state.asked == [SessionOptions(max_sessions=3)]  # asked once, with its options
    assert app.event_store is state.event_store
    async with client(app) as c:
        headers = await open_session(c)
        [registry] = state.registries
        assert app.sessions is registry and len(registry) == 1
        stream = await c.post("/mcp", headers=headers, json=call("chatty", token="t", steps=2))
        assert stream.headers["content-type"] == "text/event-stream"
        assert len(state.store) > 0  # its events were kept in the state's store
    await app.stop()


def test_state_and_event_store_are_not_given_together() -> None:
    with pytest.raises(ValueError, match="state"):
        make_server().http_app(state=LocalState(), event_store=None)


def test_the_http_sse_keywords_before_0_1_0_still_work_with_a_warning() -> None:
    # Issue 23: "legacy" named both an era and this transport; the keywords are http_sse*.
    with pytest.warns(DeprecationWarning, match=r"\(legacy_.*is deprecated; use http_sse") as seen:
        app = Server("old").http_app(legacy_sse=True, legacy_sse_path="/events")
    assert seen[0].filename == __file__
    assert app.config.http_sse is not None and app.config.http_sse.sse_path == "/events"
    with pytest.raises(ValueError, match="http_sse= only"):
        Server("both").http_app(http_sse=True, legacy_sse=True)
    assert Server("new").http_app(http_sse=True, http_sse_path="/e").config.http_sse is not None
