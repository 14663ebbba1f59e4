"""Meta-test: one exception tree (issue 23).

Every exception class mcpkit defines derives from `mcpkit.errors.MCPError`, so `except
MCPError` catches everything the library raises on purpose, and none derives from a
third-party class (httpx, jwt, redis, ...): those are mapped to ours where they cross into
the public API, so a caller never needs an optional dependency's exceptions.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

import mcpkit
from mcpkit.errors import MCPError

# Each exception outside the tree, with the reason it has to be.
ALLOWED = {
    "mcpkit.server.asks.InputNeeded": (
        "a BaseException on purpose: the server's signal that a request needs the client's "
        "input must pass through a tool's own `except Exception`; it never reaches a caller"
    ),
}


def _modules() -> Iterator[str]:
    for info in pkgutil.walk_packages(mcpkit.__path__, "mcpkit."):
        if not info.name.endswith("__main__"):
            yield info.name


def _exception_classes() -> set[type[BaseException]]:
    for name in _modules():
        importlib.import_module(name)
    found: set[type[BaseException]] = set()
    pending: list[type[BaseException]] = [BaseException]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                pending.append(sub)
    return {cls for cls in found if cls.__module__.split(".")[0] == "mcpkit"}


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _foreign(cls: type) -> list[str]:
    return [
        _qualified(base)
        for base in cls.__mro__
        if base.__module__ != "builtins" and base.__module__.split(".")[0] != "mcpkit"
    ]


def test_the_walk_finds_the_exceptions_of_every_layer() -> None:
    # Guards the test itself: a walk that imported nothing would pass vacuously.
    names = {_qualified(cls) for cls in _exception_classes()}
    for expected in (
        "mcpkit.errors.ProtocolError",
        "mcpkit.host.servers.ServerUnavailable",
        "mcpkit.auth.client.errors.OAuthError",
        "mcpkit.stores.tasks.StoreFull",
        "mcpkit.cli.loading.UsageError",
    ):
        assert expected in names


def test_every_exception_class_derives_from_mcp_error() -> None:
    outside = sorted(
        _qualified(cls)
        for cls in _exception_classes()
        if not issubclass(cls, MCPError) and _qualified(cls) not in ALLOWED
    )
    assert outside == [], f"exception classes outside the MCPError tree: {outside}"


def test_no_exception_class_derives_from_a_third_party_class() -> None:
    foreign = {_qualified(cls): _foreign(cls) for cls in _exception_classes() if _foreign(cls)}
    assert foreign == {}


def test_the_allow_list_names_only_classes_that_exist_outside_the_tree() -> None:
    by_name = {_qualified(cls): cls for cls in _exception_classes()}
    for name in ALLOWED:
        assert name in by_name, f"{name} no longer exists: drop it from ALLOWED"
        assert not issubclass(by_name[name], MCPError), f"{name} is in the tree now"


def test_builtin_bases_kept_for_callers_that_catch_them() -> None:
    # Moving a class under MCPError kept the builtin its callers already catch.
    from mcpkit.host import AmbiguousResource, ConfigError, StepLimitReached

    assert issubclass(ConfigError, ValueError)
    assert issubclass(AmbiguousResource, LookupError)
    assert issubclass(StepLimitReached, RuntimeError)


def test_invalid_token_is_one_class() -> None:
    # The authorization server's key ring and the resource server's verifiers raised two
    # different `InvalidToken`s; `except mcpkit.auth.InvalidToken` missed the key ring's.
    from mcpkit.auth import InvalidToken
    from mcpkit.auth.server import keys

    assert keys.InvalidToken is InvalidToken


def test_the_oauth_client_maps_httpx_failures_to_oauth_error() -> None:
    import httpx
    import pytest

    from mcpkit.auth.client import OAuthError
    from mcpkit.auth.client.errors import requesting

    failed = r"OAuth token failed at https://as/token: .*ConnectError"
    with pytest.raises(OAuthError, match=failed) as caught, requesting("token", "https://as/token"):
        raise httpx.ConnectError("refused: https://as/token?code=secret")
    assert "secret" not in str(caught.value)
