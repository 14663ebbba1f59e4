"""MCP Apps (`io.modelcontextprotocol/ui`, stable 2026-01-26): the names and the one rule the
server, the client and the host share.

A tool links a view with `_meta.ui.resourceUri` (a `ui://` resource served as
`text/html;profile=mcp-app`) and says who may call it with `_meta.ui.visibility`: "model"
(the agent sees and calls it), "app" (a view of the same server may call it); both when
omitted. `tool_ui` reads those two from a tool's `_meta` as a host must: the nested form
first, the deprecated flat `ui/resourceUri` key as a fallback; a malformed view link is no
view, and a malformed `visibility` lets nobody call the tool (a server's metadata is
untrusted input: a mistake must not open a model-hidden tool to the model).
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

APPS_EXTENSION: Final = "io.modelcontextprotocol/ui"
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
APP_SCHEME: Final = "ui://"
# The protocol revision of the view <-> host messages (`ui/initialize`).
APPS_PROTOCOL_VERSION: Final = "2026-01-26"
AUDIENCES: Final = frozenset({"model", "app"})
DEFAULT_VISIBILITY: Final = ("model", "app")
# The deprecated flat key some hosts still read (the spec: removed before GA).
LEGACY_RESOURCE_URI_KEY: Final = "ui/resourceUri"


class ToolUi(NamedTuple):
    """What a tool's `_meta` says about views: the view it renders in (None: none) and who
    may call it."""

    resource_uri: str | None
    visibility: tuple[str, ...]

    @property
    def for_model(self) -> bool:
        return "model" in self.visibility

    @property
    def for_app(self) -> bool:
        return "app" in self.visibility


def tool_ui(meta: Any) -> ToolUi:
    """The view and visibility a tool's `_meta` declares (see the module docstring)."""
    ui = meta.get("ui") if type(meta) is dict else None
    if type(ui) is not dict:
        ui = {}
    uri = ui.get("resourceUri")
    if type(uri) is not str and type(meta) is dict:
        uri = meta.get(LEGACY_RESOURCE_URI_KEY)
    visibility = ui.get("visibility", DEFAULT_VISIBILITY)
    if type(visibility) in (list, tuple):
        audiences = tuple(v for v in visibility if type(v) is str and v in AUDIENCES)
    else:  # present but malformed: nobody, rather than everybody
        audiences = ()
    return ToolUi(uri if type(uri) is str else None, audiences)
