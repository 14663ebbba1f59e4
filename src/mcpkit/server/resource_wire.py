"""The wire shapes resources share: contents items, list definitions, the not-found error."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mcpkit.errors import ProtocolError, resource_not_found_code

if TYPE_CHECKING:
    from mcpkit.server.context import Context

JSONObject = dict[str, Any]

_AUDIENCES = frozenset({"user", "assistant"})
_ANNOTATION_KEYS = frozenset({"audience", "priority", "lastModified"})


@dataclass(frozen=True, slots=True)
class ResourceContents:
    """One item of a read result, for a function that wants to say more than a bare value:
    `data` is text (str) or binary (bytes, sent base64 as `blob`); `uri` defaults to the URI
    being read and `mime_type` to the resource's."""

    data: str | bytes
    mime_type: str | None = None
    uri: str | None = None
    meta: Mapping[str, Any] | None = None

    def to_wire(self, uri: str, mime_type: str | None) -> JSONObject:
        item = contents_item(self.uri or uri, self.data, self.mime_type or mime_type)
        if self.meta is not None:
            item["_meta"] = dict(self.meta)
        return item


def contents_item(uri: str, data: str | bytes | bytearray, mime_type: str | None) -> JSONObject:
    """One TextResourceContents (str) or BlobResourceContents (bytes, base64)."""
    if isinstance(data, str):
        return {"uri": uri, "mimeType": mime_type or "text/plain", "text": data}
    blob = base64.b64encode(data).decode("ascii")
    return {"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": blob}


def not_found(uri: str, ctx: Context, detail: str | None = None) -> ProtocolError:
    """The error an unknown URI gets at this request's revision."""
    message = f"Resource not found: {uri}" + (f" ({detail})" if detail else "")
    return ProtocolError(resource_not_found_code(ctx.protocol_version), message, {"uri": uri})


def listing(
    key_value: tuple[str, str],
    *,
    name: str,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    size: int | None,
    annotations: Any,
    icons: Sequence[Any] | None,
    meta: Mapping[str, Any] | None,
) -> JSONObject:
    """A Resource or ResourceTemplate definition. Raises ValueError/TypeError for bad values."""
    key, value = key_value
    if not value:
        raise ValueError("a resource needs a non-empty URI")
    definition: JSONObject = {key: value, "name": name}
    optional = {"title": title, "description": description, "mimeType": mime_type}
    definition.update((k, v) for k, v in optional.items() if v is not None)
    if size is not None:
        if type(size) is not int or size < 0:
            raise ValueError(f"size is a number of bytes, not {size!r}")
        definition["size"] = size
    if annotations is not None:
        definition["annotations"] = _annotations(annotations)
    if icons is not None:
        definition["icons"] = [_icon(icon) for icon in icons]
    if meta is not None:
        definition["_meta"] = dict(meta)
    return definition


def _annotations(value: Any) -> JSONObject:
    data = dict(_wire(value))
    unknown = set(data) - _ANNOTATION_KEYS
    if unknown:
        raise ValueError(f"unknown resource annotations: {', '.join(sorted(unknown))}")
    audience = data.get("audience")
    if audience is not None and (isinstance(audience, str) or not set(audience) <= _AUDIENCES):
        raise ValueError(f"annotations audience is a list of 'user'/'assistant', not {audience!r}")
    if audience is not None:
        data["audience"] = list(audience)
    priority = data.get("priority")
    if priority is not None and (type(priority) not in (int, float) or not 0 <= priority <= 1):
        raise ValueError(f"annotations priority is a number from 0 to 1, not {priority!r}")
    modified = data.get("lastModified")
    if isinstance(modified, datetime):
        data["lastModified"] = modified.isoformat().replace("+00:00", "Z")
    elif modified is not None and not isinstance(modified, str):
        raise ValueError(f"annotations lastModified is an ISO 8601 string, not {modified!r}")
    return data


def _icon(value: Any) -> JSONObject:
    icon = dict(_wire(value))
    if type(icon.get("src")) is not str:
        raise ValueError(f"an icon needs a 'src' URI: {value!r}")
    return icon


def _wire(value: Any) -> Mapping[str, Any]:
    """Protocol models (pydantic) -> dicts; mappings as they are. Raises TypeError otherwise."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        value = dump(mode="json", by_alias=True, exclude_none=True)
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a mapping or a protocol model, not {type(value).__name__}")
    return value
