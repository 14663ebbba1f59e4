"""MCP Apps views rendered by the inspector's page: one `ViewBridge` per view, over the
inspector's one client (`ClientServer`), and what the sandbox server (sandbox.py) serves.

The page asks for a view after a tool call whose tool links one (`open`); the answer names
the view by a fresh random id and gives the sandbox proxy's URL on the other origin. The
page relays each JSON-RPC message the view posts (`receive`); the answer carries the
bridge's reply and whatever the host posts to the view meanwhile (the call's tool-input and
tool-result wait in the bridge until the view says it is initialized, and come back in the
answer to that notification), so the page needs no second channel.

A view belongs to the connection it was opened on: after a reconnect (another server, or
the same one again) its messages are refused, so an old view never reaches a new server.
The view's log lines and the browser's CSP violation reports go to the page's log.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpkit.errors import MCPError
from mcpkit.host.apps import (
    ClientServer,
    View,
    ViewBridge,
    allow_attribute,
    content_security_policy,
    load_view,
)

if TYPE_CHECKING:
    from mcpkit.client import Client
    from mcpkit.inspector.connection import InspectedServer
    from mcpkit.inspector.history import History
    from mcpkit.types import Tool

JSONObject = dict[str, Any]
MAX_VIEWS = 32  # views kept per page session; the oldest is dropped first
REFUSED = -32000
# the page sizes the iframe to the height the view reports, up to apps.js's MAX_HEIGHT
HOST_CONTEXT = {"platform": "web", "theme": "light", "containerDimensions": {"maxHeight": 4000}}


class ViewError(MCPError):
    """A view cannot be opened (not connected, no such tool, no view, a bad resource)."""


@dataclass
class OpenView:
    """One rendered view: its bridge, its HTML (served once), what it posted meanwhile."""

    view: View
    bridge: ViewBridge
    client: Client
    outbox: list[JSONObject] = field(default_factory=list)
    html_served: bool = False


class Views:
    """The views the page rendered, by id. `sandbox_origin` is set once its server listens."""

    def __init__(self, connection: InspectedServer, history: History) -> None:
        self.connection = connection
        self.history = history
        self.sandbox_origin = ""
        self._open: dict[str, OpenView] = {}

    async def open(
        self, tool_name: str, arguments: JSONObject, result: JSONObject, call_id: Any = None
    ) -> JSONObject:
        """Load the view of `tool_name` for a call's `arguments` and `result`: the id, the
        proxy URL and the sandbox it is loaded in. Raises ViewError."""
        client = self.connection.client
        if client is None:
            raise ViewError("not connected")
        name = self.connection.target or "server"
        server = ClientServer(client, name)
        try:
            view = await load_view(None, server, tool_name)
        except (KeyError, ValueError) as exc:
            raise ViewError(str(exc)) from None
        if view is None:
            raise ViewError(f"the tool {tool_name!r} has no view")
        view_id = secrets.token_urlsafe(18)  # the sandbox's only key: unguessable, one view
        tool = await server.tool(tool_name)
        opened = self._add(view_id, view, server, client, tool=tool, call_id=call_id)
        opened.bridge.tool_input(arguments)
        opened.bridge.tool_result(result)
        self._audit(view)
        return {
            "id": view_id,
            "url": f"{self.sandbox_origin}/proxy/{view_id}",
            "origin": self.sandbox_origin,
            "uri": view.uri,
            "csp": content_security_policy(view.csp),
            "allow": allow_attribute(view.permissions),
            "prefersBorder": view.prefers_border,
        }

    def _add(
        self,
        view_id: str,
        view: View,
        server: ClientServer,
        client: Client,
        *,
        tool: Tool | None,
        call_id: Any,
    ) -> OpenView:
        outbox: list[JSONObject] = []
        bridge = ViewBridge(
            None,
            server,
            outbox.append,
            tool=tool,
            tool_call_id=call_id,
            context=HOST_CONTEXT,
            sandbox={"csp": view.csp, "permissions": view.permissions},
            on_log=lambda params: self._log(view, params),
        )
        opened = OpenView(view, bridge, client, outbox)
        self._open[view_id] = opened
        while len(self._open) > MAX_VIEWS:
            del self._open[next(iter(self._open))]
        return opened

    async def receive(self, view_id: str, message: Any) -> JSONObject:
        """One message the view posted: {"answer": reply or None, "posts": [what the host
        sends the view now]}. Raises KeyError for an unknown view."""
        opened = self._open[view_id]
        if opened.client is not self.connection.client:
            return {"answer": _gone(message), "posts": []}
        answer = await opened.bridge.receive(message)
        posts, opened.outbox[:] = list(opened.outbox), []
        return {"answer": answer, "posts": posts}

    def html(self, view_id: str) -> tuple[str, str] | None:
        """The view's HTML and its CSP, once (a second load is refused); None if unknown."""
        opened = self._open.get(view_id)
        if opened is None or opened.html_served:
            return None
        opened.html_served = True
        return opened.view.html, content_security_policy(opened.view.csp)

    def allow(self, view_id: str) -> str | None:
        """The inner iframe's `allow` attribute for a known view (None: unknown)."""
        opened = self._open.get(view_id)
        return None if opened is None else allow_attribute(opened.view.permissions)

    def csp_report(self, view_id: str, report: Any) -> None:
        """A CSP violation the browser reported for a view: shown in the page's log."""
        opened = self._open.get(view_id)
        body = report.get("csp-report") if isinstance(report, dict) else None
        if opened is None or not isinstance(body, dict):
            return
        blocked = str(body.get("blocked-uri", ""))[:500]
        directive = str(body.get("violated-directive", body.get("effective-directive", "")))
        text = f"CSP blocked {blocked or 'a request'} ({directive[:200]})"
        self._publish(opened.view, "warning", text)

    def _log(self, view: View, params: JSONObject) -> None:
        level = params.get("level") if isinstance(params.get("level"), str) else "info"
        self._publish(view, str(level), params.get("data"))

    def _audit(self, view: View) -> None:
        # the spec's audit trail: the policy each view is loaded under
        self._publish(view, "info", f"rendered under: {content_security_policy(view.csp)}")

    def _publish(self, view: View, level: str, data: Any) -> None:
        params = {"level": level, "logger": f"view {view.uri}", "data": data}
        self.history.publish(
            {"type": "notification", "method": "notifications/message", "params": params}
        )


def _gone(message: Any) -> JSONObject | None:
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return None
    error = {"code": REFUSED, "message": "the view's server connection has ended"}
    return {"jsonrpc": "2.0", "id": message["id"], "error": error}
