"""One server made of others: `server.mount(other, prefix="weather")` and
`server.import_server(other, prefix="weather")`.

A mounted server's tools, prompts, resources and templates are mirrored into the parent's own
registries under the prefix: tools and prompts as `weather_forecast`, resource URIs with the
prefix as their first segment (`data://note` as `data://weather/note`, a template
`notes://{name}` as `notes://weather/{name}`), so everything the parent does with its own
items (listing, pagination, scopes, completion, subscriptions, tasks) it does with these. A
mirror runs the mounted server's code with a `Context` whose `server` is the mounted one (its
lifespan state, its logger), talking to the parent's client (progress, logging, sampling,
elicitation reach the client that called).

`mount` is live: what the mounted server registers or removes later is mirrored at once (the
parent's clients get list_changed), its `notify_updated(uri)` reaches the parent's
subscribers of the prefixed URI, and its logger's records reach the parent's clients.
`import_server` mirrors once and follows nothing. In both, the mounted server's lifespan runs
inside the parent's.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.server.apps import relinked
from mcpkit.server.completion import Completions
from mcpkit.server.context import Context, ServerView
from mcpkit.server.prompts import Prompt, PromptRegistry
from mcpkit.server.resource_items import Resource, ResourceTemplate
from mcpkit.server.resources import ResourceRegistry
from mcpkit.server.tools import Tool, ToolRegistry, check_tool_name

if TYPE_CHECKING:
    from mcpkit.server.resource_functions import Reader

JSONObject = dict[str, Any]
SEPARATOR = "_"


class Composable(ServerView, Protocol):
    """What a mount uses of the servers it joins (an `mcpkit.Server`)."""

    name: str
    tools: ToolRegistry
    prompts: PromptRegistry
    resources: ResourceRegistry
    completions: Completions

    def running(self) -> contextlib.AbstractAsyncContextManager[None]: ...

    def _log_sessions(self) -> list[Any]: ...


class Mount:
    """`child` mirrored into `parent` under `prefix` (None: names and URIs unchanged).

    Raises ValueError when a prefixed name is not a valid tool name or is taken in the parent.
    """

    def __init__(
        self, parent: Composable, child: Composable, prefix: str | None, *, live: bool
    ) -> None:
        if child is parent:
            raise ValueError("a server cannot mount itself")
        if prefix is not None and (not prefix or "/" in prefix or ":" in prefix):
            raise ValueError(
                f"a mount prefix is a non-empty name without '/' or ':', not {prefix!r}"
            )
        self.parent = parent
        self.child = child
        self.prefix = prefix
        self.live = live
        # What is mirrored now, by the parent's name: the child's item it mirrors.
        self._tools: dict[str, Tool] = {}
        self._prompts: dict[str, Prompt] = {}
        self._resources: dict[str, Resource] = {}
        self._templates: dict[str, ResourceTemplate] = {}
        self._completions: dict[tuple[str, str, str | None], Any] = {}

    # -- names -------------------------------------------------------------------------------

    def name(self, name: str) -> str:
        return name if self.prefix is None else f"{self.prefix}{SEPARATOR}{name}"

    def uri(self, uri: str) -> str:
        """`scheme://rest` as `scheme://prefix/rest` (`scheme:rest` as `scheme:prefix/rest`)."""
        if self.prefix is None:
            return uri
        scheme, colon, rest = uri.partition(":")
        if not colon:
            return f"{self.prefix}/{uri}"
        if rest.startswith("//"):
            return f"{scheme}://{self.prefix}/{rest[2:]}"
        return f"{scheme}:{self.prefix}/{rest}"

    def original_uri(self, uri: str) -> str | None:
        """The mounted server's URI for a prefixed one; None when it is not one of ours."""
        if self.prefix is None:
            return uri
        scheme, colon, rest = uri.partition(":")
        mark = self.prefix + "/"
        if not colon:
            return uri[len(mark) :] if uri.startswith(mark) else None
        if rest.startswith("//" + mark):
            return f"{scheme}://{rest[2 + len(mark) :]}"
        if rest.startswith(mark):
            return f"{scheme}:{rest[len(mark) :]}"
        return None

    # -- mirroring ---------------------------------------------------------------------------

    def sync(self, kind: str | None = None) -> None:
        """Mirror what the mounted server has now (one kind: "tool", "prompt", "resource")."""
        if kind in (None, "tool"):
            wanted = {self.name(tool.name): tool for tool in self.child.tools}
            for name in wanted:
                check_tool_name(name)
            self._mirror(self.parent.tools, self._tools, wanted, self._tool)
        if kind in (None, "prompt"):
            wanted_prompts = {self.name(p.name): p for p in self.child.prompts}
            self._mirror(self.parent.prompts, self._prompts, wanted_prompts, self._prompt)
        if kind in (None, "resource"):
            resources = self.parent.resources
            with resources.batch():
                wanted_resources = {self.uri(r.uri): r for r in self.child.resources.resources}
                self._mirror(
                    resources.registry("resource"),
                    self._resources,
                    wanted_resources,
                    self._resource,
                )
                wanted_templates = {
                    self.uri(t.uri_template): t for t in self.child.resources.templates
                }
                self._mirror(
                    resources.registry("template"),
                    self._templates,
                    wanted_templates,
                    self._template,
                )
        if kind in (None, "prompt", "resource", "completion"):
            self._sync_completions()

    def _mirror(
        self,
        registry: Any,
        mirrored: dict[str, Any],
        wanted: dict[str, Any],
        make: Callable[[str, Any], Any],
    ) -> None:
        """Bring `registry` to `wanted` for what this mount put there; one change at most."""
        gone = [name for name, source in mirrored.items() if wanted.get(name) is not source]
        added = {
            name: source for name, source in wanted.items() if mirrored.get(name) is not source
        }
        for name in added:
            if name in registry and name not in mirrored:
                raise ValueError(
                    f"mounting {self.child.name!r}: a {registry.kind} named {name!r} is "
                    f"already registered on {self.parent.name!r}"
                )
        if not gone and not added:
            return
        registry.apply(gone, {name: make(name, source) for name, source in added.items()})
        for name in gone:
            del mirrored[name]
        mirrored.update(added)

    def _tool(self, name: str, source: Tool) -> Tool:
        tool = MountedTool(source, name, self.child)
        tool.definition = relinked(tool.definition, self.uri)  # its MCP Apps view moved too
        return tool

    def _prompt(self, name: str, source: Prompt) -> Prompt:
        return MountedPrompt(source, name, self.child)

    def _resource(self, uri: str, source: Resource) -> Resource:
        definition = {**source.definition, "uri": uri}
        result = None if source.result is None else self._contents(source.result)
        if getattr(self.child, "_chain", None) is not None:
            result = None  # read through the reader, so the mounted server's middleware runs
        reader = self._reader(source.reader)
        return Resource(uri, definition, reader, result, source.scopes)

    def _template(self, uri_template: str, source: ResourceTemplate) -> ResourceTemplate:
        definition = {**source.definition, "uriTemplate": uri_template}

        def bind(uri: str) -> Reader | None:
            original = self.original_uri(uri)
            found = None if original is None else source.bind(original)
            return None if found is None else self._reader(found)

        return ResourceTemplate(uri_template, definition, bind, source.choices, source.scopes)

    def _reader(self, read: Reader) -> Reader:
        def serve(params: JSONObject, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
            outcome = read(ctx)
            if inspect.isawaitable(outcome):
                return self._contents_later(outcome)
            return self._contents(outcome)

        def reader(ctx: Context) -> JSONObject | Awaitable[JSONObject]:
            inner = rebound(ctx, self.child)
            chain = getattr(self.child, "_chain", None)
            if chain is None:
                return serve({}, inner)
            original = self.original_uri(str(ctx.params.get("uri")))
            params = {**ctx.params, "uri": original}
            return chain.around(self.child, inner, "resources/read", params, serve)  # type: ignore[no-any-return]

        return reader

    async def _contents_later(self, outcome: Awaitable[JSONObject]) -> JSONObject:
        return self._contents(await outcome)

    def _contents(self, result: JSONObject) -> JSONObject:
        """A read result with the contents' URIs as the parent lists them (so they round-trip)."""
        contents = result.get("contents")
        if type(contents) is not list:
            return result
        return {
            **result,
            "contents": [
                {**item, "uri": self.uri(item["uri"])}
                if type(item) is dict and type(item.get("uri")) is str
                else item
                for item in contents
            ],
        }

    def _sync_completions(self) -> None:
        ours = self.parent.completions
        wanted = {}
        for (ref_type, name, argument), completer in self.child.completions.providers():
            mirrored = self.name(name) if ref_type == "ref/prompt" else self.uri(name)
            wanted[(ref_type, mirrored, argument)] = completer
        gone = [key for key, source in self._completions.items() if wanted.get(key) is not source]
        added = {k: c for k, c in wanted.items() if self._completions.get(k) is not c}
        for key in gone:
            ours.discard(key)
            del self._completions[key]
        for key, completer in added.items():
            ours.put(key, _completer_in(completer, self.child))
            self._completions[key] = completer

    # -- what the mounted server does later --------------------------------------------------

    def resource_updated(self, uri: str) -> None:
        self.parent.resources.notify_updated(self.uri(uri))


class MountedTool(Tool):
    """A mounted server's tool under the parent's name (a copy, not a new registration): it
    runs the source's code with a Context of the mounted server."""

    def __init__(self, source: Tool, name: str, server: Composable) -> None:
        self.__dict__.update(source.__dict__)  # a copy: the source's schema, options, function
        self.name = name
        self.definition = {**source.definition, "name": name}
        self.source = source
        self.mounted_server = server

    def call(self, arguments: JSONObject, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        return _served(self.mounted_server, "tools/call", self.source.name, arguments, ctx,
                       run=self.source.call)  # fmt: skip


class MountedPrompt(Prompt):
    """A mounted server's prompt under the parent's name (see `MountedTool`)."""

    def __init__(self, source: Prompt, name: str, server: Composable) -> None:
        self.__dict__.update(source.__dict__)
        self.name = name
        self.definition = {**source.definition, "name": name}
        self.source = source
        self.mounted_server = server

    def render(self, arguments: JSONObject, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        return _served(self.mounted_server, "prompts/get", self.source.name, arguments, ctx,
                       run=self.source.render)  # fmt: skip


def _served(
    server: Composable, method: str, name: str, arguments: JSONObject, ctx: Context, *,
    run: Callable[[JSONObject, Context], JSONObject | Awaitable[JSONObject]],
) -> JSONObject | Awaitable[JSONObject]:  # fmt: skip
    """Run a mounted tool or prompt, inside the mounted server's own middleware if it has
    any: it sees the request by its own name (unprefixed), with its own Context."""
    inner = rebound(ctx, server)
    chain = getattr(server, "_chain", None)
    if chain is None:
        return run(arguments, inner)
    params = {**ctx.params, "name": name, "arguments": arguments}

    def serve(params: JSONObject, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        given = params.get("arguments")
        return run(given if type(given) is dict else {}, ctx)

    return chain.around(server, inner, method, params, serve)  # type: ignore[no-any-return]


def rebound(ctx: Context, server: Composable) -> Context:
    """The same request, served by `server` (a mounted server): same client, same round."""
    other = Context(server, ctx.peer, ctx.request, ctx.round)
    other.task = ctx.task
    other.task_switch = ctx.task_switch
    return other


def _completer_in(completer: Any, server: Composable) -> Any:
    def complete(argument: str, value: str, context: dict[str, str], ctx: Context) -> Any:
        return completer(argument, value, context, rebound(ctx, server))

    return complete
