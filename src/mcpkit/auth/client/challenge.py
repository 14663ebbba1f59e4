"""Reading a `WWW-Authenticate` challenge (RFC 6750 section 3, RFC 9728 section 5.1).

`Bearer resource_metadata="https://...", scope="a b", error="insufficient_scope"`: the
parameters the client acts on. A header may carry several challenges (`Basic realm="x",
Bearer scope="y"`); the first Bearer (or DPoP) one wins. Quoted values may contain commas and
escaped quotes; token values may not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_PARAM = re.compile(
    r"""\s*([A-Za-z0-9_\-.]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,"]+)\s*,?""",
)
_SCHEME = re.compile(r"\s*,?\s*([A-Za-z][A-Za-z0-9!#$%&'*+\-.^_`|~]*)(?=\s|$|,)")
_SCHEMES = ("bearer", "dpop")


@dataclass(frozen=True, slots=True)
class Challenge:
    """What the server asked for: where its resource metadata is, which scopes, which error."""

    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None
    error_description: str | None = None

    def scopes(self) -> set[str]:
        return set((self.scope or "").split())

    @classmethod
    def parse(cls, headers: Iterable[str]) -> Challenge:
        """The first Bearer/DPoP challenge among `headers` (each a WWW-Authenticate value);
        an empty Challenge when there is none or it cannot be read."""
        for header in headers:
            for scheme, params in _challenges(header):
                if scheme.lower() in _SCHEMES:
                    return cls(
                        resource_metadata=params.get("resource_metadata"),
                        scope=params.get("scope"),
                        error=params.get("error"),
                        error_description=params.get("error_description"),
                    )
        return cls()


def _challenges(header: str) -> list[tuple[str, dict[str, str]]]:
    """(scheme, parameters) for each challenge in one header value."""
    found: list[tuple[str, dict[str, str]]] = []
    position = 0
    while position < len(header):
        scheme = _SCHEME.match(header, position)
        if scheme is None:
            break
        params: dict[str, str] = {}
        position = scheme.end()
        while (param := _PARAM.match(header, position)) is not None:
            params.setdefault(param.group(1).lower(), _unquote(param.group(2)))
            position = param.end()
        found.append((scheme.group(1), params))
        if position == scheme.end() and header[position:].strip(" ,") == "":
            break
        if position == scheme.end():  # token68 or junk after a scheme: skip to the next comma
            comma = header.find(",", position)
            position = len(header) if comma < 0 else comma + 1
    return found


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value
