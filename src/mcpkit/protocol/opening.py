"""How a client connection opens: the `initialize` handshake, or a per-request era.

The opening half of `Connection` on the client side (a mixin, like `Sending`: `Connection`
holds the state these calls read and change). `start_initialize` sends the handshake and
`_finish_initialize` takes its answer; `use_modern` speaks 2026-07-28 with no handshake (every
request then carries the envelope), `use_handshake` goes back when the server did not answer
the modern probe.
"""

from __future__ import annotations

from typing import Any

from mcpkit.errors import (
    INVALID_PARAMS,
    LocalProtocolViolation,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol.config import State
from mcpkit.protocol.deadlines import Timeout
from mcpkit.protocol.events import Event, Initialized, InitializeFailed
from mcpkit.protocol.jsonrpc import RequestId, encode_notification, encode_request
from mcpkit.protocol.lifecycle import check_initialize_result, inbound_requests, initialize_params
from mcpkit.protocol.modern import envelope_meta
from mcpkit.protocol.outgoing import Outgoing
from mcpkit.protocol.sending import Sending
from mcpkit.types.methods import MethodInfo

JSONObject = dict[str, Any]


class Opening(Sending):
    """The client's opening calls of `Connection` (see the module docstring)."""

    # More of `Connection`'s state that these calls read and change.
    peer_info: JSONObject | None
    instructions: str | None
    _initialize_id: RequestId | None
    _accepted: dict[str, MethodInfo]

    # -- handshake (client) --------------------------------------------------------------------

    def start_initialize(
        self, *, now: float, timeout: Timeout | None = None, version: str | None = None
    ) -> RequestId:
        """Send `initialize` (client role). Ends in an `Initialized` or `InitializeFailed` event."""
        if self.role != "client" or self.state is not State.NEW:
            raise LocalProtocolViolation(
                "initialize is sent once, by a client, before anything else"
            )
        offered = version or self.config.versions[-1]
        params = initialize_params(offered, self.config.capabilities, self.config.info)
        request_id = self._outbound.register("initialize", progress=False, timeout=timeout, now=now)
        self._initialize_id = request_id
        self.state = State.INITIALIZING
        data = encode_request(request_id, "initialize", params)
        self._outbox.append(Outgoing(data, method="initialize", id=request_id, params=params))
        return request_id

    def _finish_initialize(self, result: JSONObject, events: list[Event]) -> None:
        problem = check_initialize_result(result)
        if problem is not None:
            self.state = State.CLOSED
            events.append(InitializeFailed(ProtocolError(INVALID_PARAMS, problem)))
            return
        version: str = result["protocolVersion"]
        if version not in self.config.versions:
            self.state = State.CLOSED
            events.append(
                InitializeFailed(UnsupportedProtocolVersion(version, self.config.versions))
            )
            return
        self.protocol_version = version
        self.peer_info = result["serverInfo"]
        self.peer_capabilities = result["capabilities"]
        instructions = result.get("instructions")
        self.instructions = instructions if type(instructions) is str else None
        self._accepted = inbound_requests("client", version)
        self.state = State.READY
        data = encode_notification("notifications/initialized", None)
        self._outbox.append(Outgoing(data, method="notifications/initialized", version=version))
        events.append(
            Initialized(version, self.peer_info, self.peer_capabilities, self.instructions, result)
        )

    # -- per-request era (client) --------------------------------------------------------------

    def use_modern(self, version: str, discovered: JSONObject | None = None) -> None:
        """Client: speak `version` (2026-07-28 on) with no handshake; every request we send
        carries the envelope. `discovered` is a server/discover result, when there is one.
        An `initialize` still unanswered (sent while the probe was pending) is abandoned: its
        answer will be ignored."""
        if self.role != "client" or self.state not in (State.NEW, State.READY, State.INITIALIZING):
            raise LocalProtocolViolation("use_modern is for a client that has not initialized")
        if version not in self.config.modern:
            raise LocalProtocolViolation(f"{version} is not a per-request revision we speak")
        if self.state is State.INITIALIZING and self._initialize_id is not None:
            self._outbound.pop(self._initialize_id)
            self._initialize_id = None
        self._envelope = envelope_meta(version, self.config.capabilities, self.config.info)
        self.protocol_version = version
        self.state = State.READY
        self._accepted = {}  # a modern server sends no requests
        self._allowed_requests.clear()
        if discovered is not None:
            capabilities = discovered.get("capabilities")
            self.peer_capabilities = capabilities if type(capabilities) is dict else {}
            meta = discovered.get("_meta")
            info = meta.get("io.modelcontextprotocol/serverInfo") if type(meta) is dict else None
            self.peer_info = info if type(info) is dict else None
            instructions = discovered.get("instructions")
            self.instructions = instructions if type(instructions) is str else None

    def use_handshake(self) -> None:
        """Client: back to the handshake era (the server did not answer the modern probe)."""
        if self.role != "client" or self._envelope is None:
            raise LocalProtocolViolation("use_handshake undoes use_modern, on a client")
        self._envelope = None
        self.protocol_version = None
        self.peer_capabilities = self.peer_info = self.instructions = None
        self._allowed_requests.clear()
        self.state = State.NEW
