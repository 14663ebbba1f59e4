"""2026-07-28 clients answering a handshake-era upstream's requests, in input_required rounds.

A handshake-era server asks its client mid-call (sampling/createMessage, elicitation/create,
roots/list requests on the session); a 2026-07-28 client is asked in the answer instead
(`resultType: "input_required"`) and sends the same request again with `inputResponses`.
The proxy joins the two so:

1. A 2026-07-28 tools/call, prompts/get or resources/read whose client declared sampling,
   elicitation or roots is forwarded on an upstream session *leased* to it alone, whose
   client declared the same (so the upstream offers what it would offer that client). Leases
   are kept and reused: a handshake happens once per concurrent call, not once per call.
2. The upstream call runs in its own task. When the upstream asks, the downstream request
   is answered input_required with the ask (under the key an mcpkit upstream named it by,
   `INPUT_KEY_META` in its `_meta`, else "proxy-1", "proxy-2", ...) and a `requestState`
   naming the call's round (random, 192 bits, new each round; bound to the caller's
   principal); the upstream call keeps waiting.
3. The client's retry carries the answers: they answer the upstream's requests, and the
   retry waits for the upstream's result or its next ask (a new round). Answers whose ask
   has not come yet are kept for it; a first round may carry answers too (a client that
   knows the keys), and an ask nobody answered is asked again in the next round.

The same leases serve a 2026-07-28 request that asks for log messages (its `logLevel`):
the upstream's `notifications/message` on a leased session belong to the call it serves and
go to that downstream request's stream (a handshake-era upstream session is set to the
level when it is opened, so leases are kept per level). A leased session's list_changed
(a change its call caused, which some servers tell only the session that caused it) goes
where the shared upstream client's goes (`on_change`: the proxy's 2026-07-28 listens).

A call nobody comes back for is cancelled after `ttl` seconds, and its lease closed (the
upstream session may still hold state of the call). The pending call and its lease live in
the process that answered input_required. With several workers (`worker` set: a shared
state) the requestState names that worker, "<worker>.<random>", and a retry landing on
another worker is sent home to it (home.py; `home_of` says where).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any

import orjson

from mcpkit.client import Client, Era
from mcpkit.errors import INTERNAL_ERROR, InvalidParams, MCPError, ProtocolError
from mcpkit.gateway.downstream import Notify, relay_options
from mcpkit.server.asks import INPUT_KEY_META

if TYPE_CHECKING:
    from mcpkit.gateway.upstreams import Link, Upstreams

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.gateway")
DEFAULT_TTL = 600.0
_IDLE_PER_KIND = 4  # leases kept open per set of client capabilities, beyond those in use
_ASKED = ("sampling", "elicitation", "roots")
_LIST_CHANGED = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    }
)
Logs = Callable[["JSONObject | None"], None]


def asks_input(declared: JSONObject) -> bool:
    """Whether a client that `declared` these capabilities can be asked for input."""
    return any(isinstance(declared.get(name), dict) for name in _ASKED)


class PendingCall:
    """One forwarded call between rounds: the upstream call's task and its open asks."""

    def __init__(self, token: str, principal: str | None, lease: Lease) -> None:
        self.token = token
        self.principal = principal
        self.lease = lease
        self.task: asyncio.Task[JSONObject] | None = None
        self.asks: asyncio.Queue[str] = asyncio.Queue()  # keys of new asks, in order
        self.open: dict[str, tuple[JSONObject, asyncio.Future[JSONObject]]] = {}
        self.count = 0
        self.keys: set[str] = set()  # the upstream's own keys used so far
        self.given: dict[str, JSONObject] = {}  # answers sent before their ask (by key)
        self.expiry: asyncio.TimerHandle | None = None
        self.finished = False  # its lease closed or given back

    async def ask(self, method: str, params: JSONObject | None) -> JSONObject:
        """The upstream asks: the answer given for its key already, else the downstream
        client's answer in its next round."""
        key, params = self._key(params)
        if key in self.given:  # answered before it was asked (inputResponses by key)
            return self.given.pop(key)
        request: JSONObject = {"method": method}
        if params is not None:
            request["params"] = params
        answer: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
        self.open[key] = (request, answer)
        self.asks.put_nowait(key)
        try:
            return await answer
        finally:
            self.open.pop(key, None)

    def _key(self, params: JSONObject | None) -> tuple[str, JSONObject | None]:
        """The ask's key: the one an mcpkit upstream named it by (`INPUT_KEY_META`), else
        "proxy-N"; and its params without that name."""
        self.count += 1
        meta = params.get("_meta") if params is not None else None
        named = meta.get(INPUT_KEY_META) if type(meta) is dict else None
        if params is not None and type(meta) is dict and INPUT_KEY_META in meta:
            rest = {k: v for k, v in meta.items() if k != INPUT_KEY_META}
            params = {k: v for k, v in params.items() if k != "_meta"}
            if rest:
                params["_meta"] = rest
        if type(named) is str and named not in self.open and named not in self.keys:
            self.keys.add(named)
            return named, params
        return f"proxy-{self.count}", params


class Lease:
    """An upstream session lent to one call at a time; its requests go to that call, its
    log messages to `logs_to` (the call's downstream request), its list_changed to
    `on_change`."""

    def __init__(self, kind: bytes, on_change: Notify | None) -> None:
        self.kind = kind
        self.link: Link | None = None
        self.current: PendingCall | None = None
        self.logs_to: Logs | None = None
        self.on_change = on_change

    def notify(self, method: str, params: JSONObject | None) -> None:
        if method == "notifications/message":
            if self.logs_to is not None:
                self.logs_to(params)
        elif method in _LIST_CHANGED and self.on_change is not None:
            self.on_change(method, params)

    async def ask(self, method: str, params: JSONObject | None) -> JSONObject:
        call = self.current
        if call is None:
            raise ProtocolError(INTERNAL_ERROR, f"{method}: no downstream request to ask")
        return await call.ask(method, params)


class InputBridge:
    """The calls waiting for their client's next round, and the leased upstream sessions."""

    def __init__(self, upstreams: Upstreams, ttl: float = DEFAULT_TTL) -> None:
        self.upstreams = upstreams
        self.ttl = ttl
        self.worker: str | None = None  # this worker's id, with several (home.py)
        self.signing: list[bytes] = []  # the workers' shared keys that sign the worker's name
        self.pending: dict[str, PendingCall] = {}
        self.on_change: Notify | None = None  # where leased sessions' list_changed go
        self._idle: dict[bytes, list[Lease]] = {}
        self._background: set[asyncio.Task[None]] = set()

    async def start(
        self,
        declared: JSONObject,
        principal: str | None,
        call: Callable[[Link], Any],
        given: Any = None,
        level: str | None = None,
    ) -> PendingCall:
        """Lease a session for a client that `declared` these capabilities (and asked for
        log messages of `level`) and start `call(link)` (a coroutine: the upstream request)
        on it; `given`: inputResponses sent with the first round (a stateless client
        answering by key before it is asked). Raises InvalidParams for `given` that is not
        an object of objects."""
        given = _responses(given)
        lease = await self._lease(declared, level)
        pending = PendingCall(self._token(), principal, lease)
        pending.given.update(given)
        lease.current = pending
        assert lease.link is not None
        pending.task = asyncio.ensure_future(call(lease.link))
        self.pending[pending.token] = pending
        return pending

    def resume(self, token: Any, principal: str | None, responses: Any) -> PendingCall:
        """The call a retry continues, its answers given to the upstream's waiting requests.
        Raises InvalidParams for an unknown or expired requestState, another principal's,
        or inputResponses that are not an object of objects."""
        pending = self.pending.get(token) if type(token) is str else None
        if pending is None or pending.principal != principal:
            raise InvalidParams("Invalid params: requestState is unknown or expired")
        responses = _responses(responses)
        for key, (_request, answer) in list(pending.open.items()):
            if key in responses and not answer.done():
                answer.set_result(responses.pop(key))
        pending.given.update(responses)  # for asks still to come; unknown keys are ignored
        return pending

    @contextlib.asynccontextmanager
    async def borrowed(self, level: str, logs_to: Logs) -> AsyncIterator[Link]:
        """A leased session for one request that asks for log messages of `level` and asks
        no input of its client: its log messages go to `logs_to`. Given back after an
        answer (a result or an error answer); closed when the request failed otherwise
        (cancelled: the upstream may still be busy with it)."""
        lease = await self._lease({}, level)
        lease.logs_to = logs_to
        assert lease.link is not None
        try:
            yield lease.link
        except ProtocolError:
            self._give_back(lease)
            raise
        except BaseException:
            await self._close(lease)
            raise
        self._give_back(lease)

    async def next_round(self, pending: PendingCall) -> JSONObject:
        """The upstream's result, or an input_required answer with what it asks now."""
        self._stop_expiry(pending)
        assert pending.task is not None
        unanswered = [key for key, (_, answer) in pending.open.items() if not answer.done()]
        if not unanswered:
            waiting = asyncio.ensure_future(pending.asks.get())
            try:
                await asyncio.wait([pending.task, waiting], return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:  # the downstream request was cancelled
                waiting.cancel()
                await self.finish(pending)
                raise
            if pending.task.done():
                waiting.cancel()
                return await self._result(pending)
        while not pending.asks.empty():  # asks made together go in one round
            pending.asks.get_nowait()
        still_open = pending.open.items()
        requests = {key: asked for key, (asked, answer) in still_open if not answer.done()}
        pending.expiry = asyncio.get_running_loop().call_later(
            self.ttl, lambda: self._in_background(self.finish(pending))
        )
        self._new_token(pending)
        return {
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": pending.token,
        }

    async def finish(self, pending: PendingCall) -> None:
        """Forget `pending`; its upstream call is cancelled if it still runs (its lease is
        then closed: the upstream may still be busy with it), else the lease is kept."""
        if pending.finished:  # two rounds waited on it (a replayed requestState): once only
            return
        pending.finished = True
        self._stop_expiry(pending)
        self.pending.pop(pending.token, None)
        task, lease = pending.task, pending.lease
        lease.current = lease.logs_to = None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task])
            await self._close(lease)
            return
        self._give_back(lease)

    def _new_token(self, pending: PendingCall) -> None:
        """Each round its own requestState: a retry continues the round it answers, and a
        replay of an older round's state is refused."""
        self.pending.pop(pending.token, None)
        pending.token = self._token()
        self.pending[pending.token] = pending

    def _token(self) -> str:
        """A new requestState: 192 random bits; with several workers, after this worker's
        id and followed by a MAC of both under the workers' shared key (the other workers
        send a retry home to it, and only to a worker one of them named)."""
        token = secrets.token_urlsafe(24)
        if self.worker is None:
            return token
        named = f"{self.worker}.{token}"
        return f"{named}.{_mac(self.signing[0], named)}"

    def home_of(self, token: Any) -> str | None:
        """The other worker a requestState names (None: this one's, none at all, or a
        requestState no worker made: its MAC does not check, so it costs no home call)."""
        if self.worker is None or type(token) is not str:
            return None
        named, dot, mac = token.rpartition(".")
        home = named.partition(".")[0]
        if not dot or home == self.worker:
            return None
        if not any(hmac.compare_digest(mac, _mac(key, named)) for key in self.signing):
            return None
        return home

    async def aclose(self) -> None:
        for pending in list(self.pending.values()):
            await self.finish(pending)
        for leases in self._idle.values():
            for lease in leases:
                await self._close(lease)
        self._idle.clear()

    async def _result(self, pending: PendingCall) -> JSONObject:
        assert pending.task is not None
        await self.finish(pending)
        if pending.task.cancelled():  # another round of it was cancelled: the call is gone
            raise InvalidParams("Invalid params: requestState is unknown or expired")
        return pending.task.result()  # raises the upstream's error as it came

    async def _lease(self, declared: JSONObject, level: str | None) -> Lease:
        wanted = {name: declared[name] for name in _ASKED if isinstance(declared.get(name), dict)}
        kind = orjson.dumps([wanted, level], option=orjson.OPT_SORT_KEYS)
        idle = self._idle.get(kind)
        if idle:
            return idle.pop()
        lease = Lease(kind, self.on_change)
        options = relay_options(self.upstreams.options, wanted, lease.ask, lease.notify)
        lease.link = await self.upstreams.open_link(options)
        client = lease.link.client
        if level is not None and client.era is Era.HANDSHAKE:  # 2026-07-28: on each request
            await _set_level(client, level)
        return lease

    def _give_back(self, lease: Lease) -> None:
        lease.logs_to = None
        idle = self._idle.setdefault(lease.kind, [])
        if len(idle) < _IDLE_PER_KIND:
            idle.append(lease)
        else:
            self._in_background(self._close(lease))

    async def _close(self, lease: Lease) -> None:
        if lease.link is not None:
            await lease.link.client.close()

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _stop_expiry(self, pending: PendingCall) -> None:
        if pending.expiry is not None:
            pending.expiry.cancel()
            pending.expiry = None


async def _set_level(client: Client, level: str) -> None:
    """Ask a leased handshake-era session for log messages of `level` (refused: it sends
    none, and the calls still run)."""
    try:
        await client.set_logging_level(level)
    except MCPError as exc:
        logger.info("the upstream refused logging/setLevel %s: %s", level, exc)
    except BaseException:
        await client.close()
        raise


def _mac(key: bytes, named: str) -> str:
    digest = hmac.new(key, named.encode(), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _responses(given: Any) -> dict[str, JSONObject]:
    """inputResponses as sent (None: none). Raises InvalidParams unless an object of objects."""
    if given is None:
        return {}
    if type(given) is not dict or any(type(v) is not dict for v in given.values()):
        raise InvalidParams("Invalid params: inputResponses must be an object of objects")
    return dict(given)
