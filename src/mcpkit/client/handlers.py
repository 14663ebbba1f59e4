"""What the client answers when the server asks: sampling, elicitation and roots.

Each feature is offered (declared as a client capability at initialize) only when the user
gives the `Client` something to answer with. A request for a feature that was not declared
never reaches this module: the protocol core answers it with -32601.

Handlers receive typed params (`CreateMessageRequestParams`, `ElicitRequestFormParams` /
`ElicitRequestURLParams`) and return a result model or its wire dict. What they return is
checked before it is sent — an elicitation answer against the schema the server asked for, a
sampling result against the result type — so a mistake in a handler reaches the server as an
error answer (and is logged), never as a malformed result. A handler may raise
`ProtocolError(code, message)` to answer with that error (for example -1, "User rejected
sampling request").
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from mcpkit.client._jsonschema import schema_errors
from mcpkit.errors import INTERNAL_ERROR, InvalidParams, ProtocolError

if TYPE_CHECKING:
    from mcpkit.protocol import RequestReceived
    from mcpkit.runtime import Peer
    from mcpkit.types import (
        CreateMessageRequestParams,
        CreateMessageResult,
        ElicitRequestFormParams,
        ElicitRequestURLParams,
        ElicitResult,
        Root,
    )

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.client")

SamplingHandler: TypeAlias = Callable[
    ["CreateMessageRequestParams"],
    "Awaitable[CreateMessageResult | JSONObject] | CreateMessageResult | JSONObject",
]
ElicitationHandler: TypeAlias = Callable[
    ["ElicitRequestFormParams | ElicitRequestURLParams"],
    "Awaitable[ElicitResult | JSONObject] | ElicitResult | JSONObject",
]
RootLike: TypeAlias = "Root | JSONObject | str | os.PathLike[str]"
RootsSource: TypeAlias = (
    "Iterable[RootLike] | Callable[[], Iterable[RootLike] | Awaitable[Iterable[RootLike]]]"
)


@dataclass(frozen=True, slots=True)
class Sampling:
    """Answer `sampling/createMessage` with `handler` (your LLM, with the user in the loop).

    `tools`: declare `sampling.tools`, so requests may carry `tools`/`toolChoice` (2025-11-25);
    without it such requests are refused with -32602, as the spec requires. `context`: declare
    `sampling.context` (`includeContext` other than "none"; soft-deprecated by the spec).
    """

    handler: SamplingHandler
    tools: bool = False
    context: bool = False

    def capability(self) -> JSONObject:
        declared: JSONObject = {}
        if self.tools:
            declared["tools"] = {}
        if self.context:
            declared["context"] = {}
        return declared


@dataclass(frozen=True, slots=True)
class Elicitation:
    """Answer `elicitation/create` with `handler` (a form, or a URL to open, for the user).

    `form` / `url`: the modes declared. The handler gets `ElicitRequestFormParams` or
    `ElicitRequestURLParams` and returns an `ElicitResult` (or its dict) with action "accept",
    "decline" or "cancel". Accepted form content is checked against the requested schema
    before it is sent. (Return a dict when an answer holds a non-integer number: the generated
    `ElicitResult` model follows the schema, which types content values as string, integer,
    boolean or list of strings, although forms may ask for a "number".)
    """

    handler: ElicitationHandler
    form: bool = True
    url: bool = False

    def __post_init__(self) -> None:
        if not (self.form or self.url):
            raise ValueError("Elicitation needs at least one mode: form=True or url=True")

    def capability(self) -> JSONObject:
        declared: JSONObject = {}
        if self.form:
            declared["form"] = {}
        if self.url:
            declared["url"] = {}
        return declared


def form_errors(requested_schema: JSONObject, content: Any) -> list[str]:
    """What is wrong with form `content` for `requested_schema` (empty when it fits).

    The form is closed (no properties beyond the schema's) and string formats (email, uri,
    date, date-time) are checked. Useful to re-ask the user before answering.
    """
    if not isinstance(content, dict):
        return [f"form content must be an object, got {type(content).__name__}"]
    closed = {**requested_schema, "type": "object", "additionalProperties": False}
    return schema_errors(closed, content, check_formats=True)


def root_to_wire(root: Any) -> JSONObject:
    """A Root dict from a Root model, a dict with "uri", a URI string or a filesystem path.

    Raises TypeError/ValueError for anything else.
    """
    if isinstance(root, dict):
        if not isinstance(root.get("uri"), str):
            raise ValueError(f"a root needs a string 'uri': {root!r}")
        return root
    to_wire = getattr(root, "to_wire", None)
    if to_wire is not None:
        wire: JSONObject = to_wire()
        return wire
    if isinstance(root, str) and "://" in root:
        return {"uri": root}
    if isinstance(root, str | os.PathLike):
        path = Path(root).expanduser().resolve()
        return {"uri": path.as_uri(), "name": path.name or str(path)}
    raise TypeError(f"a root is a Root, a dict, a URI or a path, not {type(root).__name__}")


def roots_to_wire(roots: Iterable[Any]) -> list[JSONObject]:
    if isinstance(roots, str | os.PathLike | dict):
        raise TypeError("roots is a list of roots; wrap a single root in a list")
    return [root_to_wire(root) for root in roots]


class ServerRequests:
    """The client's `on_request`: dispatches the server's requests to the user's handlers."""

    def __init__(
        self,
        sampling: Sampling | None,
        elicitation: Elicitation | None,
        roots: RootsSource | None,
    ) -> None:
        self.sampling = sampling
        self.elicitation = elicitation
        self.roots: Callable[..., Any] | list[JSONObject] | None = None
        if roots is not None:
            self.set_roots(roots)

    def capabilities(self) -> JSONObject:
        declared: JSONObject = {}
        if self.sampling is not None:
            declared["sampling"] = self.sampling.capability()
        if self.elicitation is not None:
            declared["elicitation"] = self.elicitation.capability()
        if self.roots is not None:
            declared["roots"] = {"listChanged": True}
        return declared

    def set_roots(self, roots: RootsSource) -> None:
        """Replace the roots: a list (normalized now) or a callable (asked at each roots/list)."""
        self.roots = roots if callable(roots) else roots_to_wire(roots)

    def __call__(self, peer: Peer, event: RequestReceived) -> Any:
        method = event.method
        if method == "roots/list" and isinstance(self.roots, list):
            return {"roots": self.roots}  # answered inline, no task
        if method == "roots/list":
            return self._list_roots()
        if method == "sampling/createMessage":
            return self._sample(event.params or {})
        if method == "elicitation/create":
            return self._elicit(event.params or {})
        raise ProtocolError(-32601, f"Method not found: {method}")

    async def _list_roots(self) -> JSONObject:
        source = self.roots
        assert callable(source)  # only called when the roots come from a callable
        roots = source()
        if inspect.isawaitable(roots):
            roots = await roots
        try:
            return {"roots": roots_to_wire(roots)}
        except (TypeError, ValueError) as exc:
            raise _handler_bug("roots", str(exc)) from exc

    # -- sampling --------------------------------------------------------------------------

    async def _sample(self, params: JSONObject) -> JSONObject:
        from mcpkit.types import CreateMessageRequestParams, CreateMessageResult

        feature = self.sampling
        assert feature is not None  # the core refuses sampling when it was not declared
        if not feature.tools and ("tools" in params or "toolChoice" in params):
            raise InvalidParams(
                "Invalid params: this client did not declare sampling.tools, so a sampling "
                "request may not carry tools or toolChoice"
            )
        problem = _tool_message_problem(params.get("messages"))
        if problem is not None:
            raise InvalidParams(f"Invalid params: {problem}")
        typed = _parse(CreateMessageRequestParams, params, "sampling/createMessage")
        answer = feature.handler(typed)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, dict):
            try:
                CreateMessageResult.from_wire(answer)
            except Exception as exc:
                raise _handler_bug("sampling", validation_summary(exc)) from exc
            return answer
        if isinstance(answer, CreateMessageResult):
            return answer.to_wire()
        raise _handler_bug("sampling", f"returned {type(answer).__name__}")

    # -- elicitation -----------------------------------------------------------------------

    async def _elicit(self, params: JSONObject) -> JSONObject:
        from mcpkit.types import ElicitRequestFormParams, ElicitRequestURLParams

        feature = self.elicitation
        assert feature is not None  # the core refuses elicitation when it was not declared
        mode = params.get("mode", "form")
        if mode not in ("form", "url"):
            raise InvalidParams(f"Invalid params: unknown elicitation mode {mode!r}")
        if not getattr(feature, mode):
            raise InvalidParams(
                f"Invalid params: this client did not declare {mode}-mode elicitation"
            )
        kind = ElicitRequestURLParams if mode == "url" else ElicitRequestFormParams
        typed = _parse(kind, params, "elicitation/create")
        answer = feature.handler(typed)
        if inspect.isawaitable(answer):
            answer = await answer
        result = answer if isinstance(answer, dict) else getattr(answer, "to_wire", dict)()
        schema = params.get("requestedSchema")
        if mode == "form" and result.get("action") == "accept":
            result = {**result, "content": with_defaults(schema, result.get("content") or {})}
        problems = _elicit_result_problems(result, mode, schema)
        if problems:
            raise _handler_bug("elicitation", "; ".join(problems))
        return result


def with_defaults(schema: Any, content: JSONObject) -> JSONObject:
    """Accepted form content with the schema's defaults filled in for fields the user left
    out (SEP-1034: defaults are the values the user saw pre-filled)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not isinstance(content, dict):
        return content
    filled = dict(content)
    for name, prop in properties.items():
        if name not in filled and isinstance(prop, dict) and "default" in prop:
            filled[name] = prop["default"]
    return filled


def _elicit_result_problems(result: JSONObject, mode: str, schema: Any) -> list[str]:
    action = result.get("action")
    if action not in ("accept", "decline", "cancel"):
        return [f"action must be 'accept', 'decline' or 'cancel', got {action!r}"]
    content = result.get("content")
    if action != "accept" or content is None:
        if action == "accept" and mode == "form":
            return ["an accepted form needs content"]
        return []
    if mode == "url":
        return ["a URL-mode answer carries no content (the data stays out of the client)"]
    return form_errors(schema if isinstance(schema, dict) else {}, content)


def _tool_message_problem(messages: Any) -> str | None:
    """The spec's rules for tool use in sampling messages, or None when they hold."""
    if not isinstance(messages, list):
        return None  # the params model reports a missing or malformed list
    blocks = [_blocks(message) for message in messages]
    for content in blocks:
        kinds = {block.get("type") for block in content}
        if "tool_result" in kinds and kinds != {"tool_result"}:
            return "tool results mixed with other content in one message"
    for index, message in enumerate(messages):
        uses = {b.get("id") for b in blocks[index] if b.get("type") == "tool_use"}
        if not uses or not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else []
        answered = {b.get("toolUseId") for b in following if b.get("type") == "tool_result"}
        if not uses <= answered:
            return "tool result missing in request"
    return None


def _blocks(message: Any) -> list[JSONObject]:
    content = message.get("content") if isinstance(message, dict) else None
    items = content if isinstance(content, list) else [content]
    return [item for item in items if isinstance(item, dict)]


def _parse(kind: Any, params: JSONObject, method: str) -> Any:
    try:
        return kind.from_wire(params)
    except Exception as exc:  # pydantic.ValidationError
        raise InvalidParams(f"Invalid params for {method}: {validation_summary(exc)}") from exc


def validation_summary(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if errors is None:
        return str(exc)
    details: list[Any] = errors()  # a ValidationError
    parts = [
        f"{'.'.join(str(p) for p in item.get('loc', ())) or 'value'}: {item.get('msg')}"
        for item in details[:3]
    ]
    more = f" (+{len(details) - 3} more)" if len(details) > 3 else ""
    return "; ".join(parts) + more


def _handler_bug(feature: str, detail: str) -> ProtocolError:
    logger.warning("the %s handler's answer was not sent: %s", feature, detail)
    return ProtocolError(
        INTERNAL_ERROR, f"Internal error: the client's {feature} answer was invalid"
    )
