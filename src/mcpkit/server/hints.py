"""One way to read a function's annotations, for tools, prompts, resources and completions.

How this works: with `from __future__ import annotations` every annotation is a string, and
a name it uses may live in the function's module, in a variable the function closes over,
or only in the function that registered it (an Enum or a model defined inside a test or a
factory). `caller_namespace()` captures the locals of that registering code when the
decorator (or `add_*`) runs, and `resolve_hints` evaluates each string against the module,
those locals and the closure, in Python's own order (the innermost scope wins).

An annotation that still does not evaluate is an error at registration (TypeError naming
the function, the parameter and the annotation), never a silent "unannotated": a prompt
argument or a template variable would otherwise take a plain string and fail only when a
client calls it. The one exception is a parameter annotated `Context` with the name
imported only under TYPE_CHECKING: its text is enough to know it is the context.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Callable, Mapping
from typing import Any

JSONObject = dict[str, Any]
_EMPTY = inspect.Parameter.empty
_MAX_FRAMES = 20  # enough for the few frames of mcpkit between a decorator and the user


def caller_namespace() -> Mapping[str, Any] | None:
    """The locals of the nearest caller outside mcpkit: the code that registered a function
    (call it while registering, so the names defined before the decorator are there).
    Read, never written; copied only when a string annotation needs it."""
    frame = sys._getframe(1)
    for _ in range(_MAX_FRAMES):
        if not frame.f_globals.get("__name__", "").startswith("mcpkit."):
            return frame.f_locals
        if frame.f_back is None:
            return None
        frame = frame.f_back
    return None


def resolve_hints(
    fn: Callable[..., Any], namespace: Mapping[str, Any] | None = None, *, kind: str = "function"
) -> JSONObject:
    """Parameter (and "return") annotations of `fn`, string annotations evaluated.

    Names are looked up in `namespace` (the registering code's locals, see
    `caller_namespace`) and the variables `fn` closes over, then in `fn`'s module.
    `kind` ("tool", "prompt", ...) is for the error message.

    Raises TypeError naming `fn`, the parameter and the annotation when one does not
    evaluate (a string naming `Context` is kept as it is; see the module docstring).
    """
    target = function_of(fn)
    signature = inspect.signature(fn)
    raw = {name: p.annotation for name, p in signature.parameters.items()}
    raw["return"] = signature.return_annotation
    hints = {name: value for name, value in raw.items() if value is not _EMPTY}
    texts = {name: value for name, value in hints.items() if isinstance(value, str)}
    if texts:
        scope = (getattr(target, "__globals__", {}), _local_names(target, namespace))
        for name, text in texts.items():
            hints[name] = _evaluate(text, scope, fn=fn, name=name, kind=kind)
    return hints


def _evaluate(
    text: str,
    scope: tuple[dict[str, Any], dict[str, Any]],
    *,
    fn: Callable[..., Any],
    name: str,
    kind: str,
) -> Any:
    try:
        return eval(text, *scope)  # the function's own source text
    except Exception as exc:
        if name != "return" and names_context(text):
            return text
        where = "the return annotation" if name == "return" else f"parameter {name!r}"
        raise TypeError(
            f"{kind} {_label(fn)}: cannot evaluate the annotation {text!r} of {where} "
            f"({type(exc).__name__}: {exc}); define or import what it names where the "
            f"{kind} is registered or at module level"
        ) from None


def _local_names(target: Any, namespace: Mapping[str, Any] | None) -> dict[str, Any]:
    names = dict(namespace or {})
    with contextlib.suppress(TypeError, ValueError):  # builtins and callable objects have none
        names.update(inspect.getclosurevars(target).nonlocals)
    return names


def names_context(text: str) -> bool:
    """Whether an annotation's text is `Context` (dotted, or `Context | None`)."""
    return text.replace(" ", "").split("|")[0].rsplit(".", 1)[-1] == "Context"


def function_of(fn: Callable[..., Any]) -> Any:
    """The plain function behind `fn` (through partials, wrappers, bound methods and callable
    objects), whose module the annotations were written in."""
    seen = fn
    for _ in range(10):
        inner = getattr(seen, "func", None) or getattr(seen, "__wrapped__", None)
        inner = inner or getattr(seen, "__func__", None)
        if inner is None:
            break
        seen = inner
    if not hasattr(seen, "__globals__") and callable(seen):
        call = type(seen).__call__  # a callable object: its method has the annotations
        return getattr(call, "__func__", call)
    return seen


def _label(fn: Callable[..., Any]) -> str:
    return f"{getattr(function_of(fn), '__qualname__', None) or type(fn).__name__}()"
