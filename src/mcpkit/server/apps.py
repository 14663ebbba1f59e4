"""MCP Apps on the server: views (`ui://` HTML resources) and the tools that render in them.

How this works. A view is a concrete resource at a `ui://` URI, served as
`text/html;profile=mcp-app`, whose `_meta.ui` (CSP domains, permissions, a dedicated domain,
the border preference) is written in both its resources/list definition and every
resources/read contents item: `@server.app(uri, ...)` on a function returning the HTML, or
`server.add_app(uri, html_or_path, ...)`. A tool names its view with
`@server.tool(app="ui://...", visibility=[...])`, written as `_meta.ui.resourceUri` /
`_meta.ui.visibility` (and the deprecated flat `_meta["ui/resourceUri"]` some hosts still
read). The tool returns what it always does: its content is the text fallback of hosts
without Apps.

Checks: at registration, the `ui://` scheme, the MIME type, the CSP domains (one origin each:
no spaces, `;`, `,` or quotes, so a value cannot add directives to the host's policy), the
permission names and the visibility values; when the server starts (`Server.running`), every
tool's view must exist as a concrete `ui://` resource of the app MIME type (`check_links`),
so a broken link fails at start, not when a host renders it. The server declares the
`io.modelcontextprotocol/ui` extension once it has a view or a linked tool.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from mcpkit.protocol.apps import (
    APP_MIME_TYPE,
    APP_SCHEME,
    APPS_EXTENSION,
    AUDIENCES,
    LEGACY_RESOURCE_URI_KEY,
    tool_ui,
)
from mcpkit.server.registry import Listed, scope_set
from mcpkit.server.resource_functions import Reader, ResourceFunction
from mcpkit.server.resource_items import Resource
from mcpkit.server.resource_wire import contents_item, listing
from mcpkit.server.schema import summary
from mcpkit.server.uri_template import is_template

if TYPE_CHECKING:
    from mcpkit.server.context import Context
    from mcpkit.server.resources import ResourceRegistry

__all__ = [
    "AppOptions",
    "Csp",
    "apps_meta",
    "add_app",
    "check_links",
    "client_supports_apps",
    "declares_apps",
    "relinked",
    "tool_meta",
]

JSONObject = dict[str, Any]
# One CSP source expression: no whitespace (a second source), `;` (a new directive), `,`
# (a second policy) or quotes (keywords such as 'unsafe-eval').
_SOURCE = re.compile(r"[^\s;,'\"]+")
_PERMISSIONS = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboardWrite",
    "clipboard_write": "clipboardWrite",
    "clipboard-write": "clipboardWrite",
}


@dataclass(frozen=True, slots=True)
class Csp:
    """The origins a view needs (`_meta.ui.csp`); empty lists are the host's restrictive
    default. `connect_domains`: fetch/XHR/WebSocket; `resource_domains`: scripts, images,
    styles, fonts, media; `frame_domains`: nested iframes; `base_uri_domains`: `<base>`."""

    connect_domains: Sequence[str] = ()
    resource_domains: Sequence[str] = ()
    frame_domains: Sequence[str] = ()
    base_uri_domains: Sequence[str] = ()

    def to_wire(self) -> JSONObject:
        """The camelCase `csp` object. Raises ValueError for a domain that is not one CSP
        source (see the module docstring)."""
        wire: JSONObject = {}
        for field, key in _CSP_KEYS.items():
            domains = getattr(self, field)
            if isinstance(domains, str):
                raise ValueError(f"csp {field} is a list of origins, not the string {domains!r}")
            if domains:
                wire[key] = [_source(field, d) for d in domains]
        return wire


_CSP_KEYS = {
    "connect_domains": "connectDomains",
    "resource_domains": "resourceDomains",
    "frame_domains": "frameDomains",
    "base_uri_domains": "baseUriDomains",
}
_CSP_FIELDS = {**{v: k for k, v in _CSP_KEYS.items()}, **{k: k for k in _CSP_KEYS}}


class AppOptions(TypedDict, total=False):
    """The keywords of `@server.app(uri, ...)` and `server.add_app(uri, source, ...)`:
    `name` (default: the function's name, or the URI's last segment), `title`, `description`
    (default: the docstring's summary), `csp` (a `Csp`, or a dict of its fields in snake_case
    or camelCase), `permissions` (names among camera, microphone, geolocation,
    clipboard_write), `domain` (a dedicated sandbox origin, in the host's format),
    `prefers_border` (True/False; None: the host decides), `meta` (more `_meta` keys),
    `replace`, `scopes` (with authorization: what a caller's token must grant to read it)."""

    name: str | None
    title: str | None
    description: str | None
    csp: Csp | Mapping[str, Sequence[str]] | None
    permissions: Iterable[str] | None
    domain: str | None
    prefers_border: bool | None
    meta: Mapping[str, Any] | None
    replace: bool
    scopes: Iterable[str] | None


# -- views ----------------------------------------------------------------------------------


def add_app(
    resources: ResourceRegistry,
    uri: str,
    source: str | os.PathLike[str] | Callable[..., Any],
    options: AppOptions,
) -> Resource:
    """Register a view at `uri`: HTML text, a file (read at each read: edit and reload), or
    a function returning the HTML (sync or async; a `Context` parameter gets the request's).

    Raises ValueError for a URI that is not a concrete `ui://` URI, a bad option value (see
    the module docstring), or a URI already registered (unless `replace`); TypeError for
    another kind of source or an unknown option; FileNotFoundError for a missing file.
    """
    unknown = set(options) - set(AppOptions.__annotations__)
    if unknown:
        raise TypeError(f"unknown option(s) for an app view: {', '.join(sorted(unknown))}")
    check_view_uri(uri)
    meta = _view_meta(options)
    served = _served(uri, source, meta)
    description = options.get("description")
    definition = listing(
        ("uri", uri),
        name=options.get("name") or served.name,
        title=options.get("title"),
        description=description if description is not None else served.description,
        mime_type=APP_MIME_TYPE,
        size=served.size,
        annotations=None,
        icons=None,
        meta=meta,
    )
    scopes = scope_set(options.get("scopes"))
    resource = Resource(uri, definition, served.reader, served.result, scopes)
    resources.registry("resource")._put(uri, resource, replace=options.get("replace", False))
    return resource


class _Served(NamedTuple):
    """How a view's source is read, and what it gives its listing by default."""

    reader: Reader
    result: JSONObject | None  # fixed HTML: the whole answer, built once
    size: int | None
    name: str
    description: str | None


def _served(
    uri: str, source: str | os.PathLike[str] | Callable[..., Any], meta: JSONObject
) -> _Served:
    """Raises TypeError, FileNotFoundError, ValueError as `add_app` says."""
    if isinstance(source, str):
        item = contents_item(uri, source, APP_MIME_TYPE)
        item["_meta"] = meta
        result = {"contents": [item]}
        return _Served(_fixed(result), result, len(source.encode()), _last_segment(uri), None)
    if isinstance(source, os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"app view {uri}: no file at {path}")
        return _Served(_file_reader(uri, path, meta), None, None, path.name, None)
    if callable(source):
        function = ResourceFunction(source, uri, APP_MIME_TYPE)
        if function.variables:
            raise ValueError(f"app view {uri}: the function takes no URI variables")
        name = getattr(source, "__name__", _last_segment(uri))
        return _Served(_stamped(function.reader(uri), meta), None, None, name, summary(source))
    raise TypeError(f"an app view is HTML text, a file path or a function, not {source!r}")


def check_view_uri(uri: str) -> str:
    """`uri` if it can name a view: a concrete `ui://` URI. Raises ValueError."""
    if type(uri) is not str or not uri.startswith(APP_SCHEME) or len(uri) == len(APP_SCHEME):
        raise ValueError(f"an app view's URI uses the ui:// scheme (ui://server/view), not {uri!r}")
    if is_template(uri):
        raise ValueError(f"an app view has a concrete URI, not a template: {uri}")
    return uri


def _view_meta(options: AppOptions) -> JSONObject:
    """The resource's `_meta`: the user's keys and `ui`. Raises ValueError/TypeError."""
    ui: JSONObject = {}
    csp = _csp(options.get("csp"))
    if csp:
        ui["csp"] = csp
    permissions = _permissions(options.get("permissions"))
    if permissions:
        ui["permissions"] = permissions
    domain = options.get("domain")
    if domain is not None:
        if type(domain) is not str or not _SOURCE.fullmatch(domain):
            raise ValueError(f"an app view's domain is one host name, not {domain!r}")
        ui["domain"] = domain
    border = options.get("prefers_border")
    if border is not None:
        if type(border) is not bool:
            raise TypeError(f"prefers_border is True, False or None, not {border!r}")
        ui["prefersBorder"] = border
    meta = dict(options.get("meta") or {})
    if "ui" in meta:
        raise ValueError("an app view's _meta.ui is written from csp=, permissions=, domain=, ...")
    meta["ui"] = ui
    return meta


def _csp(value: Csp | Mapping[str, Sequence[str]] | None) -> JSONObject:
    if value is None:
        return {}
    if isinstance(value, Csp):
        return value.to_wire()
    if not isinstance(value, Mapping):
        raise TypeError(f"csp is a Csp or a dict of domain lists, not {value!r}")
    fields = {}
    for key, domains in value.items():
        field = _CSP_FIELDS.get(key)
        if field is None:
            known = ", ".join(_CSP_KEYS)
            raise ValueError(f"unknown csp key {key!r} (known: {known}, or their camelCase)")
        fields[field] = domains
    return Csp(**fields).to_wire()


def _source(field: str, domain: Any) -> str:
    if type(domain) is not str or not _SOURCE.fullmatch(domain):
        raise ValueError(
            f"csp {field}: {domain!r} is not one origin (no spaces, ';', ',' or quotes)"
        )
    return domain


def _permissions(value: Iterable[str] | None) -> JSONObject:
    if value is None:
        return {}
    if isinstance(value, str):
        value = [value]
    wire: JSONObject = {}
    for name in value:
        key = _PERMISSIONS.get(name) if type(name) is str else None
        if key is None:
            raise ValueError(
                f"unknown app permission {name!r} (camera, microphone, geolocation, "
                "clipboard_write)"
            )
        wire[key] = {}
    return wire


def _fixed(result: JSONObject) -> Reader:
    return lambda ctx: result


def _stamped(read: Reader, meta: JSONObject) -> Reader:
    """A reader whose contents items carry the view's `_meta` (the spec wants it in the read
    too, where hosts take the CSP from)."""

    def reader(ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        outcome = read(ctx)
        if inspect.isawaitable(outcome):
            return _stamp_later(outcome, meta)
        return _stamp(outcome, meta)

    return reader


async def _stamp_later(outcome: Awaitable[JSONObject], meta: JSONObject) -> JSONObject:
    return _stamp(await outcome, meta)


def _stamp(result: JSONObject, meta: JSONObject) -> JSONObject:
    for item in result.get("contents") or ():
        if type(item) is dict:
            item["mimeType"] = APP_MIME_TYPE
            item["_meta"] = {**meta, **(item.get("_meta") or {})}
    return result


def _file_reader(uri: str, path: Path, meta: JSONObject) -> Reader:
    def reader(ctx: Context) -> JSONObject:
        item = contents_item(uri, path.read_text(encoding="utf-8"), APP_MIME_TYPE)
        item["_meta"] = meta
        return {"contents": [item]}

    return reader


def _last_segment(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1] or uri


# -- tools ----------------------------------------------------------------------------------


def tool_meta(
    meta: Mapping[str, Any] | None, app: str | None, visibility: Iterable[str] | None
) -> JSONObject | None:
    """A tool's `_meta` with its view link (`app`) and `visibility` written as the spec names
    them; `meta` unchanged when neither is given.

    Raises ValueError for an `app` that is not a concrete `ui://` URI, a visibility that is
    empty or names something other than "model" and "app", or a `meta` with its own `ui`.
    """
    if app is None and visibility is None:
        return None if meta is None else dict(meta)
    written = dict(meta or {})
    if "ui" in written or LEGACY_RESOURCE_URI_KEY in written:
        raise ValueError("give the tool's view with app= and visibility=, not in meta['ui']")
    ui: JSONObject = {}
    if app is not None:
        ui["resourceUri"] = check_view_uri(app)
        written[LEGACY_RESOURCE_URI_KEY] = app  # for hosts that predate the nested form
    if visibility is not None:
        ui["visibility"] = _visibility(visibility)
    written["ui"] = ui
    return written


def apps_meta(meta: Any) -> JSONObject | None:
    """The MCP Apps keys of a tool's `_meta` (`ui`, the flat `ui/resourceUri`), or None: what
    a revision without tool `_meta` (2024-11-05, 2025-03-26) still gets, since the extension
    is negotiated at every revision and a host must see `visibility` to keep app-only tools
    from its model."""
    if type(meta) is not dict or "ui" not in meta:
        return None
    return {k: meta[k] for k in ("ui", LEGACY_RESOURCE_URI_KEY) if k in meta}


def _visibility(value: Iterable[str]) -> list[str]:
    audiences = [value] if isinstance(value, str) else list(value)
    if not audiences or any(a not in AUDIENCES for a in audiences):
        raise ValueError(f"visibility lists 'model' and/or 'app', not {value!r}")
    return list(dict.fromkeys(audiences))


def check_links(tools: Iterable[Listed], resources: ResourceRegistry) -> None:
    """Every tool's view exists: a concrete resource at its URI, of the app MIME type.

    Raises ValueError naming each broken link (the server does not start).
    """
    views = resources.registry("resource")
    problems = []
    for tool in tools:
        uri = tool_ui(tool.definition.get("_meta")).resource_uri
        if uri is None:
            continue
        name = tool.definition.get("name")
        view = views.get(uri)
        if view is None:
            problems.append(
                f"tool {name!r} renders in {uri!r}, but no view is registered there "
                "(register it with @server.app(uri) or server.add_app(uri, ...))"
            )
        elif view.definition.get("mimeType") != APP_MIME_TYPE:
            mime = view.definition.get("mimeType")
            problems.append(
                f"tool {name!r} renders in {uri!r}, which is served as {mime!r}, "
                f"not {APP_MIME_TYPE!r}"
            )
    if problems:
        raise ValueError("MCP Apps: " + "; ".join(problems))


def declares_apps(tools: Iterable[Listed], resources: ResourceRegistry) -> bool:
    """Whether the server has a view or a tool with app metadata (it then declares the
    extension)."""
    if any(r.definition.get("mimeType") == APP_MIME_TYPE for r in resources.registry("resource")):
        return True
    return any(type((t.definition.get("_meta") or {}).get("ui")) is dict for t in tools)


def client_supports_apps(ctx: Context) -> bool:
    """Whether the client of this request renders views: it declared the extension with the
    app MIME type (`Client(..., apps=True)` does), in the handshake or, at 2026-07-28, on
    this request. A tool may answer richer text to the others; it renders in its view the
    same either way."""
    extensions = ctx.client_capabilities.get("extensions")
    settings = extensions.get(APPS_EXTENSION) if type(extensions) is dict else None
    mime_types = settings.get("mimeTypes") if type(settings) is dict else None
    return type(mime_types) is list and APP_MIME_TYPE in mime_types


def relinked(definition: JSONObject, uri: Callable[[str], str]) -> JSONObject:
    """A tool definition whose view link goes through `uri` (a mount's renaming of the
    mounted server's URIs: its view is served under the prefixed one)."""
    meta = definition.get("_meta")
    link = tool_ui(meta).resource_uri
    if link is None or type(meta) is not dict:
        return definition
    meta = dict(meta)
    if type(meta.get("ui")) is dict:
        meta["ui"] = {**meta["ui"], "resourceUri": uri(link)}
    if LEGACY_RESOURCE_URI_KEY in meta:
        meta[LEGACY_RESOURCE_URI_KEY] = uri(link)
    return {**definition, "_meta": meta}
