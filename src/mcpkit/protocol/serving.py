"""Serving the peer's requests: what each answer owes, and what a server's configuration rules.

How this works. `Inbound` is one request from the peer still owed an answer; it encodes that
answer (stamping a 2026-07-28 result), its progress and, for a 2026-07-28 request, the
notifications related to it. `ServerRules` is a server configuration seen from the serving
side, worked out once per configuration: the stamp for per-request-era results, which methods are
served at which revision, the initialize and server/discover answers. It decides whether a
request is served (an `Inbound` to hand a handler) or answered at once (an `Outgoing`).

Both the stateful `Connection` (a handshake session, or a stdio pipe that also carries
2026-07-28 requests) and sessionless serving (each 2026-07-28 HTTP POST, or each POST of a
stateless handshake-era endpoint, served on its own) use these, so a request is served by
the same rules whichever way it arrived. A server whose configuration changes (a first tool
added at run time) makes new `ServerRules`; requests that arrive after that see them.
"""

from __future__ import annotations

from typing import Any

from mcpkit.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    CapabilityNotDeclared,
    LocalProtocolViolation,
    ProtocolError,
)
from mcpkit.protocol import tasks
from mcpkit.protocol.config import ConnectionConfig
from mcpkit.protocol.jsonrpc import (
    Prepared,
    Request,
    RequestId,
    encode_error,
    encode_notification,
    encode_result,
    is_valid_id,
)
from mcpkit.protocol.lifecycle import (
    check_initialize_params,
    has_capability,
    inbound_requests,
    negotiate_version,
    outbound_methods,
)
from mcpkit.protocol.outgoing import FANNED_OUT, Outgoing, answer
from mcpkit.protocol.per_request import (
    DEFAULT_CACHE_HINTS,
    Envelope,
    ResultStamp,
    discover_result,
    read_envelope,
)
from mcpkit.types.methods import METHODS, MethodInfo

JSONObject = dict[str, Any]


def progress_token(params: JSONObject | None) -> str | int | None:
    """The `_meta.progressToken` of a request's params, when it is a valid one."""
    if params is None:
        return None
    meta = params.get("_meta")
    if type(meta) is not dict:
        return None
    token = meta.get("progressToken")
    return token if is_valid_id(token) else None


def undeclared(
    info: MethodInfo, capabilities: JSONObject | None, version: str
) -> tuple[str, ...] | None:
    """The capability `info` needs at `version` that `capabilities` lacks, or None."""
    needed = info.capability_at(version)
    if needed is None or has_capability(capabilities, needed):
        return None
    return needed


class Batch:
    """Answers to a 2025-03-26 batch, sent together once every request in it is answered."""

    __slots__ = ("related", "replies", "sealed", "waiting")

    def __init__(self, related: RequestId | None) -> None:
        self.related = related  # the first request's id: HTTP routes the answer by it
        self.waiting: set[RequestId] = set()
        self.replies: list[bytes] = []
        self.sealed = False

    def add(self, data: bytes, request_id: RequestId | None = None) -> Outgoing | None:
        """Take one answer; the batch's answer once it is complete."""
        if request_id is not None:
            self.waiting.discard(request_id)
        self.replies.append(data)
        return self.ready()

    def forget(self, request_id: RequestId) -> Outgoing | None:
        """A request of the batch will get no answer (cancelled)."""
        self.waiting.discard(request_id)
        return self.ready()

    def ready(self) -> Outgoing | None:
        if not self.sealed or self.waiting or not self.replies:
            return None
        data = b"[" + b",".join(self.replies) + b"]"
        self.replies = []
        return Outgoing(data, self.related, True)


class Inbound:
    """A request from the peer that still owes an answer, and what that answer needs."""

    __slots__ = (
        "batch",
        "envelope",
        "id",
        "last_progress",
        "method",
        "progress_token",
        "rules",
        "version",
    )

    def __init__(
        self,
        request_id: RequestId,
        method: str,
        token: str | int | None,
        version: str | None,
        *,
        batch: Batch | None = None,
        envelope: Envelope | None = None,
        rules: ServerRules | None = None,
    ) -> None:
        self.id = request_id
        self.method = method
        self.progress_token = token
        self.version = version  # the request's revision (None: not negotiated yet)
        self.batch = batch
        self.envelope = envelope  # a 2026-07-28 request: its answer is stamped by `rules`
        self.rules = rules
        self.last_progress: float | None = None

    def result(self, result: JSONObject | Prepared) -> Outgoing:
        """The answer carrying `result`; an internal error when JSON cannot carry it."""
        rules = self.rules
        if self.envelope is not None and rules is not None:
            match result:
                case Prepared():
                    result = rules.stamp.prepared(self.method, result)
                case _:
                    result = rules.stamp.result(self.method, result)
        try:
            return answer(encode_result(self.id, result), self.id)
        except TypeError as exc:
            message = f"Internal error: the result is not JSON-serializable ({exc})"
            return self.error(INTERNAL_ERROR, message)

    def error(self, code: int, message: str, data: Any = None) -> Outgoing:
        return answer(encode_error(self.id, code, message, data), self.id, code)

    def progress(
        self, progress: float, total: float | None, message: str | None
    ) -> Outgoing | None:
        """A progress notification; None when the peer asked for none.

        Raises LocalProtocolViolation when `progress` does not increase.
        """
        token = self.progress_token
        if token is None:
            return None
        if self.last_progress is not None and progress <= self.last_progress:
            raise LocalProtocolViolation(
                f"progress must increase with each notification ({progress} after "
                f"{self.last_progress})"
            )
        self.last_progress = progress
        params: JSONObject = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.version != "2024-11-05":
            params["message"] = message
        return notification("notifications/progress", params, self.id)

    def notification(self, method: str, params: JSONObject | None) -> Outgoing:
        """A notification about this request (a log message, ...) when it is served on its
        own terms: a 2026-07-28 request, or a sessionless one; allowed whatever a connection's
        state. Raises LocalProtocolViolation for a method a server cannot send at the
        request's revision, CapabilityNotDeclared for one we did not declare."""
        rules, version = self.rules, self.version
        assert rules is not None and version is not None, "served by a connection's rules"
        info = outbound_methods("server", version).get(method)
        if info is None and method in METHODS:
            raise LocalProtocolViolation(f"a server cannot send {method} at revision {version}")
        if info is not None:
            missing = undeclared(info, rules.config.capabilities, version)
            if missing is not None:
                raise CapabilityNotDeclared(method, missing, "server (you)")
        return notification(method, params, self.id)


def notification(method: str, params: JSONObject | None, related: RequestId | None) -> Outgoing:
    data = encode_notification(method, params)
    return Outgoing(data, related, method=method, params=params, fanned=method in FANNED_OUT)


class ServerRules:
    """A server configuration, from the serving side (see the module docstring)."""

    __slots__ = ("_per_request_methods", "config", "stamp", "versions")

    def __init__(self, config: ConnectionConfig) -> None:
        self.config = config
        hints = DEFAULT_CACHE_HINTS if config.cache_hints is None else config.cache_hints
        self.stamp = ResultStamp(config.info if config.announce else None, hints)
        self.versions = config.all_versions  # both eras, oldest first
        # (version, method) -> what serves it per request (None: not served)
        self._per_request_methods: dict[tuple[str, str], MethodInfo | None] = {}

    def envelope(self, meta: JSONObject) -> Envelope:
        """The envelope of a 2026-07-28 request's `_meta`. Raises ProtocolError: -32602 for a
        missing or malformed field, -32022 for a version we do not serve per request."""
        return read_envelope(meta, self.versions)

    def accept_per_request(
        self, request: Request, envelope: Envelope, batch: Batch | None = None
    ) -> Inbound | Outgoing:
        """A 2026-07-28 request: an `Inbound` for its handler, or its answer when the rules
        answer it alone (server/discover). Raises ProtocolError -32601 for a method we do not
        serve at its revision."""
        request_id, method = request.id, request.method
        if method == "server/discover":
            config = self.config
            capabilities = tasks.per_request_capabilities(config.capabilities)
            result = discover_result(self.versions, capabilities, config.instructions)
            return answer(encode_result(request_id, self.stamp.result(method, result)), request_id)
        if self._per_request_method(envelope.version, method) is None:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
        token = progress_token(request.params)
        return Inbound(
            request_id, method, token, envelope.version, batch=batch, envelope=envelope, rules=self
        )

    def _per_request_method(self, version: str, method: str) -> MethodInfo | None:
        # Fixed by the configuration: worked out once per (version, method); the table is
        # bounded by the methods of the registry.
        key = (version, method)
        known = self._per_request_methods
        if key in known:
            return known[key]
        if method in tasks.PER_REQUEST_TASK_METHODS:  # the tasks extension, when we declare tasks
            declared = "tasks" in self.config.capabilities
            found = known[key] = tasks.EXTENSION_METHODS[method] if declared else None
            return found
        info = self.handshake_method(version, method)
        if info is not None or method in METHODS:
            known[key] = info
        return info

    def handshake_method(self, version: str, method: str) -> MethodInfo | None:
        """The registry entry of a request we serve at `version`, None when we do not (unknown
        there, or needing a capability we did not declare)."""
        info = inbound_requests("server", version).get(method)
        if info is not None and undeclared(info, self.config.capabilities, version):
            return None
        return info

    def initialize(self, params: JSONObject | None) -> tuple[str, JSONObject]:
        """The revision agreed and the result answering an `initialize` with `params`.

        Raises ProtocolError (-32602) for params that are not an initialize request's.
        """
        problem = check_initialize_params(params)
        if problem is not None:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: {problem}")
        assert params is not None
        config = self.config
        version = negotiate_version(params["protocolVersion"], config.versions)
        result: JSONObject = {
            "protocolVersion": version,
            "capabilities": tasks.handshake_capabilities(config.capabilities),
            "serverInfo": config.info,
        }
        if config.instructions is not None:
            result["instructions"] = config.instructions
        return version, result

    def accept_stateless(self, request: Request, version: str) -> Inbound | Outgoing:
        """A handshake-era request at `version` served without a session (a stateless HTTP
        endpoint): `initialize` and `ping` are answered here, any other request gets an
        `Inbound`. The client's capabilities are unknown, so the server asks it nothing.

        Raises ProtocolError: -32602 for bad initialize params, -32601 for a method we do not
        serve at `version`.
        """
        request_id, method = request.id, request.method
        if method == "initialize":
            agreed, result = self.initialize(request.params)
            return Outgoing(encode_result(request_id, result), request_id, True, version=agreed)
        if method == "ping":
            return answer(encode_result(request_id, {}), request_id)
        if self.handshake_method(version, method) is None:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
        token = progress_token(request.params)
        return Inbound(request_id, method, token, version, rules=self)


def refusal(request_id: RequestId | None, exc: ProtocolError) -> Outgoing:
    """The error answer for a request the rules refused."""
    return answer(encode_error(request_id, exc.code, exc.message, exc.data), request_id, exc.code)
