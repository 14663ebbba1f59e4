"""`proxy(target)`: a `Server` whose every request is served by an upstream server.

How this works: `ProxyServer` is a `Server` with no registries of its own. When it starts
(its lifespan) it opens a shared upstream `Client(target)` and takes on what the upstream
declared: name, version, title, instructions and capabilities (`tasks` in the shape of the
client's era: gateway/tasks.py serves task calls and tasks/*), so clients see the upstream's
surface. Each forwarded request (`FORWARDED`) goes to the upstream client chosen by
`upstreams.py` (the session's own, or the shared one), with its params as they came
(`wire.py`), and the upstream's answer goes back as it came: a tool error stays an `isError`
result, an error answer stays the same JSON-RPC error (code,
message, data). Progress from upstream goes to the downstream request's progress token; a
downstream cancel cancels the awaiting handler and so the upstream call. Eras bridge because
the client and the server each speak both: see docs/gateway.md for the table.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Unpack

from mcpkit.client import ClientKeywords, ClientOptions, Era
from mcpkit.errors import (
    ConnectionClosed,
    InvalidParams,
    MCPError,
    ProtocolError,
    RequestTimeout,
)
from mcpkit.gateway.asking import InputBridge, asks_input
from mcpkit.gateway.forwarding import ForwardingServer
from mcpkit.gateway.home import HomeCalls, HomeSilent, home_calls
from mcpkit.gateway.limits import UpstreamGuard, UpstreamLimits
from mcpkit.gateway.listening import ResourceWatch
from mcpkit.gateway.progress import log_relay, progress_relay
from mcpkit.gateway.resume import sharing
from mcpkit.gateway.starting import DEFAULT_START_TIMEOUT
from mcpkit.gateway.tasks import TASK_METHODS, ProxyTasks, capability
from mcpkit.gateway.tool_headers import ToolHeaders
from mcpkit.gateway.upstreams import Link, Upstreams, unreachable
from mcpkit.gateway.wire import (
    downstream_error,
    downstream_result,
    refused_for_capability,
    upstream_params,
)
from mcpkit.protocol import Prepared, RequestReceived
from mcpkit.protocol.per_request import INPUT_REQUIRED_METHODS
from mcpkit.runtime import Peer
from mcpkit.server import Context, Server
from mcpkit.server.mrtr import principal_id
from mcpkit.server.subscriptions import RESOURCE_SUBSCRIPTIONS

if TYPE_CHECKING:
    from mcpkit.server.request_state import RequestStateKeys
    from mcpkit.transports.http.options import HTTPAppOptions

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.gateway")

# Requests passed upstream as they are (the rest the proxy answers itself: `ping` in the
# protocol core, `subscriptions/listen` from what the shared upstream client hears).
FORWARDED = frozenset(
    {
        "tools/list",
        "tools/call",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "completion/complete",
        "logging/setLevel",
    }
)
# Requests gateway/tasks.py may serve (tools/call: when it is, or may become, a task).
TASKS_MAYBE = frozenset({"tools/call", *TASK_METHODS})
# Handler notifications the user may not set: the proxy's own.
_PROXY_OPTIONS = ("sampling", "elicitation", "roots", "on_log", "on_list_changed")
# What a proxy declares while its upstream has not started: its clients' requests then come,
# and each is answered -32603 naming why (or served, once a start succeeds).
_NOT_STARTED: JSONObject = {"tools": {}, "prompts": {}, "resources": {}}


class ProxyServer(ForwardingServer):
    """A `Server` forwarding every request to the server at `target` (see `proxy`)."""

    def __init__(self, target: Any, options: ClientOptions) -> None:
        self.upstreams = Upstreams(target, options)
        self.bridge = InputBridge(self.upstreams)
        self.bridge.on_change = self._shared_notification  # a leased session's list_changed
        self.tool_headers = ToolHeaders()  # the Mcp-Param headers its HTTP endpoint checks
        self._upstream_capabilities: JSONObject = {}
        self._handshake_tasks: JSONObject | None = None  # see `_learn_handshake_tasks`
        self.share_upstream = False  # True: every session uses the shared upstream client
        self.homes: HomeCalls | None = None  # with several workers: calls to another (home.py)
        self.watched = ResourceWatch()  # the URIs 2026-07-28 listens name (see `_listen`)
        self.start_at_entry = True  # False: whoever serves it (a gateway) starts the upstream
        self._starting: asyncio.Task[None] | None = None
        super().__init__("proxy", lifespan=_connected)
        self.forwarded_tasks = ProxyTasks(self)  # task calls and tasks/* (gateway/tasks.py)

    def upstream_sets(self) -> Iterable[Upstreams]:
        return (self.upstreams,)

    @property
    def lists_per_session(self) -> bool:
        """Whether a handshake-era session's lists may differ from another's (it has an
        upstream session of its own): ListCache then keeps them per session, with a ttl."""
        return not self.share_upstream

    def http_options(self, options: HTTPAppOptions) -> None:
        options.setdefault("tool_headers", self.tool_headers)  # the upstream's tools'

    def share_upstreams(self, options: Mapping[str, Any]) -> None:
        """Share HTTP upstream sessions through the `state` of an HTTP app's `options`, when
        it is shared (see resume.py); else keep them in this process."""
        self.upstreams.sharing = sharing(options, self.request_state().keys, self.upstreams.name)
        self.share_homes(options)

    def share_homes(self, options: Mapping[str, Any], keys: RequestStateKeys | None = None) -> None:
        """With a shared `state` in an HTTP app's `options` (several workers): what one
        worker holds (a bridged call between rounds, a forwarded task) is reached from the
        others by a home call (home.py); `keys` (default: this server's requestState keys,
        which every worker shares) sign which worker a bridged call's requestState names.
        Else nothing changes."""
        homes = home_calls(options)
        if homes is None:
            return
        self.homes = homes
        self.bridge.worker = homes.worker
        shared = (keys or self.request_state().keys).aes_keys
        self.bridge.signing = [
            hashlib.sha256(b"mcpkit bridge home v1\0" + k).digest() for k in shared
        ]
        homes.ops["bridge:" + (self.upstreams.name or "")] = self._bridge_at_home
        self.forwarded_tasks.share(options, homes)

    async def start_upstream(self) -> None:
        """Open the shared upstream client and take on what the upstream is, unless done;
        one attempt at a time, each within `start_timeout`. Raises ProtocolError -32603
        naming why it could not (an attempt that failed is made again by the next caller)."""
        if self.upstreams.started:
            return
        task = self._starting
        if task is None or task.done():
            task = self._starting = asyncio.ensure_future(self._start())
        try:
            await asyncio.shield(task)
        except Exception as exc:
            raise unreachable(exc, self.upstreams.name) from None

    async def _start(self) -> None:
        upstreams = self.upstreams
        try:
            link = await upstreams.open_shared(self._shared_notification)
        except Exception as exc:  # the why, for the operator (clients get -32603)
            which = "" if upstreams.name is None else f" {upstreams.name!r}"
            logger.warning(
                "the upstream server%s did not start: %s; its requests answer -32603 and try again",
                which,
                exc,
            )
            raise
        self._adopt(link)
        await self._learn_tools(link)
        await self._learn_handshake_tasks(link)

    async def _stop_starting(self) -> None:
        task, self._starting = self._starting, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task])

    async def _after_start(self, peer: Peer, request: RequestReceived) -> JSONObject | Prepared:
        """A request that needs the upstream, which has not started: start it (or -32603)."""
        await self.start_upstream()
        answer = self._handle_request(peer, request)
        return await answer if inspect.isawaitable(answer) else answer

    async def _learn_tools(self, link: Link) -> None:
        """List the upstream's tools once at start: their Mcp-Param headers (`ToolHeaders`)."""
        if "tools" not in link.client.server_capabilities:
            return
        try:
            listing = link.client.list_all_tools()
            tools = await asyncio.wait_for(listing, self.upstreams.start_timeout)
        except (MCPError, TimeoutError) as exc:  # learned from the first listing a client asks
            logger.warning("could not list the upstream's tools: %s", exc)
            return
        self.tool_headers.learn([tool.to_wire() for tool in tools])

    def capabilities(self) -> JSONObject:
        """The upstream's capabilities as it declared them (known once the proxy runs)."""
        if not self.upstreams.started:
            return {key: dict(value) for key, value in _NOT_STARTED.items()}
        declared = dict(self._upstream_capabilities)
        declared.pop("tasks", None)
        tasks = capability(self._upstream_capabilities)
        if self._handshake_tasks is not None and not self.share_upstream:
            tasks = self._handshake_tasks  # 2026-07-28 clients see it as the extension
        if tasks is not None:  # either era's tasks, as the 2025-11-25 slot (see tasks.py)
            declared["tasks"] = tasks
        return declared

    async def _learn_handshake_tasks(self, link: Link) -> None:
        """In front of an upstream of both eras, whose handshake-era sessions get upstream
        sessions of that era (`Upstreams.session_era`): the `tasks` capability it declares
        in that era (with `list`), what a handshake-era client is told, instead of the
        2026-07-28 extension's shape. Learned once at start, from a session opened for it."""
        upstreams = self.upstreams
        if (
            link.client.era is not Era.PER_REQUEST
            or capability(link.client.server_capabilities) is None
        ):
            return
        if upstreams.session_era() is not Era.HANDSHAKE:
            return
        try:
            probe = await upstreams.open_link(
                dataclasses.replace(upstreams.options, mode=Era.HANDSHAKE)
            )
        except (MCPError, OSError) as exc:  # its handshake-era clients get the extension's shape
            logger.warning("could not learn the upstream's handshake-era tasks: %s", exc)
            return
        try:
            tasks = probe.client.server_capabilities.get("tasks")
        finally:
            await probe.client.close()
        if type(tasks) is dict:
            self._handshake_tasks = tasks

    def upstream_runs_tasks(self) -> bool:
        return capability(self._upstream_capabilities) is not None

    def task_status(self, task_id: str, task: JSONObject) -> int:
        """A forwarded task's status, to the 2026-07-28 listens following it: this worker's,
        and (fanned out) the other workers'. Returns how many were told here."""
        return self._task_status(task_id, task)

    def _adopt(self, link: Link) -> None:
        """Take on the upstream's identity and capabilities (new serving rules follow)."""
        client = link.client
        info = client.server_info
        self._upstream_capabilities = dict(client.server_capabilities)
        self.title = info.get("title")
        self.instructions = client.instructions
        self.version = str(info.get("version", "0.0.0"))
        self.name = str(info.get("name", "proxy"))  # last: it makes the rules again

    def _shared_notification(self, method: str, params: JSONObject | None) -> None:
        """What the shared upstream says, for 2026-07-28 clients' `subscriptions/listen`."""
        self.forwarded_tasks.upstream_notification(method, params)
        if method.endswith("/list_changed"):
            if method == "notifications/tools/list_changed":
                self.tool_headers.forget()
            kind = method.removeprefix("notifications/").removesuffix("s/list_changed")
            self._list_versions[kind] = self.list_version(kind) + 1  # list caches go stale
            self.subscriptions.publish(method)
        elif method == "notifications/resources/updated" and params is not None:
            uri = params.get("uri")
            if type(uri) is str:
                self.subscriptions.resource_updated(uri)

    def _handle_request(
        self, peer: Peer, request: RequestReceived
    ) -> JSONObject | Prepared | Awaitable[JSONObject | Prepared]:
        needs_upstream = request.method in FORWARDED or request.method in TASKS_MAYBE
        if needs_upstream and not self.upstreams.started:
            return self._after_start(peer, request)
        if request.method in TASKS_MAYBE:
            ctx = Context(self, peer, request)
            if self.forwarded_tasks.takes(ctx):
                return self.forwarded_tasks.serve(ctx)
        if request.method == "subscriptions/listen":
            return self._listen(peer, request)
        if request.method not in FORWARDED:
            return super()._handle_request(peer, request)
        return self.forward(Context(self, peer, request))

    async def _listen(self, peer: Peer, request: RequestReceived) -> JSONObject | Prepared:
        """subscriptions/listen, served by the proxy's own hub: the resource URIs it names
        are subscribed upstream first (on the shared client), and only those acknowledged;
        unsubscribed when the last listen naming them ends."""
        wanted = (request.params or {}).get("notifications")
        wanted = wanted if type(wanted) is dict else {}
        uris = wanted.get(RESOURCE_SUBSCRIPTIONS)
        subscribing = _declares_subscribe(self.capabilities())
        if not subscribing or type(uris) is not list or any(type(u) is not str for u in uris):
            return await _settled(super()._handle_request(peer, request))  # hub's answer
        link, followed = self.upstreams.shared, []
        try:
            for uri in dict.fromkeys(uris):
                try:
                    if await self.watched.acquire(link.client, uri):
                        followed.append(uri)
                except MCPError as exc:  # not acknowledged: it could not be delivered
                    logger.info("a listen's resource %r not followed upstream: %s", uri, exc)
            params = {
                **(request.params or {}),
                "notifications": {**wanted, RESOURCE_SUBSCRIPTIONS: followed},
            }
            kept = dataclasses.replace(request, params=params)
            return await _settled(super()._handle_request(peer, kept))
        finally:
            for uri in followed:
                with contextlib.suppress(MCPError):  # the upstream is gone: nothing to undo
                    await self.watched.release(link.client, uri)

    async def forward(self, ctx: Context) -> JSONObject:
        """Serve a forwarded request (`FORWARDED`) upstream. Raises ProtocolError as the
        upstream answered (in the downstream client's era: `downstream_error`), or -32603
        when it could not be reached (`unreachable`)."""
        per_request = ctx.envelope is not None
        try:
            result = await self._forward(ctx)
        except ProtocolError as exc:
            upstream_era = self.upstreams.shared.client.era
            raise downstream_error(exc, per_request, upstream_era) from None
        if per_request and self.upstreams.shared.client.era is Era.HANDSHAKE:
            refused = refused_for_capability(result)
            if refused is not None:
                raise refused
        return result

    async def _forward(self, ctx: Context) -> JSONObject:
        name = self.upstreams.name
        per_request = ctx.envelope is not None
        if per_request and self._bridged(ctx):
            try:
                async with self.upstreams.guard.call(name):
                    return await self._bridge_round(ctx)
            except (ConnectionClosed, RequestTimeout) as exc:
                raise unreachable(exc, name) from None
        level = ctx.envelope.log_level if ctx.envelope is not None else None
        if level is not None:  # its log messages belong to it: a session of its own
            try:
                async with (
                    self.bridge.borrowed(level, log_relay(ctx)) as leased,
                    self.upstreams.guard.call(name),
                ):
                    return await self._exchange(leased, ctx, per_request)
            except (ConnectionClosed, RequestTimeout) as exc:
                raise unreachable(exc, name) from None
        peer = ctx.peer
        # No session (2026-07-28, or a stateless HTTP endpoint): the shared upstream.
        shared = per_request or ctx.state is None or self.share_upstream
        link = await self.upstreams.link_for(peer, shared, ctx.client_capabilities)
        downstream = link.downstream
        if downstream is not None:
            downstream.in_flight.append(ctx.request_id)
        try:
            async with self.upstreams.guard.call(name):
                answer = await self._exchange(link, ctx, per_request)
            if link.cut:  # its answer came with the flood that closed it: as if lost
                raise ConnectionClosed("the upstream sent too many notifications")
            return answer
        except ConnectionClosed as exc:
            await self.upstreams.forget(peer, link)
            raise unreachable(exc, name) from None
        except RequestTimeout as exc:
            raise unreachable(exc, name) from None
        finally:
            if downstream is not None:
                downstream.in_flight.remove(ctx.request_id)

    def _bridged(self, ctx: Context) -> bool:
        """A 2026-07-28 request the upstream (handshake era) may ask input for: a retry of
        one, or a first round from a client that can be asked (see `asking.py`)."""
        if ctx.request.method not in INPUT_REQUIRED_METHODS:
            return False
        if self.upstreams.shared.client.era is Era.PER_REQUEST:
            return False  # its input_required rounds pass through as they are
        params = ctx.params
        retry = "requestState" in params or "inputResponses" in params
        return retry or asks_input(ctx.client_capabilities)

    async def _bridge_round(self, ctx: Context) -> JSONObject:
        params, bridge = ctx.params, self.bridge
        principal = principal_id(ctx.principal)
        answers = params.get("inputResponses")
        if "requestState" in params:
            token = params.get("requestState")
            home = bridge.home_of(token)
            if home is not None and self.homes is not None:  # another worker holds the call
                return await self._round_at(home, {"s": token, "p": principal, "a": answers})
            pending = bridge.resume(token, principal, answers)
        else:  # a first round, maybe answering by key already (a stateless client)
            method, sent = ctx.request.method, upstream_params(params, keep_envelope=False)
            if sent is not None and "inputResponses" in sent:
                sent = {key: value for key, value in sent.items() if key != "inputResponses"}
            progress = progress_relay(ctx)

            def call(link: Link) -> Awaitable[JSONObject]:
                return link.client.request(method, sent, on_progress=progress)

            level = ctx.envelope.log_level if ctx.envelope is not None else None
            pending = await bridge.start(ctx.client_capabilities, principal, call, answers, level)
        # This round's request is where the call's log messages go now (if it asked).
        wants_logs = ctx.envelope is not None and ctx.envelope.log_level is not None
        pending.lease.logs_to = log_relay(ctx) if wants_logs else None
        answer = await bridge.next_round(pending)
        self.upstreams.guard.check_size(answer, self.upstreams.name)
        return answer

    async def _round_at(self, home: str, retry: JSONObject) -> JSONObject:
        """A retry's round, served by the worker `home` that holds the call. Raises the
        JSON-RPC error it answered, or -32602 when it gives no sign (it stopped: the call is
        gone with it, as an expired one)."""
        assert self.homes is not None
        try:
            op = "bridge:" + (self.upstreams.name or "")
            return await self.homes.call(home, op, retry)
        except HomeSilent as exc:
            logger.warning("a retry's bridged call is lost: %s", exc)
            raise InvalidParams(
                "Invalid params: requestState is unknown or expired "
                "(the proxy worker holding the call does not answer)"
            ) from None

    async def _bridge_at_home(self, retry: JSONObject) -> JSONObject:
        """A retry another worker received, for a call of this one: its next round (as
        `_bridge_round`; the principal checked here, where the call is)."""
        bridge = self.bridge
        pending = bridge.resume(retry.get("s"), retry.get("p"), retry.get("a"))
        pending.lease.logs_to = None  # its request's stream is on the other worker
        try:
            answer = await bridge.next_round(pending)
        except (ConnectionClosed, RequestTimeout) as exc:
            raise unreachable(exc, self.upstreams.name) from None
        self.upstreams.guard.check_size(answer, self.upstreams.name)
        return answer

    async def _exchange(self, link: Link, ctx: Context, per_request: bool) -> JSONObject:
        client = link.client
        method = ctx.request.method
        upstream_per_request = client.era is Era.PER_REQUEST
        if method == "logging/setLevel":
            await client.set_logging_level(str(ctx.params.get("level")))
            return {}
        if method in ("resources/subscribe", "resources/unsubscribe") and upstream_per_request:
            return await _listen_for(link, method, ctx.params.get("uri"))
        params = upstream_params(ctx.params, keep_envelope=per_request and upstream_per_request)
        if method == "tools/call" and upstream_per_request:
            await client.learn_tool(str(ctx.params.get("name")))  # its Mcp-Param headers
        raw = await client.request(
            method,
            params,
            on_progress=progress_relay(ctx),
            # A 2026-07-28 client answers the upstream's input_required rounds itself.
            input_required="return" if per_request else "answer",
        )
        self.upstreams.guard.check_size(raw, self.upstreams.name)
        if method == "tools/list":
            self.tool_headers.learn(raw.get("tools"))
        return downstream_result(raw, per_request=per_request)


def proxy(
    target: Any,
    *,
    limits: UpstreamLimits | None = None,
    start_timeout: float | None = DEFAULT_START_TIMEOUT,
    **client_options: Unpack[ClientKeywords],
) -> ProxyServer:
    """A `Server` that forwards every request to the server at `target`: anything `Client`
    takes (an argv list or command line, an http(s) URL, a Python file's command, a `Server`).

    `client_options` configure the upstream clients (`Client`'s keyword arguments: `mode`,
    `env`, `cwd`, `http`, `auth`, `timeout`, ...). Upstream requests have no timeout by
    default (the downstream client's own timeout cancels them); the response cache is off
    (the downstream client caches by what the upstream said). `limits` bounds what the
    upstream may cost (`UpstreamLimits`: answer size, rate, calls at once, notifications
    per second).

    Serve it like any server: `proxy(["python", "server.py"]).run("http", port=8000)`. It
    connects to the upstream when it starts, waiting at most `start_timeout` seconds (None:
    no bound; also the bound of every later upstream client's opening). An upstream that
    cannot be reached in time is logged and the proxy serves anyway: each request that needs
    it answers -32603 naming why, and tries to start it again. Raises TypeError for
    `sampling`, `elicitation`, `roots`, `on_log` or `on_list_changed` (the proxy answers
    those for each downstream client) and for an unknown option.
    """
    given = [name for name in _PROXY_OPTIONS if name in client_options]
    if given:
        raise TypeError(
            f"proxy() answers {', '.join(given)} with each downstream client's own; "
            "do not pass them"
        )
    defaults: JSONObject = {"timeout": None, "cache": False}
    options = ClientOptions(**{**defaults, **client_options})
    server = ProxyServer(target, options)
    server.upstreams.guard = UpstreamGuard(limits or UpstreamLimits())
    server.upstreams.start_timeout = start_timeout
    return server


@contextlib.asynccontextmanager
async def _connected(server: Server) -> AsyncIterator[None]:
    assert isinstance(server, ProxyServer)
    upstreams = server.upstreams
    try:
        if server.start_at_entry:
            with contextlib.suppress(ProtocolError):  # logged; served, and tried again
                await server.start_upstream()
        yield None
    finally:
        await server._stop_starting()
        await server.forwarded_tasks.aclose()
        await server.bridge.aclose()
        await upstreams.aclose()


async def _settled(
    answer: JSONObject | Prepared | Awaitable[JSONObject | Prepared],
) -> JSONObject | Prepared:
    return await answer if isinstance(answer, Awaitable) else answer


def _declares_subscribe(capabilities: JSONObject) -> bool:
    resources = capabilities.get("resources")
    return type(resources) is dict and resources.get("subscribe") is True


async def _listen_for(link: Link, method: str, uri: Any) -> JSONObject:
    """resources/subscribe or unsubscribe for a 2026-07-28 upstream: a listen for `uri`.
    Raises InvalidParams for a `uri` that is not a string."""
    if type(uri) is not str:
        raise InvalidParams(f"Invalid params: {method} needs a string uri")
    assert link.listening is not None  # made for every 2026-07-28 upstream client
    if method == "resources/subscribe":
        await link.listening.subscribe(uri)
    else:
        await link.listening.unsubscribe(uri)
    return {}


__all__ = ["FORWARDED", "ProxyServer", "proxy"]
