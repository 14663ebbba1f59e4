"""Prompts: typed arguments in, messages out.

How this works: `Prompt` reads a function once, at registration. Each parameter becomes a
PromptArgument, required when it has no default, with a converter from the wire's string to
the annotated type (see `prompt_arguments`); a parameter annotated `Context` receives the
request context instead. `prompts/get` converts the arguments, calls the function (sync or
async) and turns what it returned into a GetPromptResult:

- a string: one user message with that text;
- a message: `UserMessage(...)` / `AssistantMessage(...)`, or a dict in wire form
  (`{"role": ..., "content": {...}}`, where content may also be a plain string);
- a content block (dict with "type", a helper with `to_content()`, or a protocol model):
  one user message holding it;
- a list (or tuple) of any of those;
- a full GetPromptResult dict (has "messages"): passed through, with the prompt's
  description added when it has none.

Errors: an unknown prompt, a missing required argument or an argument that does not convert
answer -32602 naming it. A prompt function may raise `InvalidParams` itself; any other
exception is an internal error (-32603) and its details stay in the server's log.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, TypedDict, TypeVar, overload

from mcpkit.errors import InvalidParams
from mcpkit.server.context import Context
from mcpkit.server.hints import caller_namespace, resolve_hints
from mcpkit.server.pagination import Paginator
from mcpkit.server.prompt_arguments import Argument, arguments_of
from mcpkit.server.registry import Registry, deprecated, scope_set
from mcpkit.server.schema import summary

JSONObject = dict[str, Any]
F = TypeVar("F", bound=Callable[..., Any])
Role = Literal["user", "assistant"]

__all__ = [
    "AssistantMessage",
    "Message",
    "MessageContent",
    "Prompt",
    "PromptOptions",
    "PromptRegistry",
    "UserMessage",
]


# -- messages ------------------------------------------------------------------------------


class _ToContent(Protocol):
    """A content helper: the tools' Image, Audio, File, ResourceLink."""

    def to_content(self) -> dict[str, Any]: ...


class _ToWire(Protocol):
    """A protocol content model (`mcpkit.types.ImageContent`, ...)."""

    def to_wire(self) -> dict[str, Any]: ...


class _PydanticModel(Protocol):
    def model_dump(self, *, mode: str, by_alias: bool, exclude_none: bool) -> dict[str, Any]: ...


# What a prompt message may hold (see `Message`).
MessageContent: TypeAlias = str | dict[str, Any] | _ToContent | _ToWire | _PydanticModel


@dataclass(frozen=True, slots=True)
class Message:
    """One prompt message. `content` is a string (text), a content block dict in wire form
    (`{"type": "image", "data": ..., "mimeType": ...}`, audio, resource, resource_link), a
    content helper (anything with `to_content()`, like the tools' Image and Audio), or a
    protocol content model (`mcpkit.types.ImageContent`, ...)."""

    role: Role
    content: MessageContent

    def to_wire(self) -> JSONObject:
        return {"role": self.role, "content": content_block(self.content)}


class UserMessage(Message):
    """A message from the user: `UserMessage("Review this code")`."""

    __slots__ = ()

    def __init__(self, content: MessageContent) -> None:
        super().__init__("user", content)


class AssistantMessage(Message):
    """A message from the assistant (e.g. to prime the model's answer)."""

    __slots__ = ()

    def __init__(self, content: MessageContent) -> None:
        super().__init__("assistant", content)


def content_block(content: Any) -> JSONObject:
    """A content block in wire form. Raises TypeError for what cannot be one."""
    if isinstance(content, str):
        return {"type": "text", "text": content}
    to_content = getattr(content, "to_content", None)  # Image, Audio, File, ResourceLink helpers
    content = to_content() if callable(to_content) else _wire(content)
    if isinstance(content, dict) and isinstance(content.get("type"), str):
        return content
    raise TypeError(f"not a content block: {content!r:.80}")


def prompt_result(value: Any, description: str | None) -> JSONObject:
    """What a prompt function returned -> a GetPromptResult dict (see the module docstring)."""
    value = _wire(value)
    if isinstance(value, dict) and "messages" in value:
        if description is None or "description" in value:
            return value
        return {"description": description, **value}
    if value is None:
        items: Sequence[Any] = ()
    elif isinstance(value, list | tuple):
        items = value
    else:
        items = (value,)
    result: JSONObject = {"messages": [_message(item) for item in items]}
    if description is not None:
        result["description"] = description
    return result


def _message(item: Any) -> JSONObject:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, Message):
        return item.to_wire()
    item = _wire(item)
    if isinstance(item, dict) and "role" in item:
        if item["role"] not in ("user", "assistant"):
            raise TypeError(
                f"a prompt message's role is 'user' or 'assistant', not {item['role']!r}"
            )
        return {**item, "content": content_block(item.get("content"))}
    return {"role": "user", "content": content_block(item)}


def _wire(value: Any) -> Any:
    """Protocol models (anything with `to_wire()` or pydantic's `model_dump()`) -> dicts."""
    to_wire = getattr(value, "to_wire", None)
    if callable(to_wire) and not isinstance(value, type):
        return to_wire()
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json", by_alias=True, exclude_none=True)
    return value


# -- prompts -------------------------------------------------------------------------------


class PromptOptions(TypedDict, total=False):
    """The keywords of `@server.prompt(...)`, `server.add_prompt(fn, ...)` and
    `Prompt(fn, ...)` (see `Prompt`); `Prompt.__init__` spells the same (a test keeps them
    equal)."""

    name: str | None
    title: str | None
    description: str | None
    icons: list[JSONObject] | None
    meta: JSONObject | None
    scopes: Iterable[str] | None


class Prompt:
    """One registered prompt.

    Options: `name` (default: the function's name), `title`, `description` (default: the
    docstring's first paragraph), `icons` (a list of Icon dicts), `meta` (sent as `_meta`),
    `scopes` (with authorization: what a caller's token must grant to get it).

    Raises TypeError for an annotation that does not resolve (see `mcpkit.server.hints`).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[JSONObject] | None = None,
        meta: JSONObject | None = None,
        scopes: Iterable[str] | None = None,
    ) -> None:
        self.fn = fn
        self.scopes = scope_set(scopes)
        self.name = name or fn.__name__
        hints = resolve_hints(fn, caller_namespace(), kind="prompt")
        self.context_parameter, self.arguments = arguments_of(fn, hints)
        self.is_async = inspect.iscoroutinefunction(fn)
        self.description = description if description is not None else summary(fn)
        definition: JSONObject = {"name": self.name}
        if title is not None:
            definition["title"] = title
        if self.description is not None:
            definition["description"] = self.description
        definition["arguments"] = [argument.definition for argument in self.arguments]
        if icons is not None:
            definition["icons"] = icons
        if meta is not None:
            definition["_meta"] = meta
        self.definition = definition

    def choices(self, argument: str) -> tuple[str, ...] | None:
        """The allowed values of a Literal/Enum/bool argument (None: an open set)."""
        for known in self.arguments:
            if known.name == argument:
                return known.choices
        return None

    def render(self, arguments: JSONObject, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        """Convert the arguments and run. Raises InvalidParams naming a missing or bad argument."""
        values = self.bind(arguments)
        if self.context_parameter is not None:
            values[self.context_parameter] = ctx
        if self.is_async:
            return self._render_async(self.fn(**values))
        value = self.fn(**values)
        if inspect.isawaitable(value):
            return self._render_async(value)
        return prompt_result(value, self.description)

    async def _render_async(self, pending: Awaitable[Any]) -> JSONObject:
        return prompt_result(await pending, self.description)

    def bind(self, arguments: JSONObject) -> JSONObject:
        """Wire arguments (strings) -> keyword arguments for the function."""
        missing = [a.name for a in self.arguments if a.required and a.name not in arguments]
        if missing:
            quoted = ", ".join(repr(name) for name in missing)
            plural = "s" if len(missing) > 1 else ""
            raise InvalidParams(
                f"Missing required argument{plural} {quoted} for prompt {self.name!r}",
                {"prompt": self.name, "missing": missing},
            )
        values: JSONObject = {}
        for argument in self.arguments:
            if argument.name in arguments:
                values[argument.name] = self._convert(argument, arguments[argument.name])
        return values

    def _convert(self, argument: Argument, text: Any) -> Any:
        expected = "a string"
        if type(text) is str:
            try:
                return argument.converter.convert(text)
            except ValueError:
                expected = argument.converter.expected
        raise InvalidParams(
            f"Invalid value for argument {argument.name!r} of prompt {self.name!r}: "
            f"expected {expected}",
            {"prompt": self.name, "argument": argument.name, "expected": expected},
        )


class PromptRegistry(Registry[Prompt]):
    """The server's prompts and the prompts/list and prompts/get handlers."""

    def __init__(self, paginator: Paginator, on_change: Callable[[str], None]) -> None:
        super().__init__("prompt", on_change)
        self._paginator = paginator

    def capability(self) -> JSONObject:
        return {"listChanged": True}

    def handlers(self) -> dict[str, Callable[[Context], Any]]:
        return {"prompts/list": self.list_prompts, "prompts/get": self.get_prompt}

    @overload
    def decorator(self, name: F, /) -> F: ...

    @overload
    def decorator(self, name: str | None = None, **options: Any) -> Callable[[F], F]: ...

    def decorator(self, name: str | F | None = None, **options: Any) -> F | Callable[[F], F]:
        """Deprecated: `@server.prompt` or `@server.prompt(...)`."""
        deprecated("server.prompts.decorator", "@server.prompt")
        if callable(name):  # used bare: `name` is the function itself
            prompt = Prompt(name, **options)
            self._put(prompt.name, prompt)
            return name

        def register(fn: F) -> F:
            prompt = Prompt(fn, name=name, **options)
            self._put(prompt.name, prompt)
            return fn

        return register

    def add(self, fn: Callable[..., Any], **options: Any) -> Prompt:
        """Deprecated: `server.add_prompt(fn, ...)`."""
        deprecated("server.prompts.add()", "server.add_prompt()")
        prompt = Prompt(fn, **options)
        return self._put(prompt.name, prompt)

    def argument_choices(self, name: str, argument: str) -> tuple[str, ...] | None:
        """Allowed values of one prompt argument, for completion/complete."""
        prompt = self.get(name)
        return None if prompt is None else prompt.choices(argument)

    def choice_count(self) -> int:
        """How many prompt arguments have a closed set of values (completable without help)."""
        return sum(1 for p in self for a in p.arguments if a.choices is not None)

    def list_prompts(self, ctx: Context) -> Any:
        cursor = ctx.params.get("cursor")
        view, shown = self.view_for(ctx.principal)
        return self._paginator.page("prompts", self.version, shown, cursor, view)

    def get_prompt(self, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        params = ctx.params
        name = params.get("name")
        prompt = self.get(name) if type(name) is str else None
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {name}", {"name": name})
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise InvalidParams("prompts/get arguments must be an object of strings")
        return prompt.render(arguments, ctx)
