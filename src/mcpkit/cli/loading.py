"""Finding the server a user means: `app.py`, `app.py:server`, `package.module:server`."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from mcpkit.server import Server


class UsageError(Exception):
    """The command line asks for something that cannot be done; exit code 2."""


def load_server(spec: str) -> Server:
    """The `Server` named by `spec` (FILE[:OBJ] or MODULE[:OBJ]); OBJ defaults to the one
    Server found at module level. Raises UsageError with a message a person can act on."""
    location, _, attribute = spec.partition(":")
    module = _import(location)
    if attribute:
        server = getattr(module, attribute, None)
        if not isinstance(server, Server):
            raise UsageError(f"{location} has no Server named {attribute!r}")
        return server
    found = [value for value in vars(module).values() if isinstance(value, Server)]
    if len(found) != 1:
        what = "no Server" if not found else f"{len(found)} Servers"
        raise UsageError(f"{location} defines {what} at module level; name one as {location}:NAME")
    return found[0]


def _import(location: str) -> Any:
    path = Path(location)
    if path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise UsageError(f"no such file: {location}")
        sys.path.insert(0, str(path.resolve().parent))
        spec = importlib.util.spec_from_file_location("__mcpkit_app__", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["__mcpkit_app__"] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(location)
    except ImportError as exc:
        raise UsageError(f"cannot import {location}: {exc}") from exc


def target_for(target: str) -> Any:
    """What `Client(...)` should connect to for a TARGET argument: a URL as is, a Python file
    served by `mcpkit run` in a subprocess, anything else a command line."""
    if "://" in target:
        return target
    file_part = target.partition(":")[0]
    if file_part.endswith(".py") and " " not in target:
        if not Path(file_part).is_file():
            raise UsageError(f"no such file: {file_part}")
        return [sys.executable, "-m", "mcpkit", "run", target]
    return target
