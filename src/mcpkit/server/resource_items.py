"""The two kinds of entries a `ResourceRegistry` holds: a concrete resource (listed by
resources/list, read through its reader or answered with its prepared static result) and a URI
template (listed by resources/templates/list, asked whether a URI fits it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcpkit.protocol import Prepared
from mcpkit.server.resource_functions import Reader
from mcpkit.server.uri_template import UriTemplate

JSONObject = dict[str, Any]


class Resource:
    """A concrete resource, listed by resources/list."""

    __slots__ = ("definition", "prepared", "reader", "result", "scopes", "uri")

    def __init__(
        self,
        uri: str,
        definition: JSONObject,
        reader: Reader,
        result: JSONObject | None = None,
        scopes: frozenset[str] = frozenset(),
    ) -> None:
        self.uri = uri
        self.scopes = scopes  # what a caller's token must grant to read it
        self.definition = definition
        self.reader = reader
        self.result = result  # a static resource's whole answer, built once
        self.prepared = None if result is None else Prepared(result)


class ResourceTemplate:
    """A URI template, listed by resources/templates/list, and what reads the URIs it names.

    `bind(uri)` returns a reader when `uri` fits, None when it does not; it raises
    `VariableMismatch` when the URI fits the shape but a variable does not convert, and may
    raise a ProtocolError (InvalidParams) for a URI it owns but refuses.
    """

    __slots__ = ("bind", "choices", "definition", "prefix", "scopes", "uri_template")

    def __init__(
        self,
        uri_template: str,
        definition: JSONObject,
        bind: Callable[[str], Reader | None],
        choices: Mapping[str, Sequence[str]] | None = None,
        scopes: frozenset[str] = frozenset(),
    ) -> None:
        self.uri_template = uri_template
        self.scopes = scopes  # what a caller's token must grant to read what it names
        self.prefix = UriTemplate(uri_template).prefix  # URIs without it are not tried
        self.definition = definition
        self.bind = bind
        self.choices = choices or {}  # closed sets of values per variable, for completion
