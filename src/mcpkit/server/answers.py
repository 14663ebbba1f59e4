"""The client's answers to a handler's asks, as the typed models the client side uses.

`ctx.sample` gives a `mcpkit.types.CreateMessageResult`, `ctx.list_roots` a list of
`mcpkit.types.Root`, `ctx.elicit_url` an `mcpkit.types.ElicitResult` (`ctx.elicit` has its own
`Elicited`). An answer that does not have its method's shape raises InvalidResult naming what
is wrong, as the client does for a server's results.

For one release the models also answer the reads handler code did when these were wire dicts
(`result["content"]`, `root["uri"]`, `.get(...)`, `"key" in result`), each with a
DeprecationWarning naming the attribute to read instead. Imported on the first answer (it
needs pydantic, which a server that never asks does not load).
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from mcpkit.errors import InvalidResult
from mcpkit.types import CreateMessageResult, ElicitResult, ListRootsResult, MCPModel, Root

JSONObject = dict[str, Any]
M = TypeVar("M", bound=MCPModel)


class _DictReads:
    """Deprecated dict-style reads of a model: the wire form's keys, as before."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        _warn(key)
        return self.to_wire()[key]  # type: ignore[attr-defined]

    def get(self, key: str, default: Any = None) -> Any:
        _warn(key)
        return self.to_wire().get(key, default)  # type: ignore[attr-defined]

    def __contains__(self, key: object) -> bool:
        _warn(str(key))
        return key in self.to_wire()  # type: ignore[attr-defined]


def _warn(key: str) -> None:
    warnings.warn(
        f"reading an answer as a dict ([{key!r}]) is deprecated: it is a model from "
        "mcpkit.types; read its attribute (snake_case: result.stop_reason, root.uri) or "
        "call .to_wire() for the wire dict",
        DeprecationWarning,
        stacklevel=3,
    )


class Sampled(_DictReads, CreateMessageResult):
    """A `CreateMessageResult` (see the module docstring for the deprecated dict reads)."""


class ListedRoot(_DictReads, Root):
    """A `Root` (see the module docstring for the deprecated dict reads)."""


class ElicitedURL(_DictReads, ElicitResult):
    """An `ElicitResult` (see the module docstring for the deprecated dict reads)."""


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
