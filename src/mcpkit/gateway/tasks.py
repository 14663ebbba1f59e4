"""Tasks through the proxy, in both shapes (docs/gateway.md, "Tasks").

How this works. `ProxyTasks` serves what the proxy's `_handle_request` hands it: a tools/call
that is or may become a task, and every `tasks/*` request. It remembers each task it saw
created (`Forwarded`: its owner, the upstream link that holds it, the upstream's era) and
sends each later request for that id to that link only, after checking the caller is the
owner (`owner_of`: the principal, else the handshake session). An id the proxy did not see
created, or someone else's, is "Task not found", exactly as an upstream would say. With
several workers (`share`) each task is recorded in Redis as the creating worker's; a
request for it landing on another worker (a local miss) is sent there (home.py, the owner
with it: checked there).

The two shapes (mcpkit.protocol.tasks) meet here when the downstream client and the upstream
speak different eras:

- a 2026-07-28 client and a 2025-11-25 upstream: the proxy asks for the task (`params.task`)
  when the client declares the extension and the tool may run as a task; `tasks/get` inlines
  the result or error, read with `tasks/result` once the task has ended; `tasks/cancel` of an
  ended task is acknowledged; status notifications go to the client's listens on the task.
- a 2025-11-25 client and a 2026-07-28 upstream: `params.task` is dropped (the upstream
  decides); a call the upstream answers inline is kept as a finished task of the proxy's own
  (the client asked for a task); a task the client did not ask for is followed to its end;
  `tasks/result` follows the task with `tasks/get`, the task's questions answered by the
  client through its session; the proxy listens upstream for the task's status and sends
  `notifications/tasks/status`.
- No equivalent: `tasks/list` in front of a 2026-07-28 upstream is -32601 (the capability
  does not offer `list` there; unless a handshake-era session's own upstream session speaks
  the handshake era, an upstream of both eras in auto mode: it lists there); a question
  inside a 2025-11-25 upstream's task is not carried to a 2026-07-28 client (the shared
  upstream client declares no elicitation or sampling).

A downstream cancel of `tasks/result` cancels that wait only (upstream: its own request);
only `tasks/cancel` cancels the task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.client import Era
from mcpkit.client.tasks import TaskHandle, TaskState, answered_with_task, wire_result
from mcpkit.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    ConnectionClosed,
    MCPError,
    MethodNotFound,
    ProtocolError,
    RequestTimeout,
    TaskCancelled,
)
from mcpkit.gateway.home import HomeCalls, HomeRecords, HomeSilent, home_records
from mcpkit.gateway.progress import progress_relay
from mcpkit.gateway.upstreams import Link, unreachable
from mcpkit.gateway.wire import downstream_error, upstream_params
from mcpkit.protocol import tasks as wire
from mcpkit.server.tasks import owner_of

if TYPE_CHECKING:
    from mcpkit.gateway.upstreams import Upstreams
    from mcpkit.runtime import Peer
    from mcpkit.server import Context
    from mcpkit.server.subscriptions import SubscriptionHub

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.gateway")

TASK_METHODS = frozenset(
    {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"}
)
STATUS = "notifications/tasks/status"  # 2025-11-25
MAX_REMEMBERED = 10_000  # tasks the proxy routes; the oldest is forgotten beyond
RECORD_TTL = 86_400.0  # seconds a task of no ttl is known to the other workers
_BY_ID = ("tasks/get", "tasks/result", "tasks/cancel", "tasks/update")
_NOT_FOUND = "Failed to retrieve task: Task not found"


@dataclass(frozen=True, slots=True)
class TaskAsk:
    """A tasks/get, result, cancel or update request, as the worker holding the task needs
    it: from this worker's downstream client, or sent by another worker (`request_id` None)."""

    method: str
    params: JSONObject
    per_request: bool  # from a 2026-07-28 client
    owner: str | None  # the caller (`owner_of`): only the task's owner reaches it
    request_id: Any


@dataclass(slots=True)
class Forwarded:
    """A task the proxy saw created: whose it is and which upstream link holds it. `done`:
    a call the client asked to run as a task that the 2026-07-28 upstream answered at once
    (the proxy holds its result; there is no upstream task)."""

    task_id: str
    owner: str | None
    link: Link
    peer: Peer
    per_request: bool  # the creating client's era (where status notifications go)
    done: JSONObject | None = None
    created: float = field(default_factory=time.time)
    outcome: JSONObject | ProtocolError | None = None  # a 2025-11-25 task's, once read


def _no_listing() -> ProtocolError:
    return ProtocolError(
        -32601,
        "Method not found: tasks/list (the upstream server speaks 2026-07-28, "
        "which has no task listing)",
    )


def capability(upstream: JSONObject) -> JSONObject | None:
    """The 2025-11-25 `tasks` capability the proxy declares for an upstream's capabilities
    (None: it runs no tasks). A 2026-07-28 upstream's extension offers no `list`."""
    declared = upstream.get("tasks")
    if type(declared) is dict:
        return declared
    if wire.declares_extension(upstream):
        return {"cancel": {}, "requests": {"tools": {"call": {}}}}
    return None


class Forwarding(Protocol):
    """What the task forwarding needs of its proxy (a `ProxyServer`)."""

    upstreams: Upstreams
    share_upstream: bool
    subscriptions: SubscriptionHub

    def forward(self, ctx: Context) -> Awaitable[JSONObject]: ...

    def upstream_runs_tasks(self) -> bool: ...

    def task_status(self, task_id: str, task: JSONObject) -> int: ...


class ProxyTasks:
    """The tasks of one proxy (see the module docstring)."""

    def __init__(self, proxy: Forwarding) -> None:
        self.proxy = proxy
        self.known: dict[str, Forwarded] = {}
        self._support: dict[str, str | None] = {}  # tool -> its upstream taskSupport
        self._watchers: set[asyncio.Task[None]] = set()
        self.records: HomeRecords | None = None  # with several workers (`share`)
        self.homes: HomeCalls | None = None
        proxy.subscriptions.task_filter = self.followable

    # -- what the proxy hands over -------------------------------------------------------

    def takes(self, ctx: Context) -> bool:
        """Whether this request is served here: tasks/*, or a tools/call that is (or, with
        a 2026-07-28 upstream, may be answered as) a task."""
        method = ctx.request.method
        if method in TASK_METHODS:
            return True
        if method != "tools/call" or not self.proxy.upstream_runs_tasks():
            return False
        if ctx.envelope is not None:
            return wire.declares_extension(ctx.envelope.capabilities)
        session = ctx.state is not None and not self.proxy.share_upstream  # its own link's era
        era = self.proxy.upstreams.session_era() if session else self._upstream_era()
        return "task" in ctx.params or era is Era.PER_REQUEST

    async def serve(self, ctx: Context) -> JSONObject:
        """Serve a request `takes` took. Raises ProtocolError (the upstream's, in the
        client's era; -32602 "Task not found"; -32601 where a shape has no equivalent)."""
        try:
            return await self._serve(ctx)
        except ProtocolError as exc:
            raise downstream_error(exc, ctx.envelope is not None, self._upstream_era()) from None
        except (ConnectionClosed, RequestTimeout) as exc:
            raise unreachable(exc, self.proxy.upstreams.name) from None

    async def _serve(self, ctx: Context) -> JSONObject:
        method = ctx.request.method
        if not self.proxy.upstream_runs_tasks():
            raise MethodNotFound(method)
        if method == "tools/call":
            return await self._call(ctx)
        if method == "tasks/list":
            return await self._list(ctx)
        ask = TaskAsk(method, ctx.params, ctx.envelope is not None, owner_of(ctx), ctx.request_id)
        task_id = _task_id(ask)
        if task_id not in self.known and self.records is not None:  # a miss: maybe elsewhere
            (record,) = await self.records.read([task_id])
            if record is not None and record["w"] != self.records.worker:
                return await self._at(record["w"], ask, task_id)
        return await self._serve_known(ask)

    async def _serve_known(self, ask: TaskAsk) -> JSONObject:
        """tasks/get, result, cancel or update of a task this worker saw created. Raises
        -32602 "Task not found" for another's or an unknown one."""
        entry = self._find(ask)
        serve: dict[str, Callable[[TaskAsk, Forwarded], Awaitable[JSONObject]]] = {
            "tasks/get": self._get,
            "tasks/result": self._result,
            "tasks/cancel": self._cancel,
            "tasks/update": self._update,
        }
        return await self._related(ask.request_id, entry.link, serve[ask.method](ask, entry))

    # -- several workers: a task another worker saw created (home.py) ----------------------

    def share(self, options: Mapping[str, Any], homes: HomeCalls) -> None:
        """Record each task seen created in the shared state of an HTTP app's `options`
        (task id -> this worker), so that the other workers send its tasks/* here."""
        state = options["state"]
        name = self.proxy.upstreams.name or ""
        self.records = home_records(state, "task:" + name, homes.worker)
        self.homes = homes
        homes.ops["tasks:" + name] = self._at_home

    async def _at(self, home: str, ask: TaskAsk, task_id: str) -> JSONObject:
        """`ask` served by the worker `home` that saw the task created (the owner goes with
        it: checked there). Raises its JSON-RPC error, or -32603 when it gives no sign."""
        assert self.homes is not None
        sent = {"m": ask.method, "p": ask.params, "r": ask.per_request, "o": ask.owner}
        try:
            op = "tasks:" + (self.proxy.upstreams.name or "")
            return await self.homes.call(home, op, sent)
        except HomeSilent as exc:
            logger.warning("task %s: %s", task_id, exc)
            raise ProtocolError(
                INTERNAL_ERROR,
                "the proxy worker holding the task does not answer (it may have stopped)",
                {"taskId": task_id},
            ) from None

    async def _at_home(self, sent: JSONObject) -> JSONObject:
        """Another worker's tasks/* request for a task of this one (`_at`)."""
        method, params, owner = sent.get("m"), sent.get("p"), sent.get("o")
        if method not in _BY_ID or type(params) is not dict:
            raise ProtocolError(INVALID_PARAMS, "Invalid params: not a task request")
        ask = TaskAsk(str(method), params, sent.get("r") is True, owner, None)
        try:
            return await self._serve_known(ask)
        except (ConnectionClosed, RequestTimeout) as exc:  # as `serve` says it at home
            raise unreachable(exc, self.proxy.upstreams.name) from None

    async def followable(self, ctx: Context, task_ids: list[str]) -> list[str]:
        """The ids a 2026-07-28 listen may follow: the caller's tasks the proxy knows (with
        several workers, also those another worker saw created: their status comes from
        there, fanned out)."""
        owner = owner_of(ctx)
        return await self._owned(owner, task_ids)

    async def _owned(self, owner: str | None, task_ids: list[str]) -> list[str]:
        """Those of `task_ids` that `owner` created through this proxy (any worker's)."""
        known, elsewhere = self.known, [i for i in task_ids if i not in self.known]
        records = await self.records.read(elsewhere) if self.records is not None else []
        theirs = {i for i, r in zip(elsewhere, records, strict=True) if r and r.get("o") == owner}
        mine = [i for i in task_ids if i in known and known[i].owner == owner]
        return [i for i in task_ids if i in theirs or i in mine]

    def upstream_notification(self, method: str, params: JSONObject | None) -> None:
        """A shared upstream client's `notifications/tasks/status`: to the task's owner."""
        if method != STATUS or params is None:
            return
        entry = self.known.get(str(params.get("taskId")))
        if entry is not None:
            self._spawn(self._relay_status(entry, params))

    async def aclose(self) -> None:
        for watcher in list(self._watchers):
            watcher.cancel()
        await asyncio.gather(*self._watchers, return_exceptions=True)

    # -- tools/call ----------------------------------------------------------------------

    async def _call(self, ctx: Context) -> JSONObject:
        proxy = self.proxy
        per_request = ctx.envelope is not None
        shared = per_request or ctx.state is None or proxy.share_upstream
        link = await proxy.upstreams.link_for(ctx.peer, shared, ctx.client_capabilities)
        upstream_per_request = link.client.era is Era.PER_REQUEST
        params = upstream_params(ctx.params, keep_envelope=per_request and upstream_per_request)
        params = dict(params or {})
        asked = "task" in params
        if upstream_per_request:
            params.pop("task", None)  # the upstream decides
            await link.client.learn_tool(str(params.get("name")))
        elif per_request and await self._may_be_task(link, str(params.get("name"))):
            params["task"] = {}
        elif per_request:  # never a task: the proxy's own path (input_required rounds)
            return await proxy.forward(ctx)
        async with proxy.upstreams.guard.call(proxy.upstreams.name):
            sent = link.client.request(
                "tools/call",
                params,
                on_progress=progress_relay(ctx),
                # A 2026-07-28 client answers the upstream's input_required rounds itself.
                input_required="return" if per_request else "answer",
            )
            raw = await self._related(ctx.request_id, link, sent)
        proxy.upstreams.guard.check_size(raw, proxy.upstreams.name)
        if not answered_with_task(params, raw):
            if asked and not per_request:  # the client asked for a task: a finished one
                return await self._done_task(ctx, link, raw)
            return raw
        state = wire_state(raw)
        if not per_request and not asked:  # a task the client did not ask for: follow it
            handle = TaskHandle(link.client, state)
            return await self._related(ctx.request_id, link, wire_result(handle))
        entry = self._remember(ctx, link, state.task_id)
        await self._record(entry, state.raw)
        if upstream_per_request:
            self._spawn(self._watch(entry))
        return created(state, per_request=per_request)

    async def _may_be_task(self, link: Link, name: str) -> bool:
        if name not in self._support:
            for tool in await link.client.list_all_tools():
                execution = tool.execution
                support = None if execution is None else execution.task_support
                self._support[tool.name] = support
        return self._support.get(name) in ("optional", "required")

    async def _done_task(self, ctx: Context, link: Link, result: JSONObject) -> JSONObject:
        task_id = "proxy-" + _random_id()
        entry = self._remember(ctx, link, task_id)
        entry.done = result
        await self._record(entry, {})
        return {"task": handshake_task(self._done_view(entry))}

    def _done_view(self, entry: Forwarded) -> JSONObject:
        stamp = wire.timestamp(entry.created)
        status = "failed" if (entry.done or {}).get("isError") else "completed"
        return {
            "taskId": entry.task_id,
            "status": status,
            "createdAt": stamp,
            "lastUpdatedAt": stamp,
            "ttl": None,
        }

    # -- tasks/* -------------------------------------------------------------------------

    def _find(self, ask: TaskAsk) -> Forwarded:
        task_id = _task_id(ask)
        entry = self.known.get(task_id)
        if entry is None or entry.owner != ask.owner:
            if entry is not None:
                logger.warning("task %s asked for through the proxy by another caller", task_id)
            raise ProtocolError(INVALID_PARAMS, _NOT_FOUND, {"taskId": task_id})
        return entry

    async def _get(self, ask: TaskAsk, entry: Forwarded) -> JSONObject:
        if entry.done is not None:
            if ask.per_request:
                return {**flat_task(self._done_view(entry)), "result": entry.done}
            return self._done_view(entry)
        raw = await self._upstream(ask, entry, "tasks/get")
        if _per_request(entry.link) == ask.per_request:
            return raw
        if not ask.per_request:
            return handshake_task(raw)
        return await self._detailed(entry, raw)

    async def _detailed(self, entry: Forwarded, task: JSONObject) -> JSONObject:
        """A 2025-11-25 upstream's task as a 2026-07-28 tasks/get shows it: flat, with the
        result or error inlined once it has ended (a tool error is `completed`)."""
        shown = flat_task(task)
        if task.get("status") not in ("completed", "failed"):
            return shown
        outcome = await self._outcome(entry)
        if isinstance(outcome, ProtocolError):
            return {**shown, "status": "failed", "error": _error_wire(outcome)}
        return {**shown, "status": "completed", "result": wire.without_related(outcome)}

    async def _outcome(self, entry: Forwarded) -> JSONObject | ProtocolError:
        if entry.outcome is None:
            try:
                entry.outcome = await entry.link.client.request(
                    "tasks/result", {"taskId": entry.task_id}, timeout=None
                )
            except ProtocolError as exc:
                entry.outcome = exc
        return entry.outcome

    async def _result(self, ask: TaskAsk, entry: Forwarded) -> JSONObject:
        if ask.per_request:
            raise MethodNotFound("tasks/result")
        if entry.done is not None:
            return wire.with_related(entry.done, entry.task_id)
        if not _per_request(entry.link):
            return await entry.link.client.request(
                "tasks/result", {"taskId": entry.task_id}, timeout=None
            )
        # A 2026-07-28 upstream: follow the task, answering its questions through the
        # session's upstream client (its handlers ask this downstream client).
        handle = TaskHandle(entry.link.client, TaskState(entry.task_id, "working"))
        try:
            result = await wire_result(handle)
        except TaskCancelled:
            raise ProtocolError(
                INVALID_PARAMS, "Task was cancelled", {"taskId": entry.task_id}
            ) from None
        return wire.with_related(result, entry.task_id)

    async def _cancel(self, ask: TaskAsk, entry: Forwarded) -> JSONObject:
        per_request = ask.per_request
        if entry.done is not None:
            if per_request:
                return {}
            raise _terminal(entry.task_id, self._done_view(entry)["status"])
        upstream_per_request = _per_request(entry.link)
        if per_request == upstream_per_request:
            return await self._upstream(ask, entry, "tasks/cancel")
        if per_request:  # a 2025-11-25 upstream refuses an ended task; the extension acks
            with contextlib.suppress(ProtocolError):
                await self._upstream(ask, entry, "tasks/cancel")
            return {}
        before = await self._upstream(ask, entry, "tasks/get")
        if before.get("status") in wire.TERMINAL:
            raise _terminal(entry.task_id, str(before.get("status")))
        await self._upstream(ask, entry, "tasks/cancel")
        return handshake_task(await self._upstream(ask, entry, "tasks/get"))

    async def _update(self, ask: TaskAsk, entry: Forwarded) -> JSONObject:
        if not ask.per_request:
            raise MethodNotFound("tasks/update")
        if entry.done is not None or not _per_request(entry.link):
            return {}  # no question of a 2025-11-25 task reaches this client: keys unknown
        return await self._upstream(ask, entry, "tasks/update")

    async def _list(self, ctx: Context) -> JSONObject:
        """2025-11-25: the caller's tasks among the upstream's (a shared upstream session
        holds everyone's). Raises -32601 in front of a 2026-07-28 upstream (no listing)."""
        proxy = self.proxy
        shared = ctx.state is None or proxy.share_upstream
        if ctx.envelope is not None or (shared and self._upstream_era() is Era.PER_REQUEST):
            raise _no_listing()
        link = await proxy.upstreams.link_for(ctx.peer, shared, ctx.client_capabilities)
        if link.client.era is Era.PER_REQUEST:  # its own upstream session speaks 2026-07-28
            raise _no_listing()
        params = upstream_params(ctx.params, keep_envelope=False)
        raw = await self._related(ctx.request_id, link, link.client.request("tasks/list", params))
        tasks = [t for t in raw.get("tasks") or () if type(t) is dict]
        mine = await self._owned(owner_of(ctx), [str(task.get("taskId")) for task in tasks])
        return {**raw, "tasks": [task for task in tasks if str(task.get("taskId")) in mine]}

    async def _upstream(self, ask: TaskAsk, entry: Forwarded, method: str) -> JSONObject:
        keep = ask.per_request and _per_request(entry.link)
        params = upstream_params(ask.params, keep_envelope=keep) or {}
        return await entry.link.client.request(method, {**params, "taskId": entry.task_id})

    async def _related(
        self, request_id: Any, link: Link, call: Awaitable[JSONObject]
    ) -> JSONObject:
        """Await `call` as one of the session's forwarded requests `request_id` (an upstream
        question asked meanwhile goes with it: see downstream.py; None: a request another
        worker received, which has no stream here)."""
        downstream = link.downstream
        if downstream is None or request_id is None:
            return await call
        downstream.in_flight.append(request_id)
        try:
            return await call
        finally:
            downstream.in_flight.remove(request_id)

    # -- remembering and status ----------------------------------------------------------

    def _remember(self, ctx: Context, link: Link, task_id: str) -> Forwarded:
        entry = Forwarded(task_id, owner_of(ctx), link, ctx.peer, ctx.envelope is not None)
        self.known[task_id] = entry
        while len(self.known) > MAX_REMEMBERED:
            del self.known[next(iter(self.known))]
        return entry

    async def _record(self, entry: Forwarded, task: JSONObject) -> None:
        """With several workers: that this worker is the task's home, for as long as the
        task lives upstream (its ttl, else `RECORD_TTL`). One Redis round trip, when the
        task is created; never when a request lands here."""
        if self.records is None:
            return
        ttl = task.get("ttl", task.get("ttlMs"))  # ms
        seconds = RECORD_TTL
        if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl > 0:
            seconds = ttl / 1000
        await self.records.write(entry.task_id, seconds, {"o": entry.owner})

    async def _watch(self, entry: Forwarded) -> None:
        """A 2026-07-28 upstream's task: listen for its status and relay it (it sends
        `notifications/tasks` only to a listen naming the task)."""
        try:
            async with entry.link.client.listen(task_ids=[entry.task_id]) as sub:
                # What changed before the listen was acknowledged is not sent: look once.
                now = await entry.link.client.request("tasks/get", {"taskId": entry.task_id})
                if now.get("status") != "working":
                    await self._relay_status(entry, now)
                    if now.get("status") in wire.TERMINAL:
                        return
                async for note in sub:
                    task = note.params or {}
                    if task.get("taskId") != entry.task_id:
                        continue
                    await self._relay_status(entry, task)
                    if task.get("status") in wire.TERMINAL:
                        return
        except MCPError as exc:  # the upstream went away: the client's requests will say
            logger.debug("task %s: no more status from upstream: %s", entry.task_id, exc)

    async def _relay_status(self, entry: Forwarded, task: JSONObject) -> None:
        """One status change, in the creating client's shape, to where it listens."""
        # Not the upstream's `_meta` (a listen's subscription id goes there) nor resultType.
        task = {k: v for k, v in task.items() if k not in ("_meta", "resultType")}
        upstream_per_request = _per_request(entry.link)
        if not entry.per_request:
            shown = handshake_task(task) if upstream_per_request else task
            with contextlib.suppress(MCPError):  # the session ended
                entry.peer.notify(STATUS, shown)
            return
        if not upstream_per_request:
            task = await self._detailed(entry, task)
        self.proxy.task_status(entry.task_id, task)

    def _spawn(self, work: Awaitable[None]) -> None:
        watcher = asyncio.ensure_future(work)
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)

    def _upstream_era(self) -> Era:
        return self.proxy.upstreams.shared.client.era


def _task_id(ask: TaskAsk) -> str:
    """The task a tasks/* request names. Raises -32602 when it names none."""
    try:
        return wire.task_id_of(ask.params)
    except ValueError as exc:
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: {exc}") from None


def wire_state(raw: JSONObject) -> TaskState:
    task = raw.get("task")
    return TaskState.from_wire(task if type(task) is dict else raw, "tools/call")


def created(state: TaskState, *, per_request: bool) -> JSONObject:
    """The CreateTaskResult for the downstream client's era."""
    if per_request:
        return {"resultType": "task", **flat_task(state.raw)}
    return {"task": handshake_task(state.raw)}


def handshake_task(task: JSONObject) -> JSONObject:
    """Either shape's task as a 2025-11-25 `Task`: `ttl` / `pollInterval`, nothing inlined;
    a 2026-07-28 task completed with a tool error is `failed`, as 2025-11-25 has it."""
    out = _shared_fields(task)
    out["ttl"] = task.get("ttl", task.get("ttlMs"))
    poll = task.get("pollInterval", task.get("pollIntervalMs"))
    if poll is not None:
        out["pollInterval"] = poll
    result = task.get("result")
    if out.get("status") == "completed" and type(result) is dict and result.get("isError"):
        out["status"] = "failed"
    return out


def flat_task(task: JSONObject) -> JSONObject:
    """A 2025-11-25 `Task` in the 2026-07-28 extension's shape (`ttlMs` / `pollIntervalMs`)."""
    out = _shared_fields(task)
    out["ttlMs"] = task.get("ttlMs", task.get("ttl"))
    poll = task.get("pollIntervalMs", task.get("pollInterval"))
    if poll is not None:
        out["pollIntervalMs"] = poll
    return out


_SHARED_FIELDS = ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt")


def _shared_fields(task: JSONObject) -> JSONObject:
    """The fields both task shapes name alike."""
    return {key: task[key] for key in _SHARED_FIELDS if key in task}


def _per_request(link: Link) -> bool:
    return link.client.era is Era.PER_REQUEST


def _error_wire(error: ProtocolError) -> JSONObject:
    out: JSONObject = {"code": error.code, "message": error.message}
    if error.data is not None:
        out["data"] = error.data
    return out


def _terminal(task_id: str, status: str) -> ProtocolError:
    return ProtocolError(
        INVALID_PARAMS,
        f"Cannot cancel task: already in terminal status '{status}'",
        {"taskId": task_id},
    )


def _random_id() -> str:
    import secrets

    return secrets.token_hex(16)


__all__ = ["TASK_METHODS", "ProxyTasks", "capability"]
