"""What checking a tool's arguments against its signature can report, on either path (the
plain JSON checks of `schema`, or pydantic in `typed`)."""

from __future__ import annotations

import inspect

from mcpkit.errors import MCPError

EMPTY = inspect.Parameter.empty  # a parameter without a default (or annotation)


class InvalidArguments(MCPError, ValueError):
    """Arguments that do not fit a signature; `problems` has one message per bad field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
