"""The 100 tools of W5 (`tools/list`), shared by the mcpkit and official servers.

Distinct names (verb_noun), a description each, 2-3 parameters each in four shapes, some with
defaults. Standard library only. The raw server takes the names, descriptions and kinds from
here and writes the matching JSON schemas by hand.
"""

from collections.abc import Callable, Iterator
from itertools import product

VERBS = ("get", "list", "create", "update", "delete", "search", "sync", "export", "import", "tag")
NOUNS = ("user", "invoice", "order", "ticket", "report", "file", "project", "comment", "event",
         "metric")  # fmt: skip
COUNT = len(VERBS) * len(NOUNS)  # 100


def specs() -> Iterator[tuple[str, str, int]]:
    """(name, description, kind) of every tool; kind picks the parameter shape (0-3)."""
    for index, (verb, noun) in enumerate(product(VERBS, NOUNS)):
        description = f"{verb.capitalize()} {noun}s of the workspace; tool {index} of {COUNT}."
        yield f"{verb}_{noun}", description, index % 4


def make_function(kind: int) -> Callable[..., str]:
    """A fresh function with the parameters of `kind`."""
    if kind == 0:

        def tool(query: str, limit: int = 10) -> str:
            return f"{query}:{limit}"

    elif kind == 1:

        def tool(city: str, days: int, metric: bool = True) -> str:
            return f"{city}:{days}:{metric}"

    elif kind == 2:

        def tool(amount: float, currency: str) -> str:
            return f"{amount}:{currency}"

    else:

        def tool(path: str, pattern: str, recursive: bool = False) -> str:
            return f"{path}:{pattern}:{recursive}"

    return tool
