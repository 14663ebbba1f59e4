"""Content a tool can return besides text: images, audio, files, and links to resources.

`Image`, `Audio` and `File` carry bytes — given as `data`, or read from `path` when the
object is made — and travel base64-encoded. The mime type is the one you pass; else it is
guessed from the file suffix (of `path`, or of a `File`'s `name`); else, for images and
audio, sniffed from the first bytes (PNG, JPEG, GIF, WebP; WAV, MP3, Ogg, FLAC). An image
or audio clip whose type none of these finds raises ValueError; a `File` falls back to
`application/octet-stream`.

`File` becomes an embedded resource (`{"type": "resource", ...}`): its bytes travel inside
the result, as `text` when the mime type is textual and the bytes are UTF-8, otherwise as a
base64 `blob`. Its URI is `uri` when given, else the `file://` URI of `path`, else
`file:///<name>`. To point at a resource without carrying it, return a `ResourceLink`.

Every helper has `to_content()`, the content block as a plain dict; a tool may return one
helper, or a list mixing helpers, strings and other values (one block each).
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

JSONObject = dict[str, Any]
PathLike = str | os.PathLike[str]

_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_AUDIO_MAGIC = (
    (b"ID3", "audio/mpeg"),
    (b"\xff\xfb", "audio/mpeg"),
    (b"\xff\xf3", "audio/mpeg"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
)
_TEXTUAL = {
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/sql",
}


def guess_mime_type(name: str) -> str | None:
    """The mime type for a file name's suffix, or None."""
    import mimetypes

    return mimetypes.guess_type(name, strict=False)[0]


def _sniff(data: bytes, magic: tuple[tuple[bytes, str], ...], riff: dict[bytes, str]) -> str | None:
    for prefix, mime_type in magic:
        if data.startswith(prefix):
            return mime_type
    if data[:4] == b"RIFF":
        return riff.get(data[8:12])
    return None


def _load(data: bytes | str | None, path: PathLike | None) -> tuple[bytes, Path | None]:
    if (data is None) == (path is None):
        raise ValueError("give either data or path, not both and not neither")
    if path is not None:
        path = Path(path)
        return path.read_bytes(), path
    assert data is not None
    return (data.encode() if isinstance(data, str) else bytes(data)), None


class Content:
    """Base class of the content helpers: something that renders as one content block."""

    __slots__ = ("annotations", "meta")

    def __init__(self, annotations: JSONObject | None, meta: JSONObject | None) -> None:
        self.annotations = annotations
        self.meta = meta

    def to_content(self) -> JSONObject:
        raise NotImplementedError

    def _decorate(self, block: JSONObject) -> JSONObject:
        if self.annotations is not None:
            block["annotations"] = self.annotations
        if self.meta is not None:
            block["_meta"] = self.meta
        return block


class _Media(Content):
    __slots__ = ("data", "mime_type")
    kind = ""
    _magic: tuple[tuple[bytes, str], ...] = ()
    _riff: dict[bytes, str] = {}  # noqa: RUF012 - read-only per subclass

    def __init__(
        self,
        data: bytes | None = None,
        *,
        path: PathLike | None = None,
        mime_type: str | None = None,
        annotations: JSONObject | None = None,
        meta: JSONObject | None = None,
    ) -> None:
        """Raises ValueError (no type found; both or neither of data and path) and OSError
        (an unreadable `path`)."""
        super().__init__(annotations, meta)
        self.data, file = _load(data, path)
        guessed = guess_mime_type(file.name) if file else None
        if guessed and not guessed.startswith(self.kind + "/"):
            guessed = None  # "x.bin" says nothing about an image
        found = mime_type or guessed or _sniff(self.data, self._magic, self._riff)
        if not found:
            raise ValueError(f"cannot tell the type of this {self.kind}; pass mime_type=...")
        self.mime_type = found

    def to_content(self) -> JSONObject:
        block = {
            "type": self.kind,
            "data": base64.b64encode(self.data).decode("ascii"),
            "mimeType": self.mime_type,
        }
        return self._decorate(block)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.data)} bytes, {self.mime_type})"


class Image(_Media):
    """An image: `Image(png_bytes)`, `Image(path="chart.png")`, `Image(data, mime_type=...)`."""

    __slots__ = ()
    kind = "image"
    _magic = _IMAGE_MAGIC
    _riff = {b"WEBP": "image/webp"}  # noqa: RUF012


class Audio(_Media):
    """An audio clip: `Audio(wav_bytes)`, `Audio(path="hello.mp3")`. From protocol 2025-03-26
    on; older clients get a text note in its place."""

    __slots__ = ()
    kind = "audio"
    _magic = _AUDIO_MAGIC
    _riff = {b"WAVE": "audio/wav"}  # noqa: RUF012


class File(Content):
    """A file embedded in the result: `File(path="report.pdf")`,
    `File(b"...", name="data.csv")`, `File("some text", uri="notes://1")`."""

    __slots__ = ("data", "mime_type", "uri")

    def __init__(
        self,
        data: bytes | str | None = None,
        *,
        path: PathLike | None = None,
        name: str | None = None,
        uri: str | None = None,
        mime_type: str | None = None,
        annotations: JSONObject | None = None,
        meta: JSONObject | None = None,
    ) -> None:
        """Raises ValueError (no way to name it; both or neither of data and path) and
        OSError (an unreadable `path`)."""
        super().__init__(annotations, meta)
        self.data, file = _load(data, path)
        name = name or (file.name if file else None)
        if uri is None:
            if file is not None:
                uri = file.resolve().as_uri()
            elif name:
                uri = "file:///" + quote(name)
            else:
                raise ValueError("a File made from data needs a name or a uri")
        self.uri = uri
        guessed = guess_mime_type(name or uri)
        self.mime_type = mime_type or guessed or "application/octet-stream"

    def to_content(self) -> JSONObject:
        resource: JSONObject = {"uri": self.uri, "mimeType": self.mime_type}
        text = self._text()
        if text is not None:
            resource["text"] = text
        else:
            resource["blob"] = base64.b64encode(self.data).decode("ascii")
        return self._decorate({"type": "resource", "resource": resource})

    def _text(self) -> str | None:
        mime_type = self.mime_type.split(";", 1)[0].strip()
        textual = (
            mime_type.startswith("text/")
            or mime_type in _TEXTUAL
            or mime_type.endswith(("+json", "+xml"))
        )
        if not textual:
            return None
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def __repr__(self) -> str:
        return f"File({self.uri!r}, {len(self.data)} bytes, {self.mime_type})"


class ResourceLink(Content):
    """A link to a resource the client may read or subscribe to (protocol 2025-06-18 on;
    older clients get a text block naming the URI)."""

    __slots__ = ("description", "icons", "mime_type", "name", "size", "title", "uri")

    def __init__(
        self,
        uri: str,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        icons: list[JSONObject] | None = None,
        annotations: JSONObject | None = None,
        meta: JSONObject | None = None,
    ) -> None:
        super().__init__(annotations, meta)
        self.uri = uri
        self.name = name or uri.rstrip("/").rsplit("/", 1)[-1] or uri
        self.title = title
        self.description = description
        self.mime_type = mime_type
        self.size = size
        self.icons = icons

    def to_content(self) -> JSONObject:
        block: JSONObject = {"type": "resource_link", "uri": self.uri, "name": self.name}
        optional = (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("size", self.size),
            ("icons", self.icons),
        )
        block.update((key, value) for key, value in optional if value is not None)
        return self._decorate(block)

    def __repr__(self) -> str:
        return f"ResourceLink({self.uri!r}, {self.name!r})"
