"""The client's answers to a handler's asks, as the typed models the client side uses.

`ctx.sample` gives a `mcpkit.types.CreateMessageResult`, `ctx.list_roots` a list of
`mcpkit.types.Root`, `ctx.elicit_url` an `mcpkit.types.ElicitResult` (`ctx.elicit` has its own
`Elicited`); `ctx.read_resource`, reading the server's own resource, a
`mcpkit.types.ReadResourceResult` as the client's `read_resource` does. An answer that does
not have its method's shape raises InvalidResult naming what is wrong, as the client does for
a server's results.

For one release the models also answer the reads handler code did when these were wire dicts
(`result["content"]`, `root["uri"]`, `.get(...)`, `"key" in result`), each with a
DeprecationWarning naming the attribute to read instead. Imported on the first answer (it
needs pydantic, which a server that never asks does not load).
"""

from __future__ import annotations

from typing import Any, TypeVar

from mcpkit.errors import InvalidResult
from mcpkit.types import (
    CreateMessageResult,
    ElicitResult,
    ListRootsResult,
    MCPModel,
    ReadResourceResult,
    Root,
)
from mcpkit.types.deprecation import DictReads

JSONObject = dict[str, Any]
M = TypeVar("M", bound=MCPModel)


class Sampled(DictReads, CreateMessageResult):
    """A `CreateMessageResult` (see the module docstring for the deprecated dict reads)."""


class ListedRoot(DictReads, Root):
    """A `Root` (see the module docstring for the deprecated dict reads)."""


class ElicitedURL(DictReads, ElicitResult):
    """An `ElicitResult` (see the module docstring for the deprecated dict reads)."""


class ReadResult(DictReads, ReadResourceResult):
    """A `ReadResourceResult` of `ctx.read_resource` (deprecated dict reads as above)."""


def sampled(result: JSONObject) -> CreateMessageResult:
    """Raises InvalidResult for a result that is not a CreateMessageResult."""
    return _parse(Sampled, result, "sampling/createMessage")


def roots(result: JSONObject) -> list[Root]:
    """Raises InvalidResult for a result that is not a ListRootsResult."""
    _parse(ListRootsResult, result, "roots/list")  # the whole answer's shape
    return [_parse(ListedRoot, root, "roots/list") for root in result["roots"]]


def elicited_url(result: JSONObject) -> ElicitResult:
    """Raises InvalidResult for a result that is not an ElicitResult."""
    return _parse(ElicitedURL, result, "elicitation/create")


def read_result(result: JSONObject) -> ReadResourceResult:
    """Raises InvalidResult for a result that is not a ReadResourceResult."""
    return _parse(ReadResult, result, "resources/read")


def _parse(model: type[M], result: Any, method: str) -> M:
    from pydantic import ValidationError

    try:
        return model.from_wire(result)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in error['loc']) or 'result'}: {error['msg']}"
            for error in exc.errors()[:3]
        ]
        raise InvalidResult(method, "; ".join(problems)) from None
