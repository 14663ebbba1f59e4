"""Resources: static, function-backed, templated and file-backed; list, read, subscribe.

How this works: the registry keeps two `Registry` collections, concrete resources by URI
(resources/list) and templates by their URI template (resources/templates/list); each list is
serialized once per version through the server's `Paginator`. `resources/read` looks the URI
up among the concrete resources first (a static resource answers with its result serialized
at registration), then asks each template in registration order whether the URI fits it.

A function resource is `@server.resource(uri)` on a sync or async function. A URI with
`{variables}` (RFC 6570, see `uri_template`) makes it a template: the variables matched from
the requested URI are converted by the parameters' annotations (str, int, float, bool,
Literal, Enum, list[...] of those for exploded `{/path*}` or comma-separated values,
Optional) and passed by name; a parameter annotated `Context` gets the request context. What
the function returns becomes the contents:

- str -> text (mimeType "text/plain" unless given); bytes -> base64 `blob`
  ("application/octet-stream" unless given);
- None -> resource not found (so `return db.get(id)` just works);
- `ResourceContents`, or a list of them, or mcpkit.types Text/BlobResourceContents or a whole
  ReadResourceResult -> taken as they are;
- anything else JSON can carry (dict, list, numbers, dataclasses, pydantic models) -> its JSON
  as text, mimeType "application/json".

Errors: an unknown URI (or a function raising `ResourceNotFound`) answers with the code the
negotiated revision names (-32002, or -32602 from 2026-07-28) and `{"uri": uri}` as data;
a malformed request is -32602; any other exception is -32603, its details kept in the log.

Subscriptions: `resources/subscribe` records the URI in the client's session state (unknown
URIs are refused as not found); `notify_updated(uri)` sends notifications/resources/updated
to exactly the clients subscribed to that URI (or, given a URI template, to every subscribed
URI it matches). Adding or removing resources at run time sends list_changed (kind
"resource", for resources and templates alike).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast

from mcpkit.errors import InvalidParams, ProtocolError
from mcpkit.protocol import Prepared
from mcpkit.protocol.apps import APP_MIME_TYPE, APP_SCHEME
from mcpkit.protocol.snapshot import Subscribed, Unsubscribed
from mcpkit.runtime import Session
from mcpkit.server.context import Context
from mcpkit.server.pagination import Paginator
from mcpkit.server.registry import Registry, deprecated, scope_set
from mcpkit.server.resource_functions import (
    Reader,
    ResourceFunction,
    ResourceNotFound,
    VariableMismatch,
)
from mcpkit.server.resource_items import Resource, ResourceTemplate
from mcpkit.server.resource_subscribers import Subscribers, session_of
from mcpkit.server.resource_wire import ResourceContents, contents_item, listing, not_found
from mcpkit.server.schema import summary
from mcpkit.server.uri_template import UriTemplate, is_template

if TYPE_CHECKING:
    from mcpkit.server.files import FileDirectory

__all__ = [
    "DirectoryOptions",
    "Resource",
    "ResourceContents",
    "ResourceNotFound",
    "ResourceOptions",
    "ResourceRegistry",
    "ResourceTemplate",
    "VariableMismatch",
]

JSONObject = dict[str, Any]
F = TypeVar("F", bound=Callable[..., Any])
logger = logging.getLogger("mcpkit.server")


class ResourceOptions(TypedDict, total=False):
    """The keywords of `@server.resource(uri, ...)` and `server.add_resource(uri, fn_or_content,
    ...)`: `name` (default: the function's name, or the URI's last segment for content),
    `title`, `description` (default: the docstring's summary), `mime_type` (default: implied
    by the return annotation, or by str/bytes content), `size` (bytes; computed for content),
    `annotations` (audience, priority, lastModified), `icons`, `meta` (the definition's
    `_meta`), `replace` (take the place of what is registered at that URI), `scopes` (with
    authorization: what a caller's token must grant to read it)."""

    name: str | None
    title: str | None
    description: str | None
    mime_type: str | None
    size: int | None
    annotations: Any
    icons: Sequence[Any] | None
    meta: Mapping[str, Any] | None
    replace: bool
    scopes: Iterable[str] | None


class DirectoryOptions(TypedDict, total=False):
    """The keywords of `server.add_resource(uri_prefix, Path(root), ...)`: `name`, `title`,
    `description`, `annotations`, `icons`, `meta`, `scopes` as for `ResourceOptions`;
    `include_hidden` (serve dot files), `list_files` (list the files as resources),
    `max_files` (how many to list), `max_bytes` (the largest file read), `refuse_hard_links`
    (see docs/limits.md)."""

    name: str | None
    title: str | None
    description: str | None
    annotations: Any
    icons: Sequence[Any] | None
    meta: Mapping[str, Any] | None
    scopes: Iterable[str] | None
    include_hidden: bool
    list_files: bool
    max_files: int
    max_bytes: int | None
    refuse_hard_links: bool


class _Hiding:
    """`resources.hide_out_of_scope` as read: a bool, which may still be called as the method
    it was (`resources.hide_out_of_scope(True)`, deprecated) to set it."""

    __slots__ = ("_registry",)

    def __init__(self, registry: ResourceRegistry) -> None:
        self._registry = registry

    def __bool__(self) -> bool:
        return self._registry._resources.hide_out_of_scope

    def __eq__(self, other: object) -> bool:
        return bool(self) == other

    def __hash__(self) -> int:
        return hash(bool(self))

    def __repr__(self) -> str:
        return repr(bool(self))

    def __call__(self, hide: bool) -> None:
        deprecated("server.resources.hide_out_of_scope(hide)", "server.hide_out_of_scope = hide")
        self._registry.hide_out_of_scope = hide


# -- the registry ---------------------------------------------------------------------------------


class ResourceRegistry:
    """The server's resources and templates, and the resources/* handlers."""

    def __init__(
        self,
        paginator: Paginator,
        on_change: Callable[[str], None],
        on_updated: Callable[[str, Callable[[str], bool] | None], int] | None = None,
    ) -> None:
        self._paginator = paginator
        self._on_change = on_change
        self._on_updated = on_updated  # (uri, template match or None) -> notifications sent
        self._batching = 0
        self._changed_in_batch = False
        self._resources: Registry[Resource] = Registry("resource", self._changed)
        self._templates: Registry[ResourceTemplate] = Registry("resource", self._changed)
        self._directories: dict[str, FileDirectory] = {}
        self._subscribers = Subscribers()  # handshake-era sessions with resources/subscribe

    def __len__(self) -> int:
        return len(self._resources) + len(self._templates)

    def __contains__(self, uri: object) -> bool:
        """A registered resource URI or URI template."""
        return uri in self._resources or uri in self._templates

    @property
    def resources(self) -> list[Resource]:
        return list(self._resources)

    @property
    def templates(self) -> list[ResourceTemplate]:
        return list(self._templates)

    def capability(self) -> JSONObject:
        return {"subscribe": True, "listChanged": True}

    def handlers(self) -> dict[str, Callable[[Context], Any]]:
        return {
            "resources/list": self.list_resources,
            "resources/templates/list": self.list_templates,
            "resources/read": self.read_resource,
            "resources/subscribe": self.subscribe,
            "resources/unsubscribe": self.unsubscribe,
        }

    # -- registering -----------------------------------------------------------------------------

    def _add(
        self, uri: str | None, source: Any, options: Mapping[str, Any]
    ) -> Resource | ResourceTemplate | FileDirectory:
        """What `server.add_resource` registers: a function (a template when `uri` has
        {variables}), str or bytes content, or the directory a `Path` names (`uri` is then the
        URI prefix, None for the root's own file:// URI).

        Raises TypeError for another source or an option its kind does not take, and what
        the kind raises (ValueError for a bad URI or one already registered, ...).
        """
        if isinstance(source, os.PathLike):
            return self._add_directory(source, uri, **options)
        if uri is None:
            raise TypeError("a resource needs its URI (None is only for a directory's prefix)")
        if isinstance(source, str | bytes):
            if "size" in options:
                raise TypeError("size is computed for str or bytes content; leave it out")
            return self._add_static(uri, source, **options)
        if callable(source):
            return self._add_function(uri, source, **options)
        raise TypeError(
            "add_resource serves a function, str or bytes content, or a directory (a Path), "
            f"not {type(source).__name__}"
        )

    def decorator(self, uri: str, **options: Any) -> Callable[[Any], Any]:
        """Deprecated: `@server.resource(uri, ...)`."""
        deprecated("server.resources.decorator()", "@server.resource()")
        return self._decorate(uri, options)

    def _decorate(self, uri: str, options: Mapping[str, Any]) -> Callable[[F], F]:
        """What `@server.resource(uri, ...)` is: register the decorated function (returned
        unchanged) at `uri`.

        Raises TypeError when `uri` is not a string: a bare `@server.resource` (without the
        URI) would otherwise register nothing and replace the function.
        """
        if not isinstance(uri, str):
            raise TypeError(
                "@server.resource needs the resource's URI: write "
                '@server.resource("scheme://name") (a URI with {variables} makes a template), '
                f"not a bare @server.resource (got {uri!r:.60})"
            )

        def register(fn: F) -> F:
            self._add_function(uri, fn, **options)
            return fn

        return register

    def add_function(
        self, uri: str, fn: Callable[..., Any], **options: Any
    ) -> Resource | ResourceTemplate:
        """Deprecated: `server.add_resource(uri, fn, ...)`."""
        deprecated("server.resources.add_function()", "server.add_resource()")
        return self._add_function(uri, fn, **options)

    def add_static(self, uri: str, content: str | bytes, **options: Any) -> Resource:
        """Deprecated: `server.add_resource(uri, content, ...)`."""
        deprecated("server.resources.add_static()", "server.add_resource()")
        return self._add_static(uri, content, **options)

    def add_directory(
        self, root: str | Path, uri_prefix: str | None = None, **options: Any
    ) -> FileDirectory:
        """Deprecated: `server.add_resource(uri_prefix, Path(root), ...)`."""
        deprecated("server.resources.add_directory()", "server.add_resource(uri, Path(root))")
        return self._add_directory(root, uri_prefix, **options)

    def remove(self, uri: str) -> None:
        """Deprecated: `server.remove_resource(uri)`."""
        deprecated("server.resources.remove()", "server.remove_resource()")
        self._remove(uri)

    def _add_function(
        self,
        uri: str,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Any = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        replace: bool = False,
        scopes: Iterable[str] | None = None,
    ) -> Resource | ResourceTemplate:
        """Serve what `fn` returns at `uri`; a URI with {variables} makes a template.

        `name` defaults to the function's name, `description` to its docstring summary,
        `mime_type` to what the return annotation implies (str, bytes, dict/list).
        Raises ValueError for a malformed template, variables that do not fit the function's
        parameters, bad annotations or icons, or a URI already registered (unless `replace`).
        `scopes`: with authorization, what a caller's token must grant to read it.
        """
        needed = scope_set(scopes)
        function = ResourceFunction(fn, uri, _ui_mime(uri, mime_type))
        definition = listing(
            ("uriTemplate" if function.template is not None else "uri", uri),
            name=name or fn.__name__,
            title=title,
            description=description if description is not None else summary(fn),
            mime_type=function.mime_type,
            size=size,
            annotations=annotations,
            icons=icons,
            meta=meta,
        )
        if function.template is None:
            resource = Resource(uri, definition, function.reader(uri), scopes=needed)
            return self._resources._put(uri, resource, replace=replace)
        template = ResourceTemplate(uri, definition, function.bind, function.choices, needed)
        return self._templates._put(uri, template, replace=replace)

    def _add_static(
        self,
        uri: str,
        content: str | bytes,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Any = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        replace: bool = False,
        scopes: Iterable[str] | None = None,
    ) -> Resource:
        """Serve fixed text (str) or binary (bytes, sent as a base64 blob) at `uri`.

        `name` defaults to the URI's last path segment; `mime_type` to "text/plain" for text
        and "application/octet-stream" for bytes; `size` is the content's length in bytes.
        To change the content later, add it again with `replace=True` and call
        `notify_updated(uri)`. Raises ValueError like `_add_function`, TypeError for content
        that is neither str nor bytes.
        """
        if not isinstance(content, str | bytes | bytearray):
            raise TypeError(f"static content is str or bytes, not {type(content).__name__}")
        if is_template(uri):
            raise ValueError(f"a static resource needs a concrete URI, not a template: {uri}")
        item = contents_item(uri, content, _ui_mime(uri, mime_type))
        data = content.encode() if isinstance(content, str) else content
        definition = listing(
            ("uri", uri),
            name=name or _last_segment(uri),
            title=title,
            description=description,
            mime_type=item["mimeType"],
            size=len(data),
            annotations=annotations,
            icons=icons,
            meta=meta,
        )
        result = {"contents": [item]}
        resource = Resource(uri, definition, lambda ctx: result, result, scope_set(scopes))
        return self._resources._put(uri, resource, replace=replace)

    def _add_directory(
        self,
        root: str | os.PathLike[str],
        uri_prefix: str | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Any = None,
        icons: Sequence[Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        include_hidden: bool = False,
        list_files: bool = True,
        max_files: int = 1000,
        max_bytes: int | None = None,
        refuse_hard_links: bool = False,
        scopes: Iterable[str] | None = None,
    ) -> FileDirectory:
        """Serve the files under `root`, and nothing outside it (see `mcpkit.server.files`).

        URIs are `uri_prefix` + the file's relative path (default prefix: the root's own
        file:// URI); the template `{uri_prefix}{+path}` reads any file there. With
        `list_files`, up to `max_files` files are listed as resources now;
        `directory.refresh()` lists them again. `refuse_hard_links` refuses files with more
        than one hard link (see docs/limits.md). Raises NotADirectoryError / FileNotFoundError
        for a bad root, ValueError for a bad prefix or one already registered.
        """
        from mcpkit.server.files import DEFAULT_MAX_BYTES, FileDirectory

        directory = FileDirectory(
            root,
            uri_prefix,
            include_hidden=include_hidden,
            max_bytes=DEFAULT_MAX_BYTES if max_bytes is None else max_bytes,
            max_files=max_files if list_files else 0,
            refuse_hard_links=refuse_hard_links,
        )
        definition = listing(
            ("uriTemplate", directory.uri_template),
            name=name or directory.root.name or str(directory.root),
            title=title,
            description=description,
            mime_type=None,
            size=None,
            annotations=annotations,
            icons=icons,
            meta=meta,
        )
        template = ResourceTemplate(
            directory.uri_template, definition, directory.bind, scopes=scope_set(scopes)
        )
        with self._batch():
            self._templates._put(directory.uri_template, template)
            self._directories[directory.uri_template] = directory
            directory.on_refresh = lambda: self._list_directory(directory)
            self._list_directory(directory)
        return directory

    def _remove(self, uri: str) -> None:
        """Remove a resource (by URI) or a template or directory (by URI template).

        Raises KeyError when nothing is registered under `uri`.
        """
        if uri in self._resources:
            self._resources._remove(uri)
            return
        with self._batch():
            self._templates._remove(uri)
            directory = self._directories.pop(uri, None)
            if directory is not None:
                directory.on_refresh = None
                for listed in directory.listed:
                    self._resources._remove(listed)
                directory.listed = set()

    def _list_directory(self, directory: FileDirectory) -> None:
        wanted = {entry.uri: entry for entry in directory.scan()}
        template = self._templates.get(directory.uri_template)
        scopes = frozenset() if template is None else template.scopes
        with self._batch():
            for uri in directory.listed - wanted.keys():
                if uri in self._resources:
                    self._resources._remove(uri)
            listed = set()
            for uri, entry in wanted.items():
                current = self._resources.get(uri)
                if current is not None and uri not in directory.listed:
                    continue  # registered by someone else: theirs wins
                definition = {"uri": uri, "name": entry.name, "size": entry.size}
                if entry.mime_type is not None:
                    definition["mimeType"] = entry.mime_type
                try:
                    reader = directory.bind(uri)
                except ProtocolError:  # a link changed since the scan: leave it out
                    reader = None
                if reader is None:
                    continue
                listed.add(uri)
                if current is None or current.definition != definition:
                    listed_file = Resource(uri, definition, reader, scopes=scopes)
                    self._resources._put(uri, listed_file, replace=True)
            directory.listed = listed

    def registry(self, kind: str) -> Registry[Any]:
        """The concrete resources ("resource", by URI) or the templates ("template")."""
        return self._resources if kind == "resource" else self._templates

    def batch(self) -> contextlib.AbstractContextManager[None]:
        """Several changes, one list_changed."""
        return self._batch()

    @contextlib.contextmanager
    def _batch(self) -> Iterator[None]:
        """Several changes, one list_changed."""
        self._batching += 1
        try:
            yield
        finally:
            self._batching -= 1
            if self._batching == 0 and self._changed_in_batch:
                self._changed_in_batch = False
                self._on_change("resource")

    def _changed(self, kind: str) -> None:
        if self._batching:
            self._changed_in_batch = True
        else:
            self._on_change(kind)

    # -- reading ---------------------------------------------------------------------------------

    async def read(self, uri: str, ctx: Context) -> JSONObject:
        """Read one resource (a ReadResourceResult dict), as resources/read would.

        Raises ProtocolError: not found (the revision's code) or invalid params.
        """
        resource = self._resources.get(uri)
        if resource is not None and resource.result is not None:
            return {"contents": [dict(item) for item in resource.result["contents"]]}
        outcome = self._open(uri, ctx)
        return outcome if isinstance(outcome, dict) else await outcome

    def _open(self, uri: str, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        resource = self._resources.get(uri)
        if resource is not None:
            return resource.reader(ctx)
        reader, detail = self._bind(uri)
        if reader is None:
            raise not_found(uri, ctx, detail)
        return reader(ctx)

    def _bind(self, uri: str) -> tuple[Reader | None, str | None]:
        """The template reader for `uri`, or None and why a template that nearly fit did not."""
        detail = None
        for template in self._templates:
            if not uri.startswith(template.prefix):
                continue
            try:
                reader = template.bind(uri)
            except VariableMismatch as mismatch:
                detail = detail or str(mismatch)
                continue
            if reader is not None:
                return reader, None
        return None, detail

    # -- handlers --------------------------------------------------------------------------------

    def list_resources(self, ctx: Context) -> Prepared:
        registry = self._resources
        view, shown = registry.view_for(ctx.principal)
        cursor = ctx.params.get("cursor")
        return self._paginator.page("resources", registry.version, shown, cursor, view)

    def list_templates(self, ctx: Context) -> Prepared:
        registry = self._templates
        view, shown = registry.view_for(ctx.principal)
        cursor = ctx.params.get("cursor")
        return self._paginator.page("resourceTemplates", registry.version, shown, cursor, view)

    @property
    def scoped(self) -> bool:
        """Whether some resource or template needs scopes."""
        return self._resources.scoped or self._templates.scoped

    @property
    def hide_out_of_scope(self) -> bool:
        """Whether lists show a caller only what its token lets it read (as on the tools and
        prompts registries; set it with `server.hide_out_of_scope`)."""
        return cast(bool, _Hiding(self))  # a bool that the old method spelling may still call

    @hide_out_of_scope.setter
    def hide_out_of_scope(self, hide: bool) -> None:
        self._resources.hide_out_of_scope = self._templates.hide_out_of_scope = hide

    def scopes_for(self, uri: str) -> frozenset[str]:
        """The scopes reading `uri` needs: its resource's, or those of the template that
        would serve it (the first that binds, as `resources/read` picks it); none for a URI
        nothing serves (reading it is an error anyway)."""
        resource = self._resources.get(uri)
        if resource is not None:
            return resource.scopes
        if not self._templates.scoped:
            return frozenset()
        for template in self._templates:
            if not uri.startswith(template.prefix):
                continue
            try:
                reader = template.bind(uri)
            except VariableMismatch:
                continue  # `_bind` tries the next template too
            except ProtocolError:
                return template.scopes  # it owns the URI (and refuses it)
            if reader is not None:
                return template.scopes
        return frozenset()

    def read_resource(self, ctx: Context) -> JSONObject | Prepared | Awaitable[JSONObject]:
        uri = _uri_param(ctx, "resources/read")
        resource = self._resources.get(uri)
        if resource is not None and resource.prepared is not None:
            return resource.prepared
        return self._open(uri, ctx)

    def subscribe(self, ctx: Context) -> JSONObject:
        uri = _uri_param(ctx, "resources/subscribe")
        if uri not in self._resources:
            reader, detail = self._bind(uri)
            if reader is None:
                raise not_found(uri, ctx, detail)
        session = session_of(ctx, "resources/subscribe")
        self._subscribers.add(session, uri)
        session.changed(Subscribed(uri), ctx.request_id)
        return {}

    def resubscribe(self, session: Session, uris: Iterable[str]) -> None:
        """A restored session's subscriptions (made on another worker) hold here too."""
        for uri in uris:
            self._subscribers.add(session, uri)

    def unsubscribe(self, ctx: Context) -> JSONObject:
        uri = _uri_param(ctx, "resources/unsubscribe")
        session = session_of(ctx, "resources/unsubscribe")
        change = Unsubscribed(uri)
        session.state.apply(change)
        session.changed(change, ctx.request_id)
        return {}

    def notify_updated(self, uri: str) -> int:
        """Tell the clients subscribed to `uri` that it changed (notifications/resources/updated).

        `uri` may be a URI template: each subscribed URI it matches is notified. Only clients
        that subscribed (resources/subscribe, or a 2026-07-28 subscriptions/listen naming the
        URI) hear of it. Call from the server's event loop. Returns the number of
        notifications sent.
        """
        template = UriTemplate(uri) if is_template(uri) else None
        sent = 0
        if self._on_updated is not None:  # 2026-07-28 subscriptions/listen streams
            match = None if template is None else (lambda s: template.match(s) is not None)
            sent += self._on_updated(uri, match)
        sent += self._subscribers.notify(uri, template)
        return sent

    # -- completion (automatic choices for Literal/Enum template variables) ----------------------

    def argument_choices(self, name: str, argument: str) -> Sequence[str] | None:
        template = self._templates.get(name)
        return None if template is None else template.choices.get(argument)

    def choice_count(self) -> int:
        return sum(len(template.choices) for template in self._templates)


def _uri_param(ctx: Context, method: str) -> str:
    uri = ctx.params.get("uri")
    if type(uri) is not str:
        raise InvalidParams(f"{method} needs a string 'uri'")
    return uri


def _last_segment(uri: str) -> str:
    path = uri.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    segments = [s for s in path.split("/") if s]
    return segments[-1] if segments else uri


def _ui_mime(uri: str, mime_type: str | None) -> str | None:
    """MCP Apps reserves `ui://` for views: such a resource is served as the app MIME type,
    whichever way it is registered. Raises ValueError for another explicit type."""
    if not uri.startswith(APP_SCHEME):
        return mime_type
    if mime_type not in (None, APP_MIME_TYPE):
        raise ValueError(
            f"{uri}: ui:// resources are MCP Apps views, served as {APP_MIME_TYPE!r}, "
            f"not {mime_type!r} (see server.add_app)"
        )
    return APP_MIME_TYPE
