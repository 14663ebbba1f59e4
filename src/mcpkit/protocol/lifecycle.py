"""Handshake-era lifecycle rules: version negotiation and capability checks, as pure functions.

initialize -> result -> notifications/initialized. The server answers the client's version if
it speaks it, otherwise its own latest; the client gives up on a version it cannot speak.
Capabilities: a request needs the *receiver* to have declared the capability the method
belongs to; a notification such as list_changed needs the *sender* to have declared it.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from mcpkit.protocol.apps import APPS_EXTENSION
from mcpkit.types.methods import METHODS, MethodInfo
from mcpkit.types.versions import HANDSHAKE_VERSIONS

Role = Literal["client", "server"]
JSONObject = dict[str, Any]

BATCH_VERSIONS = frozenset({"2025-03-26"})
# Extensions whose own text negotiates them in `initialize` too (MCP Apps does); the others
# (tasks: a capability slot of its own there) are declared per request at 2026-07-28 only.
HANDSHAKE_EXTENSIONS = frozenset({APPS_EXTENSION})


def negotiate_version(requested: str, supported: tuple[str, ...]) -> str:
    """The server's answer to a client's requested version (`supported` is oldest first)."""
    if requested in supported:
        return requested
    return supported[-1]


def has_capability(capabilities: JSONObject | None, path: tuple[str, ...]) -> bool:
    """True when `capabilities` declares `path` (e.g. ("resources", "subscribe")).

    A leaf may be an object (declared) or a boolean flag such as listChanged/subscribe.
    """
    node: Any = capabilities
    for key in path:
        if type(node) is not dict or key not in node:
            return False
        node = node[key]
    return node is not False and node is not None


@cache
def inbound_requests(role: Role, version: str) -> dict[str, MethodInfo]:
    """Requests the peer may send to `role` at `version`, keyed by method."""
    incoming = "client_to_server" if role == "server" else "server_to_client"
    return {
        name: info
        for name, info in METHODS.items()
        if info.kind == "request"
        and version in info.revisions
        and info.direction in (incoming, "both")
    }


@cache
def outbound_methods(role: Role, version: str) -> dict[str, MethodInfo]:
    """Requests and notifications `role` may send at `version`, keyed by method."""
    outgoing = "server_to_client" if role == "server" else "client_to_server"
    return {
        name: info
        for name, info in METHODS.items()
        if version in info.revisions and info.direction in (outgoing, "both")
    }


def initialize_params(
    version: str, capabilities: JSONObject, client_info: JSONObject
) -> JSONObject:
    capabilities = handshake_extensions(capabilities)
    return {"protocolVersion": version, "capabilities": capabilities, "clientInfo": client_info}


def handshake_extensions(capabilities: JSONObject) -> JSONObject:
    """`capabilities` as an initialize request or answer carries them: `extensions` keeps only
    the HANDSHAKE_EXTENSIONS (the rest are 2026-07-28's, per request), and goes when empty."""
    extensions = capabilities.get("extensions")
    if extensions is None:
        return capabilities
    shaped = {k: v for k, v in capabilities.items() if k != "extensions"}
    if type(extensions) is dict:
        kept = {k: v for k, v in extensions.items() if k in HANDSHAKE_EXTENSIONS}
        if kept:
            shaped["extensions"] = kept
    return shaped


def check_initialize_params(params: JSONObject | None) -> str | None:
    """What is wrong with an initialize request's params, or None."""
    if params is None:
        return "initialize needs params"
    if type(params.get("protocolVersion")) is not str:
        return "initialize params need a string protocolVersion"
    if type(params.get("capabilities")) is not dict:
        return "initialize params need a capabilities object"
    if type(params.get("clientInfo")) is not dict:
        return "initialize params need a clientInfo object"
    return None


def check_initialize_result(result: JSONObject) -> str | None:
    if type(result.get("protocolVersion")) is not str:
        return "the initialize result has no string protocolVersion"
    if type(result.get("capabilities")) is not dict:
        return "the initialize result has no capabilities object"
    if type(result.get("serverInfo")) is not dict:
        return "the initialize result has no serverInfo object"
    return None


def is_handshake_version(version: str) -> bool:
    return version in HANDSHAKE_VERSIONS


def batch_refused(version: str | None) -> str:
    """The -32600 message for a JSON-RPC batch at a revision that forbids batches."""
    revision = version or "none negotiated yet"
    return (
        "Invalid Request: JSON-RPC batches are only accepted at protocol revision "
        f"2025-03-26 (this session: {revision})"
    )
