"""Optional dependencies and the extras that bring them.

mcpkit imports an optional dependency (uvicorn, httpx, PyJWT, an LLM SDK, ...) only where it is
used. Those imports go through `optional_dependency()`, which turns a ModuleNotFoundError for
one of them into `MissingExtra`, whose message names the `pip install 'mcpkit[EXTRA]'` to run,
instead of a bare "No module named 'uvicorn'" from deep inside a call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from mcpkit.errors import MissingExtra

# Top-level module -> the extra of pyproject.toml that installs it.
EXTRA_OF: dict[str, str] = {
    "uvicorn": "http",
    "httptools": "http",
    "httpx": "http",
    "jwt": "auth",
    "keyring": "keyring",
    "redis": "redis",
    "anthropic": "anthropic",
    "openai": "openai",
    "platformdirs": "host",
    "prompt_toolkit": "host",
    "watchfiles": "watch",
}


def missing_extra(exc: ImportError) -> MissingExtra | None:
    """The `MissingExtra` an ImportError stands for, or None when it is not about a module one
    of our extras installs (a broken install, a user's own import)."""
    if isinstance(exc, MissingExtra):
        return exc
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.partition(".")[0]
    extra = EXTRA_OF.get(top)
    return None if extra is None else MissingExtra(top, extra)


@contextlib.contextmanager
def optional_dependency() -> Iterator[None]:
    """Wrap the lazy import of an optional dependency.

    Raises MissingExtra (an ImportError) when the module is one an extra installs and it is
    missing; any other ImportError goes through unchanged."""
    try:
        yield
    except ModuleNotFoundError as exc:
        mapped = missing_extra(exc)
        if mapped is None:
            raise
        raise mapped from exc
