"""What changes in a request or a result as it crosses the proxy between eras.

A forwarded request keeps its params (arguments, cursor, `_meta` and all) except what belongs
to the hop it arrived on: its progress token (the upstream client asks for progress itself
and relays it) and, unless both sides speak 2026-07-28, the per-request envelope
(`io.modelcontextprotocol/*` in `_meta`: the upstream client sends its own). Between two
2026-07-28 sides the downstream client's capabilities and log level stay in the envelope, so
the upstream asks for input (input_required) only what the downstream client can answer.

An error answer goes back as it came, except where the eras disagree on its code: a
handshake-era upstream's -32002 (resource not found) is -32602 for a 2026-07-28 client, and
a tool error an mcpkit upstream marks as caused by a client capability the client did not
declare (`MISSING_CAPABILITY_META`) is the -32021 a 2026-07-28 server answers for it.

A result going back to a handshake-era client loses what only 2026-07-28 results carry
(`resultType`, `ttlMs`, `cacheScope`, the server's identity in `_meta`); a 2026-07-28 client
gets them stamped by the proxy's own server when the upstream did not send them.
"""

from __future__ import annotations

from typing import Any

from mcpkit.client import Era
from mcpkit.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, ProtocolError
from mcpkit.protocol.per_request import missing_capability
from mcpkit.server.asks import MISSING_CAPABILITY_META

JSONObject = dict[str, Any]

_ENVELOPE = "io.modelcontextprotocol/"
# Envelope keys a 2026-07-28 downstream request passes on to a 2026-07-28 upstream.
_KEPT = frozenset({_ENVELOPE + "clientCapabilities", _ENVELOPE + "logLevel"})
_PER_REQUEST_RESULT_KEYS = ("resultType", "ttlMs", "cacheScope")


def upstream_params(params: JSONObject | None, *, keep_envelope: bool) -> JSONObject | None:
    """The params to send upstream for a downstream request's `params`."""
    if not params:
        return params
    meta = params.get("_meta")
    if type(meta) is not dict:
        return params
    kept = {
        key: value
        for key, value in meta.items()
        if key != "progressToken"
        and (not key.startswith(_ENVELOPE) or (keep_envelope and key in _KEPT))
    }
    out = {key: value for key, value in params.items() if key != "_meta"}
    if kept:
        out["_meta"] = kept
    return out


def progress_token(params: JSONObject | None) -> Any:
    """The downstream request's progress token (None: it did not ask for progress)."""
    meta = (params or {}).get("_meta")
    return meta.get("progressToken") if type(meta) is dict else None


def downstream_result(result: JSONObject, *, per_request: bool) -> JSONObject:
    """An upstream `result` as the downstream client's era has it."""
    if per_request or not any(key in result for key in (*_PER_REQUEST_RESULT_KEYS, "_meta")):
        return result
    out = {key: value for key, value in result.items() if key not in _PER_REQUEST_RESULT_KEYS}
    meta = out.get("_meta")
    if type(meta) is dict:
        own = {key: value for key, value in meta.items() if not key.startswith(_ENVELOPE)}
        if own:
            out["_meta"] = own
        else:
            del out["_meta"]
    return out


def downstream_error(error: ProtocolError, per_request: bool, upstream: Era) -> ProtocolError:
    """An upstream `error` answer as the downstream client's era has it (`per_request`: a
    2026-07-28 client; `upstream`: the upstream's era)."""
    if per_request and upstream is Era.HANDSHAKE and error.code == RESOURCE_NOT_FOUND:
        return ProtocolError(INVALID_PARAMS, error.message, error.data)
    return error


def refused_for_capability(result: JSONObject) -> ProtocolError | None:
    """The -32021 error for a handshake-era upstream's tool `result` that failed for want of
    a client capability (marked so by an mcpkit upstream), else None."""
    if result.get("isError") is not True:
        return None
    meta = result.get("_meta")
    needed = meta.get(MISSING_CAPABILITY_META) if type(meta) is dict else None
    return missing_capability(needed) if type(needed) is dict and needed else None
