"""What every test needs loaded before it runs.

anyio (under the official `mcp` package) imports most of its modules lazily, on first use, and
pytest rewrites them as it imports them (anyio is a pytest plugin's package). CPython 3.11.7
can then fail that rewrite's `ast.parse` with "SystemError: AST constructor recursion depth
mismatch" when the first use comes deep in a test's stack (a CI run met it under the official
client in tests/server/test_apps.py). Loading them here, at a shallow stack, avoids it."""

from __future__ import annotations

import anyio

for _name in dir(anyio):
    getattr(anyio, _name)
