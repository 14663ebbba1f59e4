"""JSON-RPC 2.0 messages: classify parsed JSON, and encode outgoing messages.

Parsing happens once, from bytes, with orjson. `classify` checks only the envelope (jsonrpc,
id, method, params/result/error shapes); params are the business of whoever handles the method.
Anything structurally wrong becomes an `Invalid` carrying the error to answer with, so a bad
message never raises out of the core. The message classes are final: the connection tells
them apart by `type(msg) is C`, which mypy narrows for a final class.
"""

from __future__ import annotations

import json
from typing import Any, TypeGuard, final

import orjson

from mcpkit.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR

RequestId = str | int
JSONObject = dict[str, Any]

__all__ = [
    "ErrorResponse",
    "Invalid",
    "Message",
    "Notification",
    "Parsed",
    "Prepared",
    "Request",
    "RequestId",
    "Response",
    "classify",
    "dumps",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "is_valid_id",
    "parse",
]


@final
class Request:
    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: JSONObject | None) -> None:
        self.id = id
        self.method = method
        self.params = params


@final
class Notification:
    __slots__ = ("method", "params")

    def __init__(self, method: str, params: JSONObject | None) -> None:
        self.method = method
        self.params = params


@final
class Response:
    __slots__ = ("id", "result")

    def __init__(self, id: RequestId, result: JSONObject) -> None:
        self.id = id
        self.result = result


@final
class ErrorResponse:
    """An error answer. `id` is None when the peer could not tell which request failed."""

    __slots__ = ("error", "id")

    def __init__(self, id: RequestId | None, error: JSONObject) -> None:
        self.id = id
        self.error = error


@final
class Invalid:
    """A message we cannot accept. `reply` says whether an error response is owed."""

    __slots__ = ("code", "id", "message", "reply", "text")

    def __init__(
        self, id: RequestId | None, code: int, message: str, *, reply: bool, text: str | None = None
    ) -> None:
        self.id = id
        self.code = code
        self.message = message
        self.reply = reply
        self.text = text  # a parse error: the start of what came (for local logs only)


Message = Request | Notification | Response | ErrorResponse
# What `parse` makes of one JSON text: a message, a rejection, or a batch of them.
Parsed = Message | Invalid | list[Message | Invalid]


def is_valid_id(value: object) -> TypeGuard[RequestId]:
    # MCP ids are strings or integers, never null; bool is not an integer here.
    kind = type(value)
    return kind is str or kind is int


NOISE_EXCERPT = 120  # characters of a line that is not JSON kept for the log


def parse(data: bytes | str) -> Parsed:
    """Parse one JSON text. A list comes back for a JSON array (a batch)."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        text = data[:NOISE_EXCERPT]
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        return Invalid(None, PARSE_ERROR, f"Parse error: {exc}", reply=True, text=text)
    if type(obj) is list:
        if not obj:
            return Invalid(None, INVALID_REQUEST, "Invalid Request: empty batch", reply=True)
        return [classify(item) for item in obj]
    return classify(obj)


def classify(obj: Any) -> Message | Invalid:
    """Turn one parsed JSON value into a message, or an `Invalid` saying what is wrong."""
    if type(obj) is not dict:
        return Invalid(None, INVALID_REQUEST, "Invalid Request: not a JSON object", reply=True)
    msg_id = obj.get("id")
    id_type = type(msg_id)  # is_valid_id, inline: this runs for every message
    usable_id: RequestId | None = msg_id if id_type is str or id_type is int else None
    method = obj.get("method")
    if obj.get("jsonrpc") != "2.0":
        # Answer anything but a (broken) response: replying to responses could loop forever.
        owed = "result" not in obj and "error" not in obj
        return _invalid(usable_id, 'Invalid Request: "jsonrpc" must be "2.0"', owed)
    if method is None:
        return _classify_response(obj, "id" in obj, usable_id)
    return _classify_call(obj, method, usable_id)


def _classify_call(obj: JSONObject, method: Any, usable_id: RequestId | None) -> Message | Invalid:
    has_id = "id" in obj
    if type(method) is not str:
        return _invalid(usable_id, 'Invalid Request: "method" must be a string', True)
    params = obj.get("params")
    if params is not None and type(params) is not dict:
        if type(params) is list:
            # Structurally fine JSON-RPC, but MCP params are always objects.
            bad_params = "Invalid params: params must be an object"
            return Invalid(usable_id, INVALID_PARAMS, bad_params, reply=has_id)
        return _invalid(usable_id, 'Invalid Request: "params" must be an object', has_id)
    if not has_id:
        return Notification(method, params)
    if usable_id is None:
        return _invalid(None, 'Invalid Request: "id" must be a string or an integer', True)
    return Request(usable_id, method, params)


def _classify_response(
    obj: JSONObject, has_id: bool, usable_id: RequestId | None
) -> Message | Invalid:
    if "result" in obj:
        result = obj["result"]
        if "error" in obj or usable_id is None or type(result) is not dict:
            return _invalid(usable_id, "Invalid response: needs an id and an object result", False)
        return Response(usable_id, result)
    if "error" in obj:
        error = obj["error"]
        if (
            type(error) is not dict
            or type(error.get("code")) is not int
            or type(error.get("message")) is not str
            or (usable_id is None and obj.get("id") is not None)
        ):
            return _invalid(usable_id, "Invalid error response: malformed error object", False)
        return ErrorResponse(usable_id, error)
    if has_id:
        return _invalid(usable_id, "Invalid Request: no method, result or error", True)
    return _invalid(None, "Invalid Request: not a JSON-RPC message", True)


def _invalid(msg_id: RequestId | None, message: str, reply: bool) -> Invalid:
    return Invalid(msg_id, INVALID_REQUEST, message, reply=reply)


# -- encoding ------------------------------------------------------------------------------------
# Dict literals in wire order; orjson emits no newlines, which the stdio framing relies on.


def dumps(value: Any, *, default: Any = None, option: int = 0) -> bytes:
    """JSON for a value (`default` and `option` as for `orjson.dumps`). orjson first; JSON
    numbers have no size limit, so an integer past 64 bits (which orjson refuses) falls back
    to the standard library, keys sorted when `option` asks for it.

    Raises TypeError for a value JSON cannot represent.
    """
    try:
        return orjson.dumps(value, default=default, option=option)
    except orjson.JSONEncodeError as exc:
        if "64-bit" not in str(exc):
            raise
    sort_keys = bool(option & orjson.OPT_SORT_KEYS)
    try:
        text = json.dumps(
            value, default=default, sort_keys=sort_keys, ensure_ascii=False, separators=(",", ":")
        )
    except ValueError as exc:
        raise TypeError(str(exc)) from None
    return text.encode()


def encode_request(msg_id: RequestId, method: str, params: JSONObject | None) -> bytes:
    if params is None:
        return dumps({"jsonrpc": "2.0", "id": msg_id, "method": method})
    return dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


def encode_notification(method: str, params: JSONObject | None) -> bytes:
    if params is None:
        return dumps({"jsonrpc": "2.0", "method": method})
    return dumps({"jsonrpc": "2.0", "method": method, "params": params})


class Prepared:
    """A result serialized ahead of time (a cached list result): spliced in, not re-encoded."""

    __slots__ = ("json",)

    def __init__(self, result: JSONObject) -> None:
        self.json = dumps(result)


def encode_result(msg_id: RequestId, result: JSONObject | Prepared) -> bytes:
    """Raises TypeError when `result` holds something JSON cannot represent."""
    if type(result) is Prepared:
        return b'{"jsonrpc":"2.0","id":%b,"result":%b}' % (orjson.dumps(msg_id), result.json)
    return dumps({"jsonrpc": "2.0", "id": msg_id, "result": result})


def encode_error(msg_id: RequestId | None, code: int, message: str, data: Any = None) -> bytes:
    error: JSONObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    try:
        return dumps({"jsonrpc": "2.0", "id": msg_id, "error": error})
    except TypeError:
        # Unserializable data must not cost the peer its answer.
        del error["data"]
        return dumps({"jsonrpc": "2.0", "id": msg_id, "error": error})
