"""Serve a Python file written for `mcp run` or `fastmcp run`: one that defines a server at
module level but never starts it (no `if __name__ == "__main__":`), as the official SDK's
README server does.

How this works: `mcpkit list/call FILE` runs this file by path in the server's subprocess
(`python _serve_module.py FILE`; mcpkit never imports it). It executes FILE once, as a module,
then calls `run()` (stdio) on the module-level server named mcp, server or app, as
`mcp run FILE` does; importing runs a plain script's top-level code too. When FILE defines no
such server it says so on stderr (the CLI shows it) and exits with code 2.

While FILE is executed, stdout points at stderr (`print_to_stderr`): stdout carries the
protocol once `run()` starts, and a `print()` at import time would corrupt it. The same
switch as `loading.stdout_to_stderr`, written again here because this script imports
nothing of mcpkit.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

NAMES = ("mcp", "server", "app")
# (top-level package, class name) of the server classes whose run() serves stdio.
SERVER_CLASSES = {
    ("mcp", "MCPServer"),
    ("mcp", "FastMCP"),
    ("fastmcp", "FastMCP"),
    ("mcpkit", "Server"),
}


def is_server(value: Any) -> bool:
    """Whether `value` is a server of the official SDK, FastMCP or mcpkit."""
    return any(
        (cls.__module__.partition(".")[0], cls.__name__) in SERVER_CLASSES
        for cls in type(value).__mro__
    )


@contextlib.contextmanager
def print_to_stderr() -> Iterator[None]:
    """stdout (sys.stdout and fd 1) reaches stderr until the block ends."""
    real = sys.stdout
    real.flush()
    saved_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            real.flush()  # what the file left buffered still goes to stderr
        if sys.stdout is sys.stderr:
            sys.stdout = real
        os.dup2(saved_fd, 1)
        os.close(saved_fd)


def main(argv: list[str]) -> int:
    path = Path(argv[1]).resolve()
    sys.argv = argv[1:]  # what the file would see as `python FILE`
    sys.path[0] = str(path.parent)
    spec = importlib.util.spec_from_file_location("__mcp_server__", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    with print_to_stderr():
        spec.loader.exec_module(module)
    for name in NAMES:
        value: Any = getattr(module, name, None)
        if is_server(value):
            value.run()
            return 0
    print(
        f"{path.name} neither starts a server when run nor defines one named "
        f"{', '.join(NAMES)} (an official-SDK, FastMCP or mcpkit server)",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
