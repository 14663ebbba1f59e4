"""The handshake era over Streamable HTTP: sessions made by `initialize`, and stateless POSTs.

POST carries client messages (one, or a 2025-03-26 batch): notifications and responses get
202, requests get their answer as JSON, or as an event stream when the server sends related
messages first. GET opens the stream for unrelated server messages (or resumes a lost stream
with Last-Event-ID); DELETE ends the session. A session belongs to whoever opened it: with
authorization, its id presented by another principal is not found.

A stateless endpoint keeps no sessions: each POST's request is served on its own, at the
revision its MCP-Protocol-Version header names, by the `SessionlessServer`; nothing is
remembered between POSTs (the client's capabilities are unknown, so the server asks it
nothing).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from mcpkit.errors import SERVER_ERROR
from mcpkit.protocol import Outgoing
from mcpkit.protocol import http as rules
from mcpkit.protocol.http import Body, Refusal
from mcpkit.protocol.jsonrpc import Invalid, Request, encode_error
from mcpkit.protocol.snapshot import SessionSnapshot
from mcpkit.runtime.principal import Principal
from mcpkit.runtime.sessionless import RequestPeer, SessionlessServer
from mcpkit.transports.http.event_store import EventStore
from mcpkit.transports.http.health import DRAINING
from mcpkit.transports.http.options import StreamOptions
from mcpkit.transports.http.requests import Headers, refuse, text
from mcpkit.transports.http.sessions import HTTPSession, Serve
from mcpkit.transports.http.state import Followed, Sessions
from mcpkit.transports.http.streams import (
    Receive,
    ResponseStream,
    Send,
    no_event_ids,
    respond,
    send_json,
    stream_events,
)


class SessionEndpoint:
    """Serves the handshake era (see the module docstring)."""

    def __init__(
        self,
        serve: Serve,
        sessionless: SessionlessServer,
        registry: Sessions,
        event_store: EventStore | None,
        streams: StreamOptions,
        *,
        stateless: bool,
        shared: bool = False,
    ) -> None:
        self._serve = serve
        self._sessionless = sessionless
        self.sessions = registry
        self._store = event_store
        self._streams = streams
        self._stateless = stateless
        # The app drains: no new session (503 + Retry-After), unless sessions are `shared`
        # between workers: one opened here is served by the others once this one has gone,
        # and a client that does not retry a 503 (most do not) is not failed for nothing.
        self.draining = False
        self._shared = shared

    # -- POST ------------------------------------------------------------------------------

    async def post(
        self,
        receive: Receive,
        send: Send,
        headers: Headers,
        body: Body,
        principal: Principal | None,
    ) -> None:
        version_header = text(headers, b"mcp-protocol-version")
        version, refused = rules.check_protocol_version(version_header)
        if refused is not None and not body.initialize:
            await refuse(send, refused)
            return
        if self._stateless:
            await self._post_stateless(receive, send, body, version, principal)
            return
        if body.initialize:
            session = await self._new_session(body, principal)
        else:
            session = await self._session(headers, principal)
            if type(session) is HTTPSession:
                session = _check_revision(session, version_header) or session
                if type(session) is HTTPSession:
                    session = rules.check_batch(body, session.version) or session
        if type(session) is Refusal:
            await refuse(send, session)
            return
        await self._answer(receive, send, session, body)  # type: ignore[arg-type]

    async def _new_session(self, body: Body, principal: Principal | None) -> HTTPSession | Refusal:
        refused = rules.check_batch(body, None)  # initialize is never part of a batch
        if refused is not None:
            return refused
        if self.draining and not self._shared:
            return DRAINING
        session = await self.sessions.create(self._serve, principal)
        if session is None:
            message = "Service Unavailable: too many sessions"
            return rules.refusal(503, message, SERVER_ERROR)
        return session

    async def _answer(self, receive: Receive, send: Send, session: HTTPSession, body: Body) -> None:
        transport = session.transport
        ids = body.request_ids
        if any(request_id in transport.pending for request_id in ids):
            message = "Bad Request: a request with this id is already in flight"
            await refuse(send, rules.refusal(400, message))
            return
        stream = transport.open_stream(ids) if ids else None
        transport.feed(body.parsed)
        for request_id in body.cancelled:
            cancelled = transport.pending.get(request_id)
            if cancelled is not None:
                transport.end_stream(cancelled)
        headers = [(b"mcp-session-id", session.id.encode())]
        if stream is None:
            # What the notifications changed (the client's initialized) is shared before
            # the 202 (a session with copies on other workers; an answer waits likewise).
            await transport.settle()
            await send_json(send, 202, b"", headers)
            return
        if body.initialize:
            stream.on_final = self._on_initialize(session, headers)
            await self._settle_initialize(session, stream, body.request)
        streams = self._streams
        resumable = session.version in rules.RESUMABLE_VERSIONS and self._store is not None
        await respond(
            send,
            receive,
            stream,
            mode=streams.response_mode,
            headers=headers,
            record=transport.record,
            priming_retry=streams.retry_ms if resumable else None,
            keepalive=streams.keepalive,
            divert=transport.divert,
        )

    def _on_initialize(
        self, session: HTTPSession, headers: list[tuple[bytes, bytes]]
    ) -> Callable[[Outgoing], None]:
        def remember(answer: Outgoing) -> None:
            session.version = answer.version
            if answer.version is None:  # the handshake failed: no session, no id given out
                session.transport.shut()
                headers.clear()

        return remember

    async def _settle_initialize(
        self, session: HTTPSession, stream: ResponseStream, request: Request | None
    ) -> None:
        """Before the answer to `initialize` leaves: the registry forgets a failed handshake
        or keeps what a good one agreed (a shared registry writes it, so that the client's
        next request finds the session on any worker)."""
        answer = await _answered(stream)
        if answer is None or session.version is None:
            await self.sessions.discard(session.id)
            return
        params = request.params if request is not None and request.params is not None else {}
        capabilities, info = params.get("capabilities"), params.get("clientInfo")
        snapshot = SessionSnapshot(
            session.version,
            capabilities if type(capabilities) is dict else {},
            info if type(info) is dict else {},
        )
        await self.sessions.established(session, snapshot)

    async def _session(
        self, headers: Headers, principal: Principal | None
    ) -> HTTPSession | Refusal:
        session_id = text(headers, b"mcp-session-id")
        if session_id is None:
            return rules.session_required()
        session = await self.sessions.get(session_id, principal, self._serve)
        if session is None:
            return rules.session_not_found()  # another principal's session does not exist
        return session

    # -- stateless ---------------------------------------------------------------------------

    async def _post_stateless(
        self, receive: Receive, send: Send, body: Body, version: str, principal: Principal | None
    ) -> None:
        refused = rules.check_batch(body, version)
        if refused is not None:
            await refuse(send, refused)
            return
        items = body.parsed if type(body.parsed) is list else [body.parsed]
        owed = [item for item in items if type(item) is Request or _owes_reply(item)]
        if not owed:  # notifications and responses only: nothing to answer
            await send_json(send, 202, b"")
            return
        stream = ResponseStream("")
        sink = _collect(len(owed), stream) if body.batch else stream.push
        peers: list[RequestPeer] = []
        for item in owed:
            if type(item) is Request:
                peer = self._sessionless.serve_stateless(item, version, sink, principal)
                if peer is not None:
                    peers.append(peer)
            else:
                sink(_rejection(item))  # type: ignore[arg-type]
        mode = self._streams.response_mode
        try:
            await respond(
                send,
                receive,
                stream,
                mode="auto" if mode == "json" else mode,  # no GET stream to divert to
                headers=[],
                record=no_event_ids,
                priming_retry=None,
                keepalive=self._streams.keepalive,
                divert=stream.push,
            )
        finally:
            if not stream.finished:  # the client left: cancel what still runs
                for peer in peers:
                    peer.cancel()

    # -- GET and DELETE ----------------------------------------------------------------------

    async def get(
        self, receive: Receive, send: Send, headers: Headers, principal: Principal | None
    ) -> None:
        refused = rules.check_get_headers(text(headers, b"accept"))
        found: HTTPSession | Refusal | None = None
        if refused is None:
            found = await self._session(headers, principal)
            refused = found if type(found) is Refusal else None
        if refused is None:
            _, refused = rules.check_protocol_version(text(headers, b"mcp-protocol-version"))
        if refused is not None:
            await refuse(send, refused)
            return
        session: HTTPSession = found  # type: ignore[assignment]
        last_event_id = text(headers, b"last-event-id")
        if last_event_id is not None and rules.event_stream(last_event_id) is None:
            last_event_id = None  # not an id we minted: a plain GET stream
        await self._get_stream(session, receive, send, last_event_id)

    async def _get_stream(
        self, session: HTTPSession, receive: Receive, send: Send, last_event_id: str | None
    ) -> None:
        """The GET stream, or a lost stream resumed: what followed `last_event_id`, then
        whatever still comes on that stream while its request is open."""
        transport = session.transport
        stream_id = rules.STANDALONE_STREAM
        replay: list[tuple[str, bytes]] = []
        record = transport.record
        if last_event_id is not None:
            stream_id = rules.event_stream(last_event_id) or rules.STANDALONE_STREAM
        if stream_id == rules.STANDALONE_STREAM:
            stream = transport.standalone
        else:
            live = [s for s in transport.pending.values() if s.stream_id == stream_id]
            stream = live[0] if live else ResponseStream(stream_id)
            if not live and last_event_id is not None:  # served by another worker?
                followed = await self.sessions.follow(session, last_event_id)
                if followed is not None:
                    await self._follow(session, followed, receive, send)
                    return
            if not live:  # its request is answered: replay, then end
                stream.attached = False
                stream.finished = True
        if stream.attached:
            await refuse(send, rules.refusal(409, "Conflict: this stream is already open"))
            return
        stream.attached = True  # from now on new messages wait in the stream, not the store
        if stream is transport.standalone:
            transport.open_home()
        if last_event_id is not None and self._store is not None:
            replay = await self._store.replay_after(session.id, last_event_id) or []
        resumable = session.version in rules.RESUMABLE_VERSIONS and self._store is not None
        await stream_events(
            send,
            receive,
            stream,
            headers=[(b"mcp-session-id", session.id.encode())],
            record=record,
            priming_retry=self._streams.retry_ms if resumable else None,
            keepalive=self._streams.keepalive,
            replay=replay,
        )

    async def _follow(
        self, session: HTTPSession, followed: Followed, receive: Receive, send: Send
    ) -> None:
        """A lost stream whose request another worker serves: what it stores, as it comes."""
        try:
            await stream_events(
                send,
                receive,
                followed.stream,
                headers=[(b"mcp-session-id", session.id.encode())],
                record=followed.record,
                priming_retry=None,
                keepalive=self._streams.keepalive,
            )
        finally:
            followed.stop()

    async def delete(self, send: Send, headers: Headers, principal: Principal | None) -> None:
        found = await self._session(headers, principal)
        if type(found) is Refusal:
            await refuse(send, found)
            return
        await self.sessions.terminate(found.id)  # type: ignore[union-attr]
        await send_json(send, 200, b"")


def _check_revision(session: HTTPSession, header: str | None) -> Refusal | None:
    """A request naming a revision other than the session's is refused like an unsupported
    one (400): a session speaks the revision agreed at initialize, and no other. 2025-03-26
    passes: it is what a request without the header is taken to speak (the spec's default),
    and clients that name it mean just that (the official conformance suite's do)."""
    if header is None or session.version is None:
        return None
    named = header.strip()
    if named in (session.version, rules.DEFAULT_VERSION):
        return None
    message = (
        f"Bad Request: MCP-Protocol-Version {named!r} is not this session's revision "
        f"({session.version})"
    )
    return rules.refusal(400, message)


async def _answered(stream: ResponseStream) -> Outgoing | None:
    """The answer of a stream's request once it is there (None: the stream ended without
    one), leaving the stream as it is for the response to send."""
    answered: asyncio.Future[Outgoing] = asyncio.get_running_loop().create_future()
    previous = stream.on_final

    def settle(out: Outgoing) -> None:
        if previous is not None:
            previous(out)
        if not answered.done():
            answered.set_result(out)

    stream.on_final = settle
    while not answered.done() and not stream.finished:
        if stream.items:  # messages before the answer: wait for the answer itself
            await asyncio.wait([answered], timeout=0.05)
        else:
            await stream.wait()
    return answered.result() if answered.done() else None


def _owes_reply(item: object) -> bool:
    return type(item) is Invalid and item.reply


def _rejection(item: Invalid) -> Outgoing:
    return Outgoing(encode_error(item.id, item.code, item.message), item.id, True, item.code)


def _collect(owed: int, stream: ResponseStream) -> Callable[[Outgoing], None]:
    """A sink that passes related messages on and gathers `owed` answers into one batch
    answer (2025-03-26), sent when the last arrives."""
    replies: list[bytes] = []

    def sink(out: Outgoing) -> None:
        if not out.final:
            stream.push(out)
            return
        replies.append(out.data)
        if len(replies) == owed:
            stream.push(Outgoing(b"[" + b",".join(replies) + b"]", out.related, True))

    return sink
