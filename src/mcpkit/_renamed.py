"""Old public names kept for one release: a package's `__getattr__` asks `renamed` for the
new name of an attribute it no longer has, which warns (DeprecationWarning, at the user's
line) and returns it, or raises AttributeError for a name that never existed."""

from __future__ import annotations

from collections.abc import Mapping

from mcpkit.types.deprecation import warn_deprecated


def renamed(module: str, name: str, renames: Mapping[str, str]) -> str:
    """The current name for `module`'s old attribute `name`, after warning that it is
    deprecated. Raises AttributeError when `name` is not one of `renames`."""
    new = renames.get(name)
    if new is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warn_deprecated(f"{module}.{name} is deprecated; use {module}.{new} (the same class)")
    return new
