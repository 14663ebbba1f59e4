"""completion/complete for prompt arguments and resource-template variables.

How this works: a provider is registered for a prompt (`"ref/prompt", name`) or a resource
template (`"ref/resource", uri_template`), for all of its arguments or for one:

    @server.completion("ref/prompt", "review")
    def complete_review(argument: str, value: str, context: dict[str, str]) -> list[str]:
        if argument == "language":
            return [lang for lang in LANGUAGES if lang.startswith(value)]
        return []

It is called with the argument's name, the partial value typed so far and the arguments
already resolved (the request's `context.arguments`, 2025-06-18 on; `{}` when absent); a
parameter annotated `Context` also receives the request context. Sync or async. It returns
values ranked best first: a list (any iterable) of strings, a `Completion` (to state `total`
or `has_more` itself), a CompleteResult `completion` dict, or None to fall back to automatic
completion.

Automatic completion: an argument whose type is a closed set (Literal, Enum, bool) completes
to its allowed values that start with the typed value (case-insensitive), no provider needed.

The answer holds at most 100 values; `total` counts them all and `hasMore` says when some
were left out. A `ref/prompt` naming no prompt (and no provider) is -32602, as the spec names
for an invalid prompt name; a `ref/resource` without a provider is an empty completion (the
URI may name a plain resource, which has nothing to complete).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mcpkit.errors import InvalidParams
from mcpkit.server.context import Context, context_parameter
from mcpkit.server.hints import caller_namespace, resolve_hints
from mcpkit.server.registry import deprecated

JSONObject = dict[str, Any]
MAX_VALUES = 100
REF_TYPES = ("ref/prompt", "ref/resource")

__all__ = ["MAX_VALUES", "ChoiceSource", "Completion", "Completions"]


@dataclass(frozen=True, slots=True)
class Completion:
    """A provider's answer when it knows more than the values: `total` matches in all (may
    exceed len(values)), `has_more` when there are values beyond these."""

    values: Sequence[str]
    total: int | None = None
    has_more: bool = False


class ChoiceSource(Protocol):
    """A registry whose items' arguments may have a closed set of values (prompts, templates)."""

    def __contains__(self, name: object) -> bool: ...

    def argument_choices(self, name: str, argument: str) -> Sequence[str] | None: ...

    def choice_count(self) -> int: ...


# What answers a completion: (argument, value, context, ctx) -> choices (or an awaitable).
Provider = Callable[[str, str, dict[str, str], Context], Any]


class Completer:
    """One registered completion function."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        hints = resolve_hints(fn, caller_namespace(), kind="completion provider")
        self.context_parameter = context_parameter(fn, hints)
        self.is_async = inspect.iscoroutinefunction(fn)

    def __call__(
        self, argument: str, value: str, context: dict[str, str], ctx: Context
    ) -> Any | Awaitable[Any]:
        if self.context_parameter is None:
            return self.fn(argument, value, context)
        return self.fn(argument, value, context, **{self.context_parameter: ctx})


class Completions:
    """Completion providers, automatic choices, and the completion/complete handler.

    `prompts` and `resources` are where automatic choices come from (and how an unknown prompt
    is told apart).
    """

    def __init__(self, prompts: ChoiceSource, resources: ChoiceSource) -> None:
        self._providers: dict[tuple[str, str, str | None], Provider] = {}
        self._prompts = prompts
        self._resources = resources

    def __len__(self) -> int:
        """Providers plus arguments with automatic choices (the server declares the
        capability when this is not zero)."""
        sources = (self._prompts, self._resources)
        return len(self._providers) + sum(_choice_count(s) for s in sources)

    def handlers(self) -> dict[str, Callable[[Context], Any]]:
        return {"completion/complete": self.complete}

    def decorator(
        self, ref_type: str, name: str, argument: str | None = None
    ) -> Callable[[Any], Any]:
        """Deprecated: `@server.completion(ref_type, name, argument)`."""
        deprecated("server.completions.decorator()", "@server.completion()")

        def register(fn: Any) -> Any:
            self._add(ref_type, name, fn, argument)
            return fn

        return register

    def add(
        self, ref_type: str, name: str, fn: Callable[..., Any], *, argument: str | None = None
    ) -> None:
        """Deprecated: `server.add_completion(ref_type, name, fn, argument=...)`."""
        deprecated("server.completions.add()", "server.add_completion()")
        self._add(ref_type, name, fn, argument)

    def _add(self, ref_type: str, name: str, fn: Callable[..., Any], argument: str | None) -> None:
        """Register `fn` as the completion provider for `name` (a prompt name or a URI
        template), for one `argument` or all of them.

        Raises ValueError for an unknown `ref_type` or a provider already registered.
        """
        if ref_type not in REF_TYPES:
            raise ValueError(f"ref_type must be 'ref/prompt' or 'ref/resource', not {ref_type!r}")
        key = (ref_type, name, argument)
        if key in self._providers:
            raise ValueError(f"a completion provider for {_describe(key)} is already registered")
        self._providers[key] = Completer(fn)

    def providers(self) -> list[tuple[tuple[str, str, str | None], Provider]]:
        """Every provider by (ref_type, name, argument)."""
        return list(self._providers.items())

    def put(self, key: tuple[str, str, str | None], provider: Provider) -> None:
        """Register a provider already shaped (argument, value, context, ctx) -> answer."""
        self._providers[key] = provider

    def discard(self, key: tuple[str, str, str | None]) -> None:
        self._providers.pop(key, None)

    def remove(self, ref_type: str, name: str, argument: str | None = None) -> None:
        """Deprecated: `server.remove_completion(ref_type, name, argument)`."""
        deprecated("server.completions.remove()", "server.remove_completion()")
        self._remove(ref_type, name, argument)

    def _remove(self, ref_type: str, name: str, argument: str | None) -> None:
        """Raises KeyError when no such provider is registered."""
        key = (ref_type, name, argument)
        if self._providers.pop(key, None) is None:
            raise KeyError(f"no completion provider for {_describe(key)}")

    # -- the request -------------------------------------------------------------------------

    def complete(self, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        ref_type, name, argument, value, context = _read_params(ctx.params)
        provider = self._providers.get((ref_type, name, argument)) or self._providers.get(
            (ref_type, name, None)
        )
        source = self._prompts if ref_type == "ref/prompt" else self._resources
        if provider is None and ref_type == "ref/prompt" and name not in source:
            raise InvalidParams(f"Unknown prompt: {name}", {"name": name})
        choices = _argument_choices(source, name, argument)
        if provider is None:
            return answer(_matching(choices, value))
        outcome = provider(argument, value, context, ctx)
        if inspect.isawaitable(outcome):
            return _answer_later(outcome, choices, value)
        return answer(_matching(choices, value) if outcome is None else outcome)


def _read_params(params: JSONObject) -> tuple[str, str, str, str, dict[str, str]]:
    """(ref type, prompt name or URI, argument name, value, resolved arguments), checked."""
    ref = params.get("ref")
    ref_type = ref.get("type") if isinstance(ref, dict) else None
    if ref_type not in REF_TYPES:
        raise InvalidParams("completion/complete ref must be a ref/prompt or ref/resource")
    name = ref.get("name" if ref_type == "ref/prompt" else "uri")  # type: ignore[union-attr]
    if type(name) is not str:
        field = "name" if ref_type == "ref/prompt" else "uri"
        raise InvalidParams(f"completion/complete {ref_type} needs a string {field!r}")
    argument = params.get("argument")
    if (
        not isinstance(argument, dict)
        or type(argument.get("name")) is not str
        or type(argument.get("value")) is not str
    ):
        raise InvalidParams("completion/complete argument must have a string name and value")
    context = params.get("context")
    resolved = context.get("arguments") if isinstance(context, dict) else None
    if resolved is None:
        resolved = {}
    elif not isinstance(resolved, dict) or any(type(v) is not str for v in resolved.values()):
        raise InvalidParams("completion/complete context.arguments must map names to strings")
    return ref_type, name, argument["name"], argument["value"], resolved


async def _answer_later(
    outcome: Awaitable[Any], choices: Sequence[str] | None, value: str
) -> JSONObject:
    result = await outcome
    return answer(_matching(choices, value) if result is None else result)


def answer(result: Any) -> JSONObject:
    """A provider's result -> CompleteResult dict, at most MAX_VALUES values.

    Raises TypeError for a result that is not values.
    """
    if isinstance(result, Completion):
        values, total, has_more = list(result.values), result.total, result.has_more
    elif isinstance(result, dict):
        result = result.get("completion", result)  # a whole CompleteResult is fine too
        values = list(result.get("values", ()))
        total, has_more = result.get("total"), bool(result.get("hasMore", False))
    elif isinstance(result, Iterable) and not isinstance(result, str | bytes):
        values, has_more = list(result), False
        total = len(values)
    else:
        raise TypeError(f"a completion provider returned {type(result).__name__}, not values")
    if any(type(v) is not str for v in values):
        values = [v if isinstance(v, str) else str(v) for v in values]
    if len(values) > MAX_VALUES:
        total = max(total or 0, len(values))
        values, has_more = values[:MAX_VALUES], True
    completion: JSONObject = {"values": values}
    if total is not None:
        completion["total"] = total
    completion["hasMore"] = has_more
    return {"completion": completion}


def _matching(choices: Sequence[str] | None, value: str) -> list[str]:
    if not choices:
        return []
    prefix = value.casefold()
    return [choice for choice in choices if choice.casefold().startswith(prefix)]


# A registry offers choices by implementing ChoiceSource; one that does not (yet) has none.


def _argument_choices(source: Any, name: str, argument: str) -> Sequence[str] | None:
    lookup = getattr(source, "argument_choices", None)
    return None if lookup is None else lookup(name, argument)


def _choice_count(source: Any) -> int:
    count = getattr(source, "choice_count", None)
    return 0 if count is None else int(count())


def _describe(key: tuple[str, str, str | None]) -> str:
    ref_type, name, argument = key
    what = f"{ref_type} {name!r}"
    return what if argument is None else f"{what}, argument {argument!r}"
