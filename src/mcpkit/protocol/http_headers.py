"""The Mcp-* request headers of the 2026-07-28 Streamable HTTP transport (sans-IO).

Every per-request-era POST repeats parts of its body in headers so that intermediaries can route
without parsing JSON: `Mcp-Method`, `Mcp-Name` (tools/call, prompts/get: `params.name`;
resources/read: `params.uri`) and one `Mcp-Param-{Name}` per tool argument whose schema says
`"x-mcp-header": "{Name}"`. The client builds them (`request_headers`), the server checks
them against the body (`check_request_headers`); both share the value encoding: a value that
is not plain visible ASCII (or looks like the sentinel) travels as `=?base64?...?=`.

Header paths: `header_paths(input_schema)` maps each annotated header name to the chain of
`properties` keys leading to its argument, and raises `InvalidHeaderAnnotation` for a schema
the spec says clients must reject (bad name, duplicate, non-primitive type, an annotation
not statically reachable).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from mcpkit.errors import MCPError
from mcpkit.protocol.per_request import PROTOCOL_VERSION

HeaderPaths = dict[str, tuple[str, ...]]

VERSION_HEADER = "mcp-protocol-version"
# The body field each method's Mcp-Name header repeats.
NAMED_FIELDS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # the tasks extension: routes a task's requests to the instance that holds it
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
_PREFIX, _SUFFIX = "=?base64?", "?="
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 tchar
_PLAIN = re.compile(r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?")  # no spaces at either end
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e]*")
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_PRIMITIVE = frozenset({"string", "integer", "boolean"})
_SAFE_INTEGER = 2**53 - 1
_ANNOTATION = "x-mcp-header"


class InvalidHeaderAnnotation(MCPError, ValueError):
    """A tool's `x-mcp-header` annotations break the spec's rules (the tool is unusable)."""


# -- values -------------------------------------------------------------------------------------


def encode_header_value(value: str | int | bool) -> str:
    """A parameter value (or a name or URI) as a header value."""
    if value is True or value is False:
        return "true" if value else "false"
    text = str(value)
    if _PLAIN.fullmatch(text) and not (text.startswith(_PREFIX) and text.endswith(_SUFFIX)):
        return text
    return _PREFIX + base64.b64encode(text.encode()).decode() + _SUFFIX


def decode_header_value(text: str) -> str:
    """The value a header carries; ValueError for a broken `=?base64?...?=` value or for
    characters a header value cannot hold."""
    if not _FIELD_VALUE.fullmatch(text):
        raise ValueError("contains characters a header value cannot hold")
    if not (text.startswith(_PREFIX) and text.endswith(_SUFFIX) and len(text) >= 11):
        return text
    encoded = text[len(_PREFIX) : -len(_SUFFIX)]
    if not _BASE64.fullmatch(encoded):
        raise ValueError("is not valid base64 between =?base64? and ?=")
    try:
        return base64.b64decode(encoded, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError("does not decode to UTF-8 text") from None


# -- the tool's annotations ---------------------------------------------------------------------


def header_paths(input_schema: Any) -> HeaderPaths:
    """Header name (as annotated) -> the property path of its argument."""
    found: HeaderPaths = {}
    seen: set[str] = set()
    _collect(input_schema, (), True, found, seen)
    return found


def _collect(
    node: Any, path: tuple[str, ...], reachable: bool, found: HeaderPaths, seen: set[str]
) -> None:
    if isinstance(node, list):
        for item in node:
            _collect(item, path, False, found, seen)
        return
    if not isinstance(node, dict):
        return
    if _ANNOTATION in node:
        _check_annotation(node, path, reachable, seen)
        found[node[_ANNOTATION]] = path
    for key, child in node.items():
        if key == "properties" and isinstance(child, dict):
            for name, schema in child.items():
                _collect(schema, (*path, name), reachable, found, seen)
        elif key not in ("const", "enum", "default", "examples", _ANNOTATION):
            _collect(child, path, False, found, seen)


def _check_annotation(
    schema: dict[str, Any], path: tuple[str, ...], reachable: bool, seen: set[str]
) -> None:
    name = schema[_ANNOTATION]
    where = "/".join(path) or "the schema root"
    if not reachable or not path:
        raise InvalidHeaderAnnotation(
            f"x-mcp-header at {where} is not on a property reached through properties alone"
        )
    if not isinstance(name, str) or not _TOKEN.fullmatch(name):
        raise InvalidHeaderAnnotation(
            f"x-mcp-header {name!r} on {where} is not an HTTP field-name token"
        )
    if name.lower() in seen:
        raise InvalidHeaderAnnotation(f"x-mcp-header {name!r} is used more than once")
    seen.add(name.lower())
    kind = schema.get("type")
    kinds = set(kind) - {"null"} if isinstance(kind, list) else {kind}
    if len(kinds) != 1 or not kinds <= _PRIMITIVE:
        raise InvalidHeaderAnnotation(
            f"x-mcp-header {name!r} on {where}: the property's type must be string, integer "
            f"or boolean, not {kind!r}"
        )


# -- the client side ----------------------------------------------------------------------------


def request_headers(
    method: Any, params: dict[str, Any], paths: Mapping[str, tuple[str, ...]]
) -> list[tuple[str, str]]:
    """Mcp-Method, Mcp-Name and Mcp-Param-* for a per-request-era request (values encoded)."""
    headers = [("Mcp-Method", str(method))]
    field = NAMED_FIELDS.get(method)
    if field is not None and isinstance(params.get(field), str):
        headers.append(("Mcp-Name", encode_header_value(params[field])))
    if paths:
        arguments = params.get("arguments")
        for name, path in paths.items():
            value = _at(arguments, path)
            if value is not None and _mirrorable(value):
                headers.append((f"Mcp-Param-{name}", encode_header_value(value)))
    return headers


def _mirrorable(value: Any) -> bool:
    if type(value) is int:
        return -_SAFE_INTEGER <= value <= _SAFE_INTEGER
    return type(value) in (str, bool)


def _at(arguments: Any, path: tuple[str, ...]) -> Any:
    value = arguments
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


# -- the server side ----------------------------------------------------------------------------


def check_request_headers(
    headers: dict[str, str], message: dict[str, Any], paths: HeaderPaths | None
) -> str | None:
    """What is wrong with a per-request-era request's headers against its body, or None.

    `headers`: lowercased names, values with the surrounding spaces trimmed. The problem
    text is the error message of a -32020 HeaderMismatch answer.
    """
    params = message.get("params") or {}
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
    problem = _compare(headers, VERSION_HEADER, "MCP-Protocol-Version", version, decode=False)
    if problem is None:
        problem = _compare(headers, "mcp-method", "Mcp-Method", message.get("method"), decode=False)
    field = NAMED_FIELDS.get(message.get("method"))  # type: ignore[arg-type]
    if problem is None and field is not None:
        problem = _compare(headers, "mcp-name", "Mcp-Name", params.get(field), decode=True)
    if problem is None and paths:
        arguments = params.get("arguments")
        for name, path in paths.items():
            problem = _compare_param(headers, name, _at(arguments, path))
            if problem is not None:
                break
    return problem


def _compare(
    headers: dict[str, str], key: str, label: str, expected: Any, *, decode: bool
) -> str | None:
    sent = headers.get(key)
    if sent is None:
        return f"Header mismatch: the {label} header is required"
    if decode:
        try:
            sent = decode_header_value(sent)
        except ValueError as exc:
            return f"Header mismatch: the {label} header {exc}"
    if sent != expected:
        return (
            f"Header mismatch: {label} header value {sent!r} does not match body value {expected!r}"
        )
    return None


def _compare_param(headers: dict[str, str], name: str, value: Any) -> str | None:
    label = f"Mcp-Param-{name}"
    sent = headers.get(label.lower())
    if value is None:
        if sent is not None:
            return f"Header mismatch: {label} is sent but the argument is absent or null"
        return None
    if sent is None:
        return f"Header mismatch: the {label} header is required (the argument is {value!r})"
    try:
        text = decode_header_value(sent)
    except ValueError as exc:
        return f"Header mismatch: the {label} header {exc}"
    if _same(text, value):
        return None
    return f"Header mismatch: {label} header value {text!r} does not match body value {value!r}"


def _same(text: str, value: Any) -> bool:
    if value is True or value is False:
        return text == ("true" if value else "false")
    if isinstance(value, (int, float)):  # integers compare as numbers: "42.0" is 42
        try:
            return float(text) == value
        except ValueError:
            return False
    return bool(text == value)
