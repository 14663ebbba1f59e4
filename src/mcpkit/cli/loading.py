"""Finding the server a user means: `app.py`, `app.py:server`, `package.module:server`, and how
to start the one a talking command (list, call, read, prompt) names.

A Python file TARGET is read (parsed, never run in the CLI's process) to choose how its
subprocess starts, so that files of other SDKs work too:
- `FILE:NAME`, or a file that imports mcpkit: `mcpkit run FILE[:NAME]`, as before;
- any other file that starts itself (`if __name__ == "__main__":` at module level, as an
  official-SDK or FastMCP server run with `python server.py`, or any stdio script):
  `python FILE`, with the CLI's own interpreter;
- any other file (one written for `mcp run`, like the official SDK's README server, or a
  script with no main guard): `_serve_module.py` executes it once and runs its server.
Each way the file is executed once, in the subprocess only.

`mcpkit run` imports the user's code with stdout pointing at stderr (`stdout_to_stderr`):
over stdio, stdout carries the protocol, and a `print()` at import time would corrupt it
before the transport (which keeps stdout for itself while serving) has started.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcpkit.errors import MCPError
from mcpkit.server import Server


class UsageError(MCPError):
    """The command line asks for something that cannot be done; exit code 2."""


def load_server(spec: str) -> Server:
    """The `Server` named by `spec` (FILE[:OBJ] or MODULE[:OBJ]); OBJ defaults to the one
    Server found at module level. Raises UsageError with a message a person can act on.

    What the module prints while it is imported goes to stderr (see `stdout_to_stderr`).
    """
    location, _, attribute = spec.partition(":")
    with stdout_to_stderr():
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


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send what is written to stdout to stderr until the block ends, at both levels:
    `sys.stdout` (print) and file descriptor 1 (C extensions, child processes), then give
    the real stdout back for the protocol. Output the block left in stdout's buffer is
    flushed while it still reaches stderr."""
    real = sys.stdout
    if real is not None:
        real.flush()
    try:
        saved_fd: int | None = os.dup(1)
    except OSError:  # no fd 1 at all: nothing there to corrupt
        saved_fd = None
    if saved_fd is not None:
        os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        if real is not None:
            with contextlib.suppress(OSError, ValueError):
                real.flush()
        if sys.stdout is sys.stderr:  # not replaced by the user's code meanwhile
            sys.stdout = real
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


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
    started in a subprocess (see the module docstring), anything else a command line.

    Raises UsageError for a Python file that does not exist.
    """
    if "://" in target:
        return target
    file_part, _, attribute = target.partition(":")
    if not file_part.endswith(".py") or " " in target:
        return target
    path = Path(file_part)
    if not path.is_file():
        raise UsageError(f"no such file: {file_part}")
    where = str(path.resolve())  # the same file whatever --cwd the subprocess gets
    code = _parse(path)
    if attribute or (code is not None and _imports_mcpkit(code)):
        return [
            sys.executable,
            "-m",
            "mcpkit",
            "run",
            f"{where}:{attribute}" if attribute else where,
        ]
    if code is None or _starts_itself(code):
        return [sys.executable, where]  # a syntax error is for Python to report
    return [sys.executable, str(Path(__file__).with_name("_serve_module.py")), where]


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return None


def _imports_mcpkit(code: ast.Module) -> bool:
    for node in ast.walk(code):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        if any(name.partition(".")[0] == "mcpkit" for name in names):
            return True
    return False


def _starts_itself(code: ast.Module) -> bool:
    """Whether the module has `if __name__ == "__main__":` at its top level."""
    return any(isinstance(node, ast.If) and _is_main_check(node.test) for node in code.body)


def _is_main_check(test: ast.expr) -> bool:
    if not isinstance(test, ast.Compare) or [type(op) for op in test.ops] != [ast.Eq]:
        return False
    sides = (test.left, test.comparators[0])
    names = [side.id for side in sides if isinstance(side, ast.Name)]
    texts = [side.value for side in sides if isinstance(side, ast.Constant)]
    return names == ["__name__"] and texts == ["__main__"]
