"""The 2024-11-05 HTTP+SSE transport: GET opens an event stream whose first event, `endpoint`,
names the URL to POST messages to; every server message travels on that one stream.

The session lives as long as the GET stream: when the client goes away, it ends. With
authorization it belongs to the principal that opened it (the one `BearerGuard` left in the
scope): POSTs by another are not found. Both methods are ASGI endpoints of the app's route
table (routing.py): `connect` for GET `sse_path`, `post` for `message_path`.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any
from urllib.parse import parse_qs

from mcpkit.protocol import http as rules
from mcpkit.protocol.sse import encode_event
from mcpkit.transports.http.asgi import principal_of
from mcpkit.transports.http.requests import read_body, refuse
from mcpkit.transports.http.sessions import HTTPSessionTransport, Serve, same_principal
from mcpkit.transports.http.streams import Receive, Send, send_json, stream_events


class HTTPSSE:
    def __init__(self, serve: Serve, message_path: str, max_body: int) -> None:
        self._serve = serve
        self._message_path = message_path
        self._max_body = max_body
        self.sessions: dict[str, HTTPSessionTransport] = {}

    async def connect(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        principal = principal_of(scope)
        session_id = secrets.token_hex(16)
        transport = HTTPSessionTransport(session_id, None, principal)
        transport.standalone.attached = True
        self.sessions[session_id] = transport
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(self._serve(transport))
        endpoint = f"{scope.get('root_path', '')}{self._message_path}?session_id={session_id}"
        try:
            await stream_events(
                send,
                receive,
                transport.standalone,
                headers=[],
                record=transport.record,
                priming_retry=None,
                keepalive=15.0,
                preamble=encode_event(endpoint, event="endpoint"),
            )
        finally:
            self.sessions.pop(session_id, None)
            transport.shut()
            await asyncio.gather(task, return_exceptions=True)

    async def post(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await refuse(send, rules.method_not_allowed("POST"))
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        session_id = (query.get("session_id") or [None])[0]
        if session_id is None:
            await refuse(send, rules.refusal(400, "Bad Request: session_id is required"))
            return
        transport = self.sessions.get(session_id)
        if transport is None or not same_principal(transport.principal, principal_of(scope)):
            await refuse(send, rules.session_not_found())
            return
        data = await read_body(receive, self._max_body)
        if data is None:
            await refuse(send, rules.too_large(self._max_body))
            return
        body = rules.inspect_body(data)
        if isinstance(body, rules.Refusal):
            await refuse(send, body)
            return
        transport.feed(body.parsed)
        await send_json(send, 202, b"")

    async def terminate_all(self) -> None:
        for transport in list(self.sessions.values()):
            transport.shut()
