"""`gateway(config)`: every server of an `mcpServers` configuration behind one endpoint.

How this works: each enabled server of the configuration is a `ProxyServer` of its own (not
served: the gateway forwards to it), so every upstream keeps the proxy's session policy (one
upstream client per downstream session, opened on that session's first use of the server,
reused, closed when the session ends; one shared client with `"shared": true`), its era
bridging and its relays (sampling, elicitation, roots asked of the downstream client that owns
the upstream session; log messages, list_changed, resources/updated sent to it).

Names are the Host's (`host/aggregate.py`, one naming code): tools, prompts, resources and
templates listed as `server__name`, prefixes made unique, per-server `allowTools` /
`denyTools` honoured (a denied tool is neither listed nor callable). Resource URIs stay as the
upstream gave them, as in the Host's `HostResources`: a read or subscription goes to the one
server that listed the URI, else to the one whose template it fits, and two servers offering
one URI is an error naming them. An upstream that fails costs only its own items: a list
leaves it out (logged), a call to it answers -32603 naming the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mcpkit.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, ProtocolError
from mcpkit.gateway.forwarding import ForwardingServer
from mcpkit.gateway.limits import LIMITS_KEY, limits_from_config
from mcpkit.gateway.proxy_server import ProxyServer, proxy
from mcpkit.gateway.resume import sharing
from mcpkit.gateway.starting import DEFAULT_START_TIMEOUT
from mcpkit.host.aggregate import prefix_owner, public_name, server_prefixes
from mcpkit.host.config import ConfigError, HostConfig, ServerConfig, load_config
from mcpkit.host.resources import uri_fits
from mcpkit.protocol import Prepared, RequestReceived
from mcpkit.runtime import Peer
from mcpkit.server import Context, Server

if TYPE_CHECKING:
    from mcpkit.gateway.upstreams import Upstreams

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.gateway")

SHARED_KEY = "shared"  # an entry's `"shared": true`: one upstream client for all sessions
TIMEOUT_KEY = "timeout"  # an entry's `"timeout": seconds`: for each request to it (default none)
# How long a list waits for one upstream before leaving it out (a hung one costs no more).
LIST_TIMEOUT = 30.0
# list method -> (result key, the capability a server declares for it)
_LISTS = {
    "tools/list": ("tools", "tools"),
    "prompts/list": ("prompts", "prompts"),
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resourceTemplates", "resources"),
}
_BY_NAME = {"tools/call": "tools", "prompts/get": "prompts"}
_BY_URI = ("resources/read", "resources/subscribe", "resources/unsubscribe")
_CAPABILITIES: JSONObject = {
    "logging": {},
    "completions": {},
    "tools": {"listChanged": True},
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": True},
}


class GatewayServer(ForwardingServer):
    """A `Server` serving every enabled server of a configuration (see `gateway`)."""

    def __init__(
        self,
        config: HostConfig,
        client_options: JSONObject,
        start_timeout: float | None = DEFAULT_START_TIMEOUT,
    ) -> None:
        self.config = config
        self.start_timeout = start_timeout  # an entry's "timeout" is its own
        self.upstreams: dict[str, ProxyServer] = {}
        for name, entry in config.servers.items():
            if entry.disabled:
                continue
            try:
                self.upstreams[name] = self._upstream(entry, client_options)
            except ConfigError as error:  # its limits: never served without them
                logger.warning("gateway: server %s left out: %s", name, error)
        self.prefixes = server_prefixes(list(self.upstreams))
        self._stack: contextlib.AsyncExitStack | None = None
        self._uris: dict[str, list[str]] = {}  # resource URI -> servers listing it
        self._templates: dict[str, list[str]] = {}  # template -> servers offering it
        super().__init__("gateway", lifespan=_started)

    def _upstream(self, entry: ServerConfig, client_options: JSONObject) -> ProxyServer:
        options = {**client_options, **entry.client_options()}
        options.pop("roots", None)  # the downstream client's roots are the ones offered
        timeout = entry.extra.get(TIMEOUT_KEY)
        start_timeout = self.start_timeout
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            options["timeout"] = start_timeout = float(timeout)
        limits = limits_from_config(entry.name, entry.extra.get(LIMITS_KEY))
        notify = _Shared(self, entry.name)
        upstream = proxy(
            entry.target,
            limits=limits,
            start_timeout=start_timeout,
            on_notification=notify,
            **options,
        )
        upstream.start_at_entry = False  # the gateway starts them all at once (`_start_all`)
        upstream.upstreams.name = entry.name
        upstream.share_upstream = entry.extra.get(SHARED_KEY) is True
        return upstream

    def capabilities(self) -> JSONObject:
        return {key: dict(value) for key, value in _CAPABILITIES.items()}

    @property
    def lists_per_session(self) -> bool:
        """Whether a session's lists may differ from another's (a server it reaches through
        an upstream session of its own): ListCache then keeps them per session, with a ttl."""
        return any(not upstream.share_upstream for upstream in self.upstreams.values())

    def upstream_sets(self) -> Iterable[Upstreams]:
        return [upstream.upstreams for upstream in self.upstreams.values()]

    def share_upstreams(self, options: Mapping[str, Any]) -> None:
        """Every server's HTTP upstream sessions shared through `options`' state, sealed
        with this gateway's requestState keys (see resume.py); what a worker holds for a
        server (bridged calls, forwarded tasks) reached from the others (home.py)."""
        keys = self.request_state().keys
        for name, upstream in self.upstreams.items():
            upstream.upstreams.sharing = sharing(options, keys, name)
            upstream.share_homes(options, keys)

    def _handle_request(
        self, peer: Peer, request: RequestReceived
    ) -> JSONObject | Prepared | Awaitable[JSONObject | Prepared]:
        method = request.method
        if method in _LISTS:
            return self._list(peer, request)
        if method in _BY_NAME:
            return self._by_name(peer, request, _BY_NAME[method])
        if method in _BY_URI:
            return self._by_uri(peer, request)
        if method == "completion/complete":
            return self._complete(peer, request)
        if method == "logging/setLevel":
            return self._set_level(peer, request)
        return super()._handle_request(peer, request)

    # -- starting upstreams ----------------------------------------------------------------

    async def _ready(self, name: str) -> ProxyServer:
        """The upstream `name`, started (its shared client open), within its start bound.
        Raises -32603 naming it when it cannot start (the why is logged)."""
        if self._stack is None:
            raise RuntimeError("the gateway is not running: serve it")
        upstream = self.upstreams[name]
        await upstream.start_upstream()
        return upstream

    async def _start_all(self, stack: contextlib.AsyncExitStack) -> None:
        """Every upstream at once: a hung one costs its own bound, not the others' turn."""
        for upstream in self.upstreams.values():  # nothing waits: start_at_entry is off
            await stack.enter_async_context(upstream.running())
        names = list(self.upstreams)
        await asyncio.gather(*(self._ready(name) for name in names), return_exceptions=True)

    def _start_later(self, name: str) -> None:
        """Try again to start an upstream that failed, for the next list (this one does not
        wait: the why is logged)."""
        task = asyncio.ensure_future(self.upstreams[name].start_upstream())
        task.add_done_callback(_retrieved)

    # -- forwarding ------------------------------------------------------------------------

    async def _forward(
        self, name: str, peer: Peer, request: RequestReceived, params: JSONObject | None
    ) -> JSONObject:
        upstream = await self._ready(name)
        sent = RequestReceived(
            request.id, request.method, params, request.progress_token, request.envelope
        )
        return await upstream.forward(Context(upstream, peer, sent))

    async def _list(self, peer: Peer, request: RequestReceived) -> JSONObject:
        key, capability = _LISTS[request.method]
        names = [name for name in self.upstreams if name in self._declaring(capability)]
        for name in [name for name in names if not self.upstreams[name].upstreams.started]:
            logger.warning("gateway: %s left out of %s: it has not started", name, request.method)
            self._start_later(name)
            names.remove(name)
        found = await asyncio.gather(
            *(
                asyncio.wait_for(self._list_all(name, peer, request, key), LIST_TIMEOUT)
                for name in names
            ),
            return_exceptions=True,
        )
        merged: list[JSONObject] = []
        for name, items in zip(names, found, strict=True):
            if isinstance(items, BaseException):
                logger.warning("gateway: %s left out of %s: %s", name, request.method, items)
                continue
            merged += self._named(name, key, items)
            self._route(name, key, items)
        return {key: merged}

    def _declaring(self, capability: str) -> set[str]:
        """Upstreams that may have the capability (not started: may, once they do)."""
        return {
            name
            for name, upstream in self.upstreams.items()
            if not upstream.upstreams.started or capability in upstream.capabilities()
        }

    async def _list_all(
        self, name: str, peer: Peer, request: RequestReceived, key: str
    ) -> list[JSONObject]:
        items: list[JSONObject] = []
        params: JSONObject = {}
        while True:
            page = await self._forward(name, peer, request, params)
            items += [item for item in page.get(key) or () if isinstance(item, dict)]
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return items
            params = {"cursor": cursor}

    def _named(self, server: str, key: str, items: list[JSONObject]) -> list[JSONObject]:
        """The server's items under public names (tools: only those it offers)."""
        entry, prefix = self.config.servers[server], self.prefixes[server]
        taken: set[str] = set()
        named: list[JSONObject] = []
        for item in items:
            name = item.get("name")
            if not isinstance(name, str) or (key == "tools" and not entry.offers(name)):
                continue
            named.append({**item, "name": public_name(prefix, name, taken)})
        return named

    def _route(self, server: str, key: str, items: list[JSONObject]) -> None:
        """Route the resource URIs (or templates) of `server`'s full list to it, and no
        longer those it stopped offering: the table holds what the servers list now."""
        if key not in ("resources", "resourceTemplates"):
            return
        table, field = (
            (self._uris, "uri") if key == "resources" else (self._templates, "uriTemplate")
        )
        offered = {item[field] for item in items if isinstance(item.get(field), str)}
        for uri in [uri for uri, owners in table.items() if server in owners]:
            if uri not in offered:
                table[uri].remove(server)
                if not table[uri]:
                    del table[uri]
        for uri in offered:
            owners = table.setdefault(uri, [])
            if server not in owners:
                owners.append(server)

    def _owner(self, name: Any, kind: str) -> tuple[str, str]:
        """The server and its own name behind a public tool or prompt name. Raises -32602
        for a name no server offers (a denied tool included)."""
        server = prefix_owner(self.prefixes, name) if isinstance(name, str) else None
        if server is not None:
            original = name[len(self.prefixes[server]) :]
            if kind != "tools" or self.config.servers[server].offers(original):
                return server, original
        raise ProtocolError(INVALID_PARAMS, f"Unknown {kind[:-1]}: {name}")

    async def _by_name(self, peer: Peer, request: RequestReceived, kind: str) -> JSONObject:
        params = request.params or {}
        server, original = self._owner(params.get("name"), kind)
        return await self._forward(server, peer, request, {**params, "name": original})

    async def _by_uri(self, peer: Peer, request: RequestReceived) -> JSONObject:
        params = request.params or {}
        server = await self._uri_owner(peer, request, params.get("uri"))
        return await self._forward(server, peer, request, params)

    async def _uri_owner(self, peer: Peer, request: RequestReceived, uri: Any) -> str:
        """The one server offering `uri` (the Host's rule, see the module docstring).
        Raises -32602 (several servers, no string), -32002 (none)."""
        if not isinstance(uri, str):
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: {request.method} needs a uri")
        if uri not in self._uris:
            listing = RequestReceived(request.id, "resources/list", None, None, request.envelope)
            await self._list(peer, listing)
        owners = self._uris.get(uri)
        if not owners:
            templates = RequestReceived(
                request.id, "resources/templates/list", None, None, request.envelope
            )
            await self._list(peer, templates)
            owners = _fitting(self._templates, uri)
        if not owners:
            raise ProtocolError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
        if len(owners) > 1:
            raise ProtocolError(
                INVALID_PARAMS, f"{uri!r} is offered by several servers ({', '.join(owners)})"
            )
        return owners[0]

    async def _complete(self, peer: Peer, request: RequestReceived) -> JSONObject:
        params = request.params or {}
        ref = params.get("ref") or {}
        if ref.get("type") == "ref/prompt":
            server, original = self._owner(ref.get("name"), "prompts")
            sent = {**params, "ref": {**ref, "name": original}}
            return await self._forward(server, peer, request, sent)
        template = str(ref.get("uri"))
        if template not in self._templates:  # not listed yet: list the templates
            listing = RequestReceived(
                request.id, "resources/templates/list", None, None, request.envelope
            )
            await self._list(peer, listing)
        owners = self._templates.get(template) or []
        if len(owners) != 1:
            raise ProtocolError(INVALID_PARAMS, f"no one server offers {ref.get('uri')!r}")
        return await self._forward(owners[0], peer, request, params)

    async def _set_level(self, peer: Peer, request: RequestReceived) -> JSONObject:
        """Every upstream's level (an upstream that cannot be reached is skipped)."""
        for name, upstream in self.upstreams.items():
            if "logging" in upstream.capabilities():
                with contextlib.suppress(ProtocolError):
                    await self._forward(name, peer, request, request.params)
        return {}


class _Shared:
    """What a shared upstream client says, told to the gateway's clients: a list changed
    (every session and 2026-07-28 listener), a resource was updated (its subscribers)."""

    def __init__(self, gateway: GatewayServer, server: str) -> None:
        self.gateway = gateway
        self.server = server

    def __call__(self, method: str, params: JSONObject | None) -> None:
        kind = method.removeprefix("notifications/").removesuffix("s/list_changed")
        if method.endswith("/list_changed") and kind in ("tool", "prompt", "resource"):
            self.gateway._list_changed(kind)
        elif method == "notifications/resources/updated" and params is not None:
            uri = params.get("uri")
            if type(uri) is str:
                self.gateway.subscriptions.resource_updated(uri)


def _retrieved(task: asyncio.Future[None]) -> None:
    if not task.cancelled():
        task.exception()  # a failed start: logged where it failed


def _fitting(templates: dict[str, list[str]], uri: str) -> list[str]:
    found: list[str] = []
    for template, servers in templates.items():
        if uri_fits(template, uri):
            found += [server for server in servers if server not in found]
    return found


def gateway(
    config: HostConfig | str | os.PathLike[str],
    *,
    start_timeout: float | None = DEFAULT_START_TIMEOUT,
    **client_options: Any,
) -> GatewayServer:
    """A `Server` serving every enabled server of an `mcpServers` (or VS Code `servers`)
    configuration behind one endpoint, each named as the Host names it (docs/gateway.md).

    `config`: a path, or a `HostConfig` from `load_config`. `client_options` are `Client`
    keyword arguments every upstream client gets (under each entry's own). An entry with
    `"shared": true` has one upstream client for all downstream sessions (no sampling,
    elicitation or roots asked through it: no one client owns it); `"timeout": seconds`
    bounds each request to it (default: none, the downstream client's own timeout cancels);
    `start_timeout` bounds each entry's start (its `"timeout"` when it has one);
    `"limits": {...}` sets its `UpstreamLimits` (camelCase keys: `maxResultBytes`, `rate`,
    `burst`, `maxInFlight`, `maxNotificationsPerSecond`; null turns one off).

    Raises what `load_config` raises (OSError, ConfigError) for a path; entries that could
    not be read (their limits included) are logged and left out. Upstreams that fail to
    start are logged (why), left out of lists and answer -32603 when called; each call, and
    each list in the background, tries to start them again.
    """
    loaded = config if isinstance(config, HostConfig) else load_config(config)
    for name, error in loaded.errors.items():
        logger.warning("gateway: server %s left out: %s", name, error)
    return GatewayServer(loaded, dict(client_options), start_timeout)


@contextlib.asynccontextmanager
async def _started(server: Server) -> AsyncIterator[None]:
    assert isinstance(server, GatewayServer)
    async with contextlib.AsyncExitStack() as stack:
        server._stack = stack
        try:
            await server._start_all(stack)
            yield None
        finally:
            server._stack = None


__all__ = ["LIST_TIMEOUT", "SHARED_KEY", "TIMEOUT_KEY", "GatewayServer", "gateway"]
