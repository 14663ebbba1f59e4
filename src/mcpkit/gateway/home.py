"""Home calls: a request served by the worker of a proxy that holds its state.

With several workers (a shared `state`, docs/gateway.md "Several workers") some of a proxy's
state lives in one worker only: a call of the input_required bridge waiting for its client's
next round (asking.py), a forwarded task and the upstream link that holds it (tasks.py). That
worker is the state's *home*. A request for it that lands on another worker is sent home over
the workers' bus (`state.bus`, stores/bus.py) and its answer comes back the same way, on
three channels of the bus:

    B -> ASK    (to A, from B, call id, operation, payload)
    A -> SIGN   (to B, call id)                   at once, then every `beat` s while working
    A -> SIGN   (to B, call id, result | error {code, message, data})   the answer, as it is
    B -> CANCEL (to A, call id)                   B's request was cancelled: A cancels its work

The bus is at most once and a worker may stop at any time, so B never waits for A without a
sign: when `silence` s pass with none (no acknowledgement, no heartbeat, no answer) B gives up
(`HomeSilent`) and its caller answers with a clear error. An operation is a coroutine function
registered by name (`ops`); a gateway's upstreams share the bus, so their names carry the
upstream's. A JSON-RPC error raised by the operation at home reaches B's caller unchanged
(`ProtocolError` with the same code, message and data).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from mcpkit.errors import INTERNAL_ERROR, MCPError, ProtocolError
from mcpkit.stores import StoreUnavailable
from mcpkit.stores.bus import Bus, Channel
from mcpkit.stores.home_records import HomeRecordStore
from mcpkit.stores.redis_home_records import RedisHomeRecords

JSONObject = dict[str, Any]
Operation = Callable[[JSONObject], Awaitable[JSONObject]]
logger = logging.getLogger("mcpkit.gateway")

SILENCE = 5.0  # seconds without a sign from home before giving up
BEAT = 1.0  # seconds between a working home's heartbeats


class HomeSilent(MCPError):
    """The home worker gave no sign for the allowed time (stopped, or the bus lost it)."""


@dataclass(frozen=True, slots=True)
class HomeAsk:
    """Worker `sender` asks worker `to` to run `op` with `payload` (call `call_id`)."""

    to: str
    sender: str
    call_id: str
    op: str
    payload: JSONObject


@dataclass(frozen=True, slots=True)
class HomeSign:
    """Home's sign to `to` for `call_id`: alive (neither), or the `result` or the `error`."""

    to: str
    call_id: str
    result: JSONObject | None = None
    error: Any = None


@dataclass(frozen=True, slots=True)
class HomeCancel:
    """The caller of `call_id` cancelled it: worker `to` stops the work."""

    to: str
    call_id: str


def _ask(body: JSONObject) -> HomeAsk | None:
    to, sender, call_id, op, payload = (body.get(k) for k in ("to", "w", "i", "o", "p"))
    if type(to) is str and type(sender) is str and type(call_id) is str and type(op) is str:
        return HomeAsk(to, sender, call_id, op, payload) if type(payload) is dict else None
    return None


def _sign(body: JSONObject) -> HomeSign | None:
    to, call_id, result = body.get("to"), body.get("i"), body.get("r")
    if type(to) is not str or type(call_id) is not str:
        return None
    return HomeSign(to, call_id, result if type(result) is dict else None, body.get("e"))


def _signed_body(sign: HomeSign) -> JSONObject:
    body: JSONObject = {"to": sign.to, "i": sign.call_id}
    if sign.result is not None:
        body["r"] = sign.result
    if sign.error is not None:
        body["e"] = sign.error
    return body


def _cancel(body: JSONObject) -> HomeCancel | None:
    to, call_id = body.get("to"), body.get("i")
    return HomeCancel(to, call_id) if type(to) is str and type(call_id) is str else None


ASK: Channel[HomeAsk] = Channel(
    "gateway.home-ask",
    lambda m: {"to": m.to, "w": m.sender, "i": m.call_id, "o": m.op, "p": m.payload},
    _ask,
)
SIGN: Channel[HomeSign] = Channel("gateway.home-sign", _signed_body, _sign)
CANCEL: Channel[HomeCancel] = Channel(
    "gateway.home-cancel", lambda m: {"to": m.to, "i": m.call_id}, _cancel
)


@dataclass(slots=True)
class _Waiting:
    answer: asyncio.Future[JSONObject]
    last_sign: float
    signed: asyncio.Event = field(default_factory=asyncio.Event)


class HomeCalls:
    """The home calls of the workers sharing `bus` (one per bus: `home_calls`)."""

    def __init__(self, bus: Bus, *, silence: float = SILENCE, beat: float = BEAT) -> None:
        self.bus = bus
        self.worker: str = bus.worker
        self.silence = silence
        self.beat = beat
        self.ops: dict[str, Operation] = {}
        self._waiting: dict[str, _Waiting] = {}
        self._working: dict[str, asyncio.Task[None]] = {}
        bus.register(ASK, self._asked)
        bus.register(SIGN, self._signed)
        bus.register(CANCEL, self._cancelled)

    async def call(self, home: str, op: str, payload: JSONObject) -> JSONObject:
        """Run `op` with `payload` on worker `home` and return its result. Raises
        ProtocolError as the operation raised it at home, HomeSilent when home gave no
        sign for `silence` s; a cancel of the caller cancels the work at home."""
        loop = asyncio.get_running_loop()
        call_id = secrets.token_hex(12)
        waiting = _Waiting(loop.create_future(), loop.time())
        self._waiting[call_id] = waiting
        self.bus.publish(ASK, HomeAsk(home, self.worker, call_id, op, payload))
        try:
            while True:
                waiting.signed.clear()  # no await until the wait: no sign can slip between
                if waiting.answer.done():
                    return waiting.answer.result()
                left = waiting.last_sign + self.silence - loop.time()
                if left <= 0:
                    raise HomeSilent(f"worker {home} gave no sign for {self.silence:g} s")
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(left):
                        await waiting.signed.wait()
        except asyncio.CancelledError:
            if not waiting.answer.done():
                self.bus.publish(CANCEL, HomeCancel(home, call_id))
            raise
        finally:
            self._waiting.pop(call_id, None)

    # -- at home ----------------------------------------------------------------------------

    def _asked(self, message: HomeAsk) -> None:
        if message.to != self.worker:
            return
        sender, call_id = message.sender, message.call_id
        op = self.ops.get(message.op)
        if op is None:  # a worker of another version, or an upstream this one lacks
            error = ProtocolError(INTERNAL_ERROR, f"unknown home call {message.op!r}")
            self.bus.publish(SIGN, HomeSign(sender, call_id, error=error.to_error_object()))
            return
        self.bus.publish(SIGN, HomeSign(sender, call_id))  # the acknowledgement: home has it
        work = asyncio.ensure_future(self._work(sender, call_id, op, message.payload))
        self._working[call_id] = work
        work.add_done_callback(lambda _: self._working.pop(call_id, None))

    async def _work(self, sender: str, call_id: str, op: Operation, payload: JSONObject) -> None:
        beating = asyncio.ensure_future(self._beat(sender, call_id))
        try:
            reply = HomeSign(sender, call_id, result=await op(payload))
        except ProtocolError as exc:
            reply = HomeSign(sender, call_id, error=exc.to_error_object())
        except asyncio.CancelledError:
            raise  # the caller cancelled: it waits for nothing more
        except Exception as exc:  # never silence: the caller would wait its full bound
            logger.exception("a home call failed")
            failed = f"the proxy worker holding the call failed: {type(exc).__name__}"
            error = ProtocolError(INTERNAL_ERROR, failed).to_error_object()
            reply = HomeSign(sender, call_id, error=error)
        finally:
            beating.cancel()
        self.bus.publish(SIGN, reply)

    async def _beat(self, sender: str, call_id: str) -> None:
        while True:
            await asyncio.sleep(self.beat)
            self.bus.publish(SIGN, HomeSign(sender, call_id))

    def _cancelled(self, message: HomeCancel) -> None:
        if message.to == self.worker:
            work = self._working.get(message.call_id)
            if work is not None:
                work.cancel()

    # -- at the caller ----------------------------------------------------------------------

    def _signed(self, message: HomeSign) -> None:
        if message.to != self.worker:
            return
        waiting = self._waiting.get(message.call_id)
        if waiting is None:
            return
        waiting.last_sign = asyncio.get_running_loop().time()
        waiting.signed.set()
        if waiting.answer.done():
            return
        if message.result is not None:
            waiting.answer.set_result(message.result)
        elif message.error is not None:
            waiting.answer.set_exception(_error_from_wire(message.error))


class HomeRecords:
    """Which worker is home to what, in `store` (stores/home_records.py): key -> `{"w":
    worker id, ...what the holder adds}` (JSON, expiring). Written by the worker that holds
    the state, read by another that has none for `key`."""

    def __init__(self, store: HomeRecordStore, worker: str) -> None:
        self.store = store
        self.worker = worker

    async def write(self, key: str, ttl: float, extra: JSONObject) -> None:
        """This worker is home to `key` for `ttl` s (with `extra`). A failure (logged by the
        store once per outage) leaves the state served here, only not from elsewhere."""
        record = orjson.dumps({**extra, "w": self.worker})
        with contextlib.suppress(StoreUnavailable):
            await self.store.write(key, record, ttl)

    async def read(self, keys: list[str]) -> list[JSONObject | None]:
        """The records of `keys` (None: none recorded), in one round trip. Raises
        ProtocolError (-32603) when the shared state cannot be read."""
        try:
            found = await self.store.read(keys)
        except StoreUnavailable as exc:
            raise ProtocolError(INTERNAL_ERROR, f"the workers' shared state: {exc}") from None
        return [_record(value) for value in found]


def home_records(state: Any, space: str, worker: str) -> HomeRecords:
    """The home records of `space` in a shared HTTP `state` (its Redis, under its prefix)."""
    return HomeRecords(RedisHomeRecords(state.client, state.prefix, space), worker)


def _record(value: Any) -> JSONObject | None:
    try:
        record = orjson.loads(value) if value is not None else None
    except orjson.JSONDecodeError:
        return None
    return record if type(record) is dict and type(record.get("w")) is str else None


def home_calls(options: Mapping[str, Any]) -> HomeCalls | None:
    """The home calls of an HTTP app made with `options`: None unless its `state` is shared
    and has a bus (one process keeps all its state: nothing to send home). One per bus: a
    gateway's upstreams share it."""
    state = options.get("state")
    bus = getattr(state, "bus", None)
    if not getattr(state, "shared", False) or bus is None or not hasattr(bus, "register"):
        return None
    calls = _CALLS.get(bus)
    if calls is None:
        calls = _CALLS[bus] = HomeCalls(bus)
    return calls


_CALLS: weakref.WeakKeyDictionary[Bus, HomeCalls] = weakref.WeakKeyDictionary()


def _error_from_wire(error: Any) -> ProtocolError:
    if type(error) is not dict or type(error.get("code")) is not int:
        return ProtocolError(INTERNAL_ERROR, "the proxy worker holding the call failed")
    return ProtocolError(error["code"], str(error.get("message", "")), error.get("data"))


__all__ = ["HomeCalls", "HomeRecords", "HomeSilent", "home_calls", "home_records"]
