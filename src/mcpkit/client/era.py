"""Which era a server speaks: the 2026-07-28 probe, the fallback to `initialize`, the cache.

How this works (basic/transports/stdio.mdx and streamable-http.mdx, Backward Compatibility):
the client switches its connection to a per-request revision (`Connection.use_per_request`) and
sends `server/discover` with the envelope (its capabilities shaped as 2026-07-28 defines
them by `per_request.envelope_meta`; a fallback to `initialize` declares them as configured).
Three outcomes:

- a DiscoverResult: the server speaks the per-request era; the best version both sides speak
  is kept;
- a recognized 2026-07-28 error (-32020/-32021/-32022): per-request too; for -32022 a
  version from its `data.supported` is tried instead (even the one just refused: a server may refuse
  transiently; at most MAX_PROBES tries), or, when it lists only handshake revisions we
  speak, the handshake; never a blind fallback;
- anything else (any other error code, an HTTP 4xx without a 2026-07-28 body, a result that
  is no DiscoverResult): a handshake-era server, so `use_handshake()` and `initialize`.

Silence is not an outcome by itself: the era is decided by what the server answers, however
long it takes to start (a `uvx` first run, a loaded machine), within the connect timeout. Over
stdio a server that has not answered the probe within `probe_timeout` gets `initialize` as
well, on the same pipe, with the probe still pending (`_race`): a DiscoverResult settles
per-request (the initialize is abandoned; a dual-era server refuses it with -32022 once it has
answered the probe in the 2026-07-28 era), a successful initialize settles handshake (a
silent handshake-era server costs `probe_timeout`, not the connect timeout), and when both
answers are in the probe's decides. Over HTTP the client waits for the probe's answer alone:
a server always answers a POST, so silence is a slow server (a cold start), not a handshake-era one.

The fallback is never keyed to one error code. Over HTTP the transport turns a refused POST
into an error answer carrying the body's JSON-RPC error (when there is one), so the same
rules apply. A lost connection is not an outcome: it propagates.

The era is a property of the server: `ERAS` remembers it per server (stdio: the command
line; HTTP: origin and path) for this process. A server remembered as handshake-era is not
probed again (a silent handshake-era server costs the probe timeout once per process, not
per client); if that assumption fails (initialize is refused) the entry is dropped and the
client probes.
Only what auto mode found out is remembered: a client pinned to an era (`mode="handshake"`,
`"per-request"`, a revision) chose for itself, and says nothing about what the server speaks
to others.

Modes: "auto", "handshake", "per-request" (the newest per-request revision both sides speak)
or one per-request revision ("2026-07-28"); the old "legacy" means "handshake", with a
DeprecationWarning, for one release (`mcpkit.types.eras`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mcpkit.errors import (
    UNSUPPORTED_PROTOCOL_VERSION,
    ConnectionClosed,
    MCPError,
    ProtocolError,
    RequestTimeout,
)
from mcpkit.protocol import Initialized, Timeout
from mcpkit.protocol.per_request import PER_REQUEST_ERROR_CODES
from mcpkit.runtime import Session
from mcpkit.types.eras import Era, era_named
from mcpkit.types.versions import PER_REQUEST_VERSIONS

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.client")

DEFAULT_PROBE_TIMEOUT = 3.0
MAX_PROBES = 3  # -32022 answers followed, each naming a version we speak, before giving up
# Server key -> what it answered in (Era.HANDSHAKE, or a per-request version). Process-wide.
ERAS: dict[str, str] = {}


class EraMismatch(MCPError):
    """The server does not speak the era this client was pinned to (or no common version)."""


@dataclass(frozen=True, slots=True)
class Chosen:
    """The outcome of era selection: a per-request version and its DiscoverResult, or the
    handshake's `Initialized`."""

    era: Era
    version: str
    discovered: JSONObject | None = None
    initialized: Initialized | None = None


MODES = ("auto", Era.HANDSHAKE.value, Era.PER_REQUEST.value)


def check_mode(mode: str) -> str:
    """`mode` as a plain string: "auto", "handshake", "per-request" or a per-request version
    we speak. The old "legacy" is "handshake", with a DeprecationWarning. Raises ValueError
    for anything else."""
    mode = str(mode)  # an Era is its value; plain strings compare without warnings
    if mode == "legacy":
        return era_named(mode).value
    if mode in MODES or mode in PER_REQUEST_VERSIONS:
        return mode
    choices = ", ".join((*MODES, *PER_REQUEST_VERSIONS))
    raise ValueError(f"unknown client mode {mode!r}; use one of {choices}")


def server_key(target: Any) -> str | None:
    """What identifies a server for the era cache: the URL's origin and path, or the command
    line; None for in-process servers and transport objects (nothing to remember)."""
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        parts = urlsplit(target)
        return f"{parts.scheme}://{parts.netloc.lower()}{parts.path or '/'}"
    if isinstance(target, str):
        return "stdio:" + target
    if isinstance(target, list | tuple) and all(isinstance(a, str) for a in target):
        return "stdio:" + "\0".join(target)
    return None


async def choose_era(
    session: Session,
    *,
    mode: str,
    key: str | None,
    probe_timeout: float | None,
    init_timeout: Timeout | None,
    handshake_version: str | None,
    retry: bool = False,
) -> Chosen:
    """Probe and settle the era on a fresh client session (see the module notes).

    `probe_timeout`: in auto mode, how long server/discover is waited for alone before
    `initialize` is sent beside it (None: never; over HTTP the answer always tells). Every
    answer is waited for within `init_timeout`, the connect timeout.

    With `retry`, may raise `Reprobe(mode)`: connect again and choose with that mode (a
    remembered handshake-era server refused initialize; a stdio server exited at the probe).
    Raises EraMismatch (pinned to the per-request era, a handshake-era server; no common
    version), the initialize error in the handshake era, RequestTimeout, ConnectionClosed.
    """
    connection = session.connection
    if mode == Era.HANDSHAKE:  # a choice for this client alone: not remembered for the server
        return await _handshake(session, init_timeout, handshake_version, None)
    if mode == "auto" and ERAS.get(key or "") == Era.HANDSHAKE:
        return await _handshake(session, init_timeout, handshake_version, key, cached=retry)
    wanted = mode if mode in PER_REQUEST_VERSIONS else connection.config.per_request[-1]
    remembered = key if mode == "auto" else None  # only what auto mode found is remembered
    fallback = _Fallback(init_timeout, handshake_version, remembered)
    for attempt in range(1, MAX_PROBES + 1):
        respawn = retry and mode == "auto" and _stdio(key)
        discover = _send_probe(session, wanted, _limit(init_timeout))
        if mode == "auto" and probe_timeout is not None:
            wait = _probe_wait(probe_timeout, init_timeout)
            outcome = await _race(session, discover, wait, fallback, respawn)
        else:
            outcome = await _probe_outcome(discover, stdio_retry=respawn)
        if isinstance(outcome, Chosen):
            return outcome  # the server answered initialize first: the handshake era
        if isinstance(outcome, dict):
            return _per_request(session, outcome, wanted, mode, remembered)
        if isinstance(outcome, str):
            break  # a handshake-era server, for this reason
        # -32022: a per-request server that does not serve `wanted`.
        supported = _supported_list(outcome.data)
        ours = [v for v in connection.config.per_request if v in supported]
        if ours and attempt < MAX_PROBES:
            wanted = ours[-1]
            continue
        if mode == "auto" and any(v in supported for v in connection.config.versions):
            logger.info("the server speaks only handshake revisions we know: initialize")
            connection.use_handshake()
            return await _handshake(session, init_timeout, handshake_version, key)
        raise EraMismatch(
            f"the server supports protocol versions {', '.join(supported) or 'none'}; "
            f"this client speaks {', '.join(connection.config.all_versions)}"
        )
    if mode != "auto":
        raise EraMismatch(
            f"the client is pinned to protocol {mode} but the server does not speak it: "
            f"{outcome} (a handshake-era server? use mode='auto' or 'handshake')"
        )
    logger.debug("handshake-era server (%s): falling back to initialize", outcome)
    return await fallback.finish(session)


Outcome = JSONObject | ProtocolError | str


@dataclass(slots=True)
class _Fallback:
    """The one `initialize` an auto-mode probe sends when server/discover is slow to answer."""

    timeout: Timeout | None
    version: str | None
    key: str | None
    sent: bool = False
    pending: asyncio.Task[Chosen] | None = None

    def start(self, session: Session) -> asyncio.Task[Chosen]:
        session.connection.use_handshake()  # the probe stays pending: its answer still counts
        handshake = _handshake(session, self.timeout, self.version, self.key)
        self.sent = True
        self.pending = asyncio.get_running_loop().create_task(handshake)
        return self.pending

    async def finish(self, session: Session) -> Chosen:
        """A handshake-era server: the initialize's answer (sent now unless it went already)."""
        if self.pending is None:
            session.connection.use_handshake()
            return await _handshake(session, self.timeout, self.version, self.key)
        return await self.pending

    async def abandon(self) -> None:
        """The server is per-request: the initialize's answer (a refusal, usually) is ignored."""
        if self.pending is not None:
            await _cancel(self.pending)
            self.pending = None


def _limit(init_timeout: Timeout | None) -> Timeout | None:
    """How long the probe's answer is waited for: the connect timeout (None: as long as it
    takes)."""
    if init_timeout is None or init_timeout.timeout is None:
        return None
    return Timeout(init_timeout.timeout, reset_on_progress=False)


def _probe_wait(probe_timeout: float, init_timeout: Timeout | None) -> float:
    """How long the probe is waited for alone: `probe_timeout`, or less to fit the connect
    timeout."""
    limit = init_timeout.timeout if init_timeout is not None else None
    return probe_timeout if limit is None else min(probe_timeout, limit)


def _send_probe(session: Session, version: str, limit: Timeout | None) -> asyncio.Task[JSONObject]:
    session.connection.use_per_request(version)
    request = session.request("server/discover", None, timeout=limit)
    return asyncio.get_running_loop().create_task(request)


async def _race(
    session: Session,
    discover: asyncio.Task[JSONObject],
    wait: float,
    fallback: _Fallback,
    stdio_retry: bool,
) -> Outcome | Chosen:
    """Auto mode: server/discover alone for `wait` seconds, then `initialize` beside it.

    Whichever answer settles the era first wins: a DiscoverResult (per-request: the
    initialize is abandoned, its refusal ignored), a successful initialize (handshake: the
    probe is cancelled), a probe refused as a handshake-era server refuses it (handshake: the
    initialize's answer decides).
    When both answers are in, the probe's decides (the server speaks 2026-07-28, which we
    prefer). A refused initialize while the probe is pending waits for the probe: a slow
    dual-era server answers the probe in the 2026-07-28 era and then refuses the handshake.
    """
    try:
        done, _ = await asyncio.wait({discover}, timeout=wait)
    except BaseException:  # the connect was cancelled: the probe goes with it, retrieved
        await _cancel(discover)
        raise
    if done or fallback.sent:  # answered in time, or a later probe (after a -32022)
        return await _probe_outcome(discover, stdio_retry=stdio_retry)
    logger.debug("no answer to server/discover within %g s: sending initialize too", wait)
    handshake = fallback.start(session)
    try:
        await asyncio.wait({discover, handshake}, return_when=asyncio.FIRST_COMPLETED)
        if not discover.done() and handshake.exception() is None:
            await _cancel(discover)  # handshake: a late answer to the probe is ignored
            return handshake.result()
        outcome = await _probe_outcome(discover, stdio_retry=stdio_retry)
    except BaseException:
        await fallback.abandon()
        await _cancel(discover)
        raise
    if not isinstance(outcome, str):
        await fallback.abandon()  # per-request: use_per_request drops the pending initialize
    return outcome


async def _cancel(task: asyncio.Task[Any]) -> None:
    """Cancel `task` and let it unwind (a cancelled request tells the server). What it ended
    with no longer matters: an error it raised first (a refused initialize) is dropped."""
    task.cancel()
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: asyncio logs no "exception was never retrieved"


async def _probe_outcome(discover: asyncio.Task[JSONObject], *, stdio_retry: bool) -> Outcome:
    """What the answer to server/discover says: the DiscoverResult, the -32022 error, or why
    the server looks handshake-era. Other 2026-07-28 errors (-32020/-32021) and a lost
    connection raise."""
    try:
        discovered = await discover
    except RequestTimeout as exc:
        return f"no answer to server/discover within {exc.timeout:g} s"
    except ConnectionClosed:
        if stdio_retry:  # a strict handshake server may exit on a request before initialize
            logger.info("the server exited at the server/discover probe: initialize")
            raise Reprobe(Era.HANDSHAKE.value) from None
        raise
    except ProtocolError as exc:
        if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
            return exc
        if exc.code in PER_REQUEST_ERROR_CODES:
            raise  # per-request, but it refused the probe itself: a real error
        return f"server/discover was refused ({exc.code}: {exc.message})"
    if _is_discover_result(discovered):
        return discovered
    return "the answer to server/discover is not a DiscoverResult"  # a lax handshake server


def _stdio(key: str | None) -> bool:
    return key is not None and key.startswith("stdio:")


def _per_request(
    session: Session, discovered: JSONObject, asked: str, mode: str, key: str | None
) -> Chosen:
    connection = session.connection
    supported = discovered["supportedVersions"]
    common = [v for v in connection.config.per_request if v in supported]
    if mode in PER_REQUEST_VERSIONS and mode not in supported:  # pinned to one revision
        common = []
    version = common[-1] if common else asked  # it answered `asked`: it serves it
    connection.use_per_request(version, discovered)
    if key is not None:
        ERAS[key] = version
    return Chosen(Era.PER_REQUEST, version, discovered=discovered)


async def _handshake(
    session: Session,
    timeout: Timeout | None,
    version: str | None,
    key: str | None,
    *,
    cached: bool = False,
) -> Chosen:
    try:
        initialized = await session.initialize(timeout, version)
    except (ProtocolError, ConnectionClosed):
        if key is not None and cached:
            ERAS.pop(key, None)  # the remembered era no longer holds: probe again
            raise Reprobe("auto") from None
        raise
    if key is not None:
        ERAS[key] = Era.HANDSHAKE
    return Chosen(Era.HANDSHAKE, initialized.protocol_version, initialized=initialized)


class Reprobe(MCPError):
    # An internal signal; never escapes the client.

    def __init__(self, mode: str) -> None:
        super().__init__(mode)
        self.mode = mode

    """A server remembered as handshake-era refused initialize: connect again and probe."""


def _is_discover_result(result: JSONObject) -> bool:
    return isinstance(result.get("supportedVersions"), list) and isinstance(
        result.get("capabilities"), dict
    )


def _supported_list(data: Any) -> list[str]:
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return []
    return [v for v in supported if isinstance(v, str)]


__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "ERAS",
    "Chosen",
    "EraMismatch",
    "Reprobe",
    "check_mode",
    "choose_era",
    "server_key",
]
