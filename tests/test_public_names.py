"""Meta-test: each public concept has one name (issue 23).

The public API is what the public packages export in `__all__` (CONTRIBUTING.md). No two
different classes there share a name, and no class elsewhere in mcpkit is named like a public
one it is not (a reader of a traceback or an editor's completion list would take one for the
other). The old spellings of renamed classes still work for one release, with a
DeprecationWarning, and give the same class.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import defaultdict

import pytest

import mcpkit

PUBLIC = (
    "mcpkit",
    "mcpkit.errors",
    "mcpkit.client",
    "mcpkit.server",
    "mcpkit.host",
    "mcpkit.host.providers",
    "mcpkit.auth",
    "mcpkit.auth.client",
    "mcpkit.auth.server",
    "mcpkit.stores",
    "mcpkit.testing",
    "mcpkit.protocol",
)

# Internal classes allowed to share a public class's name, each with its reason.
ALLOWED = {
    "mcpkit.protocol.jsonrpc.Notification": (
        "the sans-IO core's JSON-RPC message kind (with Request and Response); the client's "
        "public Notification is what a listener receives"
    ),
}


def _exports(package: str) -> dict[str, object]:
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None)
    if names is None:  # a plain module: its public classes
        names = [n for n, v in vars(module).items() if not n.startswith("_") and inspect.isclass(v)]
    return {name: getattr(module, name) for name in names}


def _public_classes() -> dict[str, set[type]]:
    by_name: dict[str, set[type]] = defaultdict(set)
    for package in PUBLIC:
        for name, value in _exports(package).items():
            if inspect.isclass(value) and value.__module__.split(".")[0] == "mcpkit":
                by_name[name].add(value)
    return by_name


def _every_class() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(mcpkit.__path__, "mcpkit."):
        if info.name.endswith("__main__") or info.name.startswith("mcpkit.types."):
            continue  # the wire types are the spec's names, generated per revision
        module = importlib.import_module(info.name)
        found += [
            value
            for value in vars(module).values()
            if inspect.isclass(value) and value.__module__ == module.__name__
        ]
    return found


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def test_no_two_public_classes_share_a_name() -> None:
    shared = {
        name: sorted(_qualified(cls) for cls in classes)
        for name, classes in _public_classes().items()
        if len(classes) > 1
    }
    assert shared == {}


def test_no_internal_class_is_named_like_a_public_one() -> None:
    public = _public_classes()
    lookalikes = sorted(
        _qualified(cls)
        for cls in _every_class()
        if cls.__name__ in public
        and cls not in public[cls.__name__]
        and _qualified(cls) not in ALLOWED
    )
    assert lookalikes == []


def test_no_two_classes_anywhere_share_a_name() -> None:
    # Internal modules too (their names show in tracebacks and completion lists): a second
    # class under a taken name is renamed, made private (`_Name`), or allowed with a reason.
    by_name: dict[str, list[str]] = defaultdict(list)
    for cls in _every_class():
        if not cls.__name__.startswith("_"):
            by_name[cls.__name__].append(_qualified(cls))
    shared = {
        name: sorted(found)
        for name, found in by_name.items()
        if len([each for each in found if each not in ALLOWED]) > 1
    }
    assert shared == {}


def test_the_allow_list_is_current() -> None:
    public = _public_classes()
    classes = {_qualified(cls): cls for cls in _every_class()}
    for name in ALLOWED:
        assert name in classes, f"{name} is gone: drop it from ALLOWED"
        assert classes[name].__name__ in public, f"{name} no longer shares a public name"


RENAMED = [
    ("mcpkit.client", "HttpOptions", "HTTPOptions"),
    ("mcpkit.auth.client", "MemoryStore", "MemoryTokenStore"),
    ("mcpkit.auth.client", "Approval", "Approver"),
    ("mcpkit.auth.server", "MemoryStore", "MemoryAuthStore"),
    ("mcpkit.host", "State", "ServerState"),
]


@pytest.mark.parametrize(("package", "old", "new"), RENAMED)
def test_an_old_spelling_warns_and_is_the_same_class(package: str, old: str, new: str) -> None:
    module = importlib.import_module(package)
    with pytest.warns(DeprecationWarning, match=rf"{package}\.{old} is deprecated; use .*{new}"):
        value = getattr(module, old)
    assert value is getattr(module, new)


def test_an_old_spelling_imports_with_a_warning_at_the_users_line() -> None:
    with pytest.warns(DeprecationWarning) as caught:
        from mcpkit.client import HttpOptions  # noqa: F401
    assert caught[0].filename == __file__


def test_the_never_raised_request_cancelled_exception_is_deprecated() -> None:
    import mcpkit.errors
    from mcpkit.errors import MCPError

    with pytest.warns(DeprecationWarning, match="never raised"):
        old = mcpkit.errors.RequestCancelled
    assert issubclass(old, MCPError)


def test_a_name_that_never_existed_is_still_an_attribute_error() -> None:
    import mcpkit.client

    with pytest.raises(AttributeError, match="HttpOption"):
        mcpkit.client.HttpOption  # noqa: B018
