"""MCP Apps in the Host: a tool's view, and the host side of the view's `postMessage` talk.

How this works. `load_view(host, server, tool)` reads the `ui://` resource a tool links
(`_meta.ui.resourceUri`) from its own server and returns a `View`: the HTML and what the
server declared for its sandbox (CSP domains, permissions, domain, border);
`content_security_policy(view.csp)` is the policy a renderer loads it under, and
`allow_attribute(view.permissions)` its iframe's `allow`.

Both work on a server of a `Host` (by name) or on any `ViewServer`: `ClientServer` is the one
server of a single `Client` (a front end such as the inspector), with an optional consent
policy.

`ViewBridge` is the host end of one rendered view, transport-free: a front end (a browser
page, a desktop webview) hands it every JSON-RPC message the view posts
(`await bridge.receive(message)`, which returns the answer to post back, or None), and gives
it a `send` callable for what the host starts (`ui/notifications/tool-input`, `tool-result`,
`host-context-changed`, `ui/resource-teardown`). It answers, by the 2026-01-26 text:

- `ui/initialize`: the host's capabilities, info and context (the tool the view shows, the
  display mode, what the application passed in `context`); `ping`.
- `tools/call`: only a tool of the view's own server (a name is looked up there and nowhere
  else, so another server's tools are unreachable), only one whose visibility includes
  "app", and only once the Host's consent policy allows the call (it may ask the user).
- `resources/read`: from the view's own server.
- `ui/open-link` (http and https only), `ui/message` (a user text message) and
  `ui/update-model-context`: only when the front end offers them (`ViewRequests`), which
  decides; otherwise -32601 and not claimed in the host's capabilities.
- `notifications/message` (logged, and `on_log`), `ui/notifications/size-changed` (`size`,
  and `on_size_changed`), `ui/request-display-mode` (granted when the host offers the mode
  and the view declared it; the answer is the mode in force).

Until the view sends `ui/notifications/initialized`, nothing is sent to it: what the host
starts waits in order and goes out then. A request before `ui/initialize` is refused, as is
anything malformed (a view is untrusted); an unknown request is -32601.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import inspect
import logging
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard
from urllib.parse import urlsplit

from mcpkit.client import Client
from mcpkit.errors import MCPError, ProtocolError
from mcpkit.host.consent import ConsentDenied, ConsentPolicy
from mcpkit.protocol.apps import APP_MIME_TYPE, APPS_PROTOCOL_VERSION, tool_ui

if TYPE_CHECKING:
    from mcpkit.host.host import Host
    from mcpkit.types import Tool

__all__ = [
    "ClientServer",
    "HostServer",
    "View",
    "ViewBridge",
    "ViewRequests",
    "ViewServer",
    "allow_attribute",
    "content_security_policy",
    "load_view",
]

JSONObject = dict[str, Any]
# Posts one message to the view, at once and in order (a front end that writes
# asynchronously queues it: `queue.put_nowait`).
Send = Callable[[JSONObject], None]
logger = logging.getLogger("mcpkit.host.apps")

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REFUSED = -32000  # the spec's implementation-defined denial
DISPLAY_MODES = ("inline", "fullscreen", "pip")
_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
_SOURCE = re.compile(r"[^\s;,'\"]+")  # one CSP source: nothing that starts another


# -- the view ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class View:
    """A tool's view as its server serves it: `html`, and the `_meta.ui` it declared (`csp`
    domain lists in camelCase, `permissions`, `domain`, `prefers_border`)."""

    server: str
    uri: str
    html: str
    csp: JSONObject = field(default_factory=dict)
    permissions: JSONObject = field(default_factory=dict)
    domain: str | None = None
    prefers_border: bool | None = None


async def load_view(host: Host | None, server: str | ViewServer, tool: str) -> View | None:
    """The view the tool `tool` (its server's own name for it) renders in; None for a tool
    without one. `server`: a server of `host` by name, or a `ViewServer` (host None).

    Raises KeyError (no such tool on that server), ValueError (the resource read is not a
    `text/html;profile=mcp-app` document), TypeError (a name without a host),
    ServerUnavailable and the client's errors.
    """
    peer = view_server(host, server)
    found = await peer.tool(tool)
    if found is None:
        raise KeyError(f"server {peer.name!r} has no tool named {tool!r}")
    uri = tool_ui(found.meta).resource_uri
    if uri is None:
        return None
    read = await peer.client().read_resource(uri)
    item = next((c for c in read.to_wire().get("contents", []) if c.get("uri") == uri), None)
    if item is None or item.get("mimeType") != APP_MIME_TYPE:
        raise ValueError(f"{uri} (server {peer.name!r}) is not served as {APP_MIME_TYPE}")
    ui = (item.get("_meta") or {}).get("ui")
    ui = ui if type(ui) is dict else {}
    border = ui.get("prefersBorder")
    domain = ui.get("domain")
    return View(
        server=peer.name,
        uri=uri,
        html=_html(item, uri),
        csp=ui["csp"] if type(ui.get("csp")) is dict else {},
        permissions=ui["permissions"] if type(ui.get("permissions")) is dict else {},
        domain=domain if type(domain) is str else None,
        prefers_border=border if type(border) is bool else None,
    )


def _html(item: JSONObject, uri: str) -> str:
    if type(item.get("text")) is str:
        return str(item["text"])
    try:
        return base64.b64decode(item.get("blob") or "", validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, TypeError):
        raise ValueError(f"{uri}: neither text nor a base64 UTF-8 blob") from None


def content_security_policy(csp: Mapping[str, Any] | None) -> str:
    """The Content-Security-Policy a view is loaded under, from its declared `csp` (the
    spec's construction; no declaration: its restrictive default). A declared entry that is
    not one CSP source (a space, `;`, `,` or a quote: it would add sources or directives) is
    dropped, never passed on."""

    def domains(key: str) -> list[str]:
        given = (csp or {}).get(key)
        if type(given) is not list:
            return []
        return [d for d in given if type(d) is str and _SOURCE.fullmatch(d)]

    def directive(name: str, base: str, extra: list[str]) -> str:
        return " ".join([name, base, *extra]) if base else " ".join([name, *extra])

    resources, connect = domains("resourceDomains"), domains("connectDomains")
    frames, bases = domains("frameDomains"), domains("baseUriDomains")
    parts = [
        "default-src 'none'",
        directive("script-src", "'self' 'unsafe-inline'", resources),
        directive("style-src", "'self' 'unsafe-inline'", resources),
        directive("img-src", "'self' data:", resources),
        directive("font-src", "'self'", resources),
        directive("media-src", "'self' data:", resources),
        directive("connect-src", "'self'", connect) if connect else "connect-src 'none'",
        directive("frame-src", "", frames) if frames else "frame-src 'none'",
        "object-src 'none'",
        directive("base-uri", "", bases) if bases else "base-uri 'self'",
    ]
    return "; ".join(parts)


_FEATURES = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}


def allow_attribute(permissions: Mapping[str, Any] | None) -> str:
    """The inner iframe's `allow` attribute (Permission Policy) for a view's declared
    `permissions`: the features the spec names, nothing else (an unknown key is dropped)."""
    return "; ".join(
        f for key, f in _FEATURES.items() if type((permissions or {}).get(key)) is dict
    )


# -- the bridge -------------------------------------------------------------------------------


class ViewServer(Protocol):
    """What a bridge needs of the server behind a view: its tools by its own names (app-only
    ones included), the consent check of a call, its client. `HostServer` (a Host's server)
    and `ClientServer` (one client, as a single-server front end such as the inspector has)
    are the two there are."""

    name: str

    async def tool(self, name: str) -> Tool | None: ...

    async def check(self, tool: Tool, arguments: JSONObject | None) -> None: ...

    def client(self) -> Client: ...


class HostServer:
    """A server of a `Host`: its configuration's offer, the Host's consent policy."""

    def __init__(self, host: Host, name: str) -> None:
        self.host = host
        self.name = name

    async def tool(self, name: str) -> Tool | None:
        return await self.host.tools.server_tool(self.name, name)

    async def check(self, tool: Tool, arguments: JSONObject | None) -> None:
        await self.host.consent.check_tool(self.name, tool, arguments)

    def client(self) -> Client:
        return self.host.servers.client(self.name)


class ClientServer:
    """The one server of a `Client`; calls go through `consent` when given (a
    `ConsentPolicy`; None: the application decided, as `call_tool(consent=False)`)."""

    def __init__(self, client: Client, name: str, consent: ConsentPolicy | None = None) -> None:
        self._client = client
        self.name = name
        self.consent = consent

    async def tool(self, name: str) -> Tool | None:
        return next((t for t in await self._client.list_all_tools() if t.name == name), None)

    async def check(self, tool: Tool, arguments: JSONObject | None) -> None:
        if self.consent is not None:
            await self.consent.check_tool(self.name, tool, arguments)

    def client(self) -> Client:
        return self._client


def view_server(host: Host | None, server: str | ViewServer) -> ViewServer:
    """`server` as a ViewServer: a name is a server of `host`. Raises TypeError for a name
    without a host."""
    if not isinstance(server, str):
        return server
    if host is None:
        raise TypeError(f"the server {server!r} is named: give its Host")
    return HostServer(host, server)


Decide = Callable[[Any], "Awaitable[bool] | bool"]


@dataclass(frozen=True, slots=True)
class ViewRequests:
    """What the front end does for a view's own requests, each given what the view sent and
    answering whether it was done (False: refused, -32000). One left None is not offered:
    -32601, and not claimed in the host's capabilities.

    `open_link(url)`: `ui/open-link` (only http and https URLs reach it); `message(params)`:
    `ui/message` (a user text message for the conversation); `model_context(params)`:
    `ui/update-model-context` (content and/or structuredContent for the model's next turns).
    """

    open_link: Decide | None = None
    message: Decide | None = None
    model_context: Decide | None = None


class _Refused(MCPError):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ViewBridge:
    """The host end of one rendered view of `server` (see the module docstring): a server of
    `host` by its name, or a `ViewServer` (`ClientServer(client, name, consent)` for a front
    end holding one client; `host` is then None).

    `send`: posts a message to the view (called in order; it does not wait). `tool` and
    `tool_call_id`: the tool call the view shows (its definition goes to the view as
    `hostContext.toolInfo`).
    `context`: more host context (theme, locale, containerDimensions, styles, ...; the
    spec's camelCase names). `display_modes`: the modes the front end can show.
    `sandbox`: what the front end applied (`hostCapabilities.sandbox`: csp, permissions).
    `on_log(params)`, `on_size_changed(width, height)`: the view's logging and size.
    `requests`: what the front end does for `ui/open-link`, `ui/message` and
    `ui/update-model-context` (`ViewRequests`; none by default).
    """

    def __init__(
        self,
        host: Host | None,
        server: str | ViewServer,
        send: Send,
        *,
        tool: Tool | None = None,
        tool_call_id: str | int | None = None,
        context: Mapping[str, Any] | None = None,
        display_modes: Iterable[str] = ("inline",),
        sandbox: Mapping[str, Any] | None = None,
        host_info: Mapping[str, Any] | None = None,
        on_log: Callable[[JSONObject], None] | None = None,
        on_size_changed: Callable[[float, float], None] | None = None,
        requests: ViewRequests | None = None,
    ) -> None:
        self.peer = view_server(host, server)
        self.server = self.peer.name
        self._send = send
        self.display_modes = tuple(m for m in display_modes if m in DISPLAY_MODES) or ("inline",)
        self.context: JSONObject = {
            "displayMode": self.display_modes[0],
            "availableDisplayModes": list(self.display_modes),
            **(context or {}),
        }
        if tool is not None:
            tool_info: JSONObject = {"tool": tool.to_wire()}
            if tool_call_id is not None:
                tool_info["id"] = tool_call_id
            self.context["toolInfo"] = tool_info
        self._sandbox = dict(sandbox or {})
        self._host_info = dict(host_info or {"name": "mcpkit", "version": _version()})
        self.on_log = on_log
        self.on_size_changed = on_size_changed
        self.requests = requests or ViewRequests()
        self.answered_initialize = False  # ui/initialize answered: the view may call
        self.initialized = False  # ui/notifications/initialized received: we may send
        self.app_capabilities: JSONObject = {}
        self.app_info: JSONObject = {}
        self.size: tuple[float, float] | None = None
        self._waiting: list[JSONObject] = []  # what we started before the view was ready
        self._next_id = 0
        self._pending: dict[int, Callable[[JSONObject], None]] = {}

    # -- what the view sends ------------------------------------------------------------------

    async def receive(self, message: Any) -> JSONObject | None:
        """Handle one message the view posted; the answer to post back (None for a
        notification, a response, or something malformed without an id)."""
        if type(message) is not dict or message.get("jsonrpc") != "2.0":
            return None  # not JSON-RPC: nothing to answer to
        if "id" not in message:
            if type(message.get("method")) is str:
                self._notification(message["method"], message.get("params", {}))
            return None
        if "method" not in message:
            self._response(message)
            return None
        return await self._answer(message)

    async def _answer(self, message: JSONObject) -> JSONObject:
        request_id = message["id"]
        if type(request_id) not in (str, int) or type(request_id) is bool:
            return _error(None, INVALID_REQUEST, "a request id is a string or an integer")
        method, params = message["method"], message.get("params", {})
        try:
            if type(method) is not str:
                raise _Refused(INVALID_REQUEST, "a request needs a method name")
            if type(params) is not dict:
                raise _Refused(INVALID_PARAMS, "params must be an object")
            result = await self._request(method, params)
        except _Refused as refused:
            logger.info("view of %s: %s refused: %s", self.server, method, refused.message)
            return _error(request_id, refused.code, refused.message)
        except ProtocolError as exc:  # the server's own answer, passed on
            return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_error_object()}
        except MCPError as exc:  # the connection failed: named, its details kept in our log
            logger.warning("view of %s: %s failed: %s", self.server, method, exc)
            reason = f"the server could not answer ({type(exc).__name__})"
            return _error(request_id, INTERNAL_ERROR, reason)
        except RuntimeError as exc:  # its client was closed (the server stopped or was removed)
            logger.warning("view of %s: %s: %s", self.server, method, exc)
            return _error(request_id, INTERNAL_ERROR, "the server is not connected")
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    async def _request(self, method: str, params: JSONObject) -> JSONObject:
        if method == "ui/initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        if not self.answered_initialize:
            raise _Refused(INVALID_REQUEST, f"{method} before ui/initialize")
        if method == "tools/call":
            return await self._call_tool(params)
        if method == "resources/read":
            return await self._read_resource(params)
        if method == "ui/request-display-mode":
            return self._display_mode(params)
        if method in _VIEW_REQUESTS:
            return await self._front_end(method, params)
        raise _Refused(METHOD_NOT_FOUND, f"Method not found: {method}")

    async def _front_end(self, method: str, params: JSONObject) -> JSONObject:
        """`ui/open-link`, `ui/message`, `ui/update-model-context`: checked here, decided
        by the front end's `ViewRequests`."""
        field, check = _VIEW_REQUESTS[method]
        decide = getattr(self.requests, field)
        if decide is None:
            raise _Refused(METHOD_NOT_FOUND, f"Method not found: {method}")
        given = check(params)
        if given is None:
            raise _Refused(INVALID_PARAMS, f"{method}: malformed params")
        done = decide(given)
        if inspect.isawaitable(done):
            done = await done
        if done is not True:
            raise _Refused(REFUSED, f"{method}: refused by the host")
        return {}

    def _initialize(self, params: JSONObject) -> JSONObject:
        if self.answered_initialize:
            raise _Refused(INVALID_REQUEST, "the view is initialized already")
        capabilities = params.get("appCapabilities")
        self.app_capabilities = capabilities if type(capabilities) is dict else {}
        info = params.get("appInfo")
        self.app_info = info if type(info) is dict else {}
        self.answered_initialize = True
        host_capabilities: JSONObject = {"serverTools": {}, "serverResources": {}, "logging": {}}
        if self.requests.open_link is not None:
            host_capabilities["openLinks"] = {}
        if self._sandbox:
            host_capabilities["sandbox"] = self._sandbox
        return {
            "protocolVersion": APPS_PROTOCOL_VERSION,
            "hostCapabilities": host_capabilities,
            "hostInfo": self._host_info,
            "hostContext": dict(self.context),
        }

    async def _call_tool(self, params: JSONObject) -> JSONObject:
        name, arguments = params.get("name"), params.get("arguments")
        if type(name) is not str or (arguments is not None and type(arguments) is not dict):
            raise _Refused(INVALID_PARAMS, "tools/call needs a name and object arguments")
        # Looked up on this view's server only: another server's tools have no name here.
        tool = await self.peer.tool(name)
        if tool is None:
            raise _Refused(INVALID_PARAMS, f"Unknown tool: {name}")
        if not tool_ui(tool.meta).for_app:
            raise _Refused(REFUSED, f"tool {name!r} is not callable from a view (visibility)")
        try:
            await self.peer.check(tool, arguments)
        except ConsentDenied as exc:
            raise _Refused(REFUSED, f"tool {name!r}: {exc}") from None
        client = self._client()
        result = await client.call_tool(name, arguments)
        return result.to_wire()

    async def _read_resource(self, params: JSONObject) -> JSONObject:
        uri = params.get("uri")
        if type(uri) is not str:
            raise _Refused(INVALID_PARAMS, "resources/read needs a uri")
        read = await self._client().read_resource(uri)
        return read.to_wire()

    def _client(self) -> Client:
        try:
            return self.peer.client()
        except (KeyError, MCPError) as exc:
            raise _Refused(REFUSED, f"server {self.server!r} is not available: {exc}") from None

    def _display_mode(self, params: JSONObject) -> JSONObject:
        mode = params.get("mode")
        declared = self.app_capabilities.get("availableDisplayModes")
        view_has = type(declared) is not list or mode in declared
        if mode in self.display_modes and view_has:
            self.context["displayMode"] = mode  # the answer tells the view; no notification
        return {"mode": self.context["displayMode"]}

    def _notification(self, method: str, params: Any) -> None:
        params = params if type(params) is dict else {}
        if method == "ui/notifications/initialized":
            if self.answered_initialize and not self.initialized:
                self.initialized = True
                waiting, self._waiting = self._waiting, []
                for message in waiting:
                    self._post(message)
        elif method == "notifications/message":
            self._log(params)
        elif method == "ui/notifications/size-changed":
            self._resized(params)
        else:
            logger.debug("view of %s: ignored notification %s", self.server, method)

    def _log(self, params: JSONObject) -> None:
        level = _LOG_LEVELS.get(params.get("level"), logging.INFO)  # type: ignore[arg-type]
        data = repr(params.get("data"))[:2000]
        logger.log(level, "view of %s says: %s", self.server, data)
        if self.on_log is not None:
            self.on_log(params)

    def _resized(self, params: JSONObject) -> None:
        width, height = params.get("width"), params.get("height")
        if _dimension(width) and _dimension(height):  # anything else is ignored
            self.size = (float(width), float(height))
            if self.on_size_changed is not None:
                self.on_size_changed(*self.size)

    def _response(self, message: JSONObject) -> None:
        settle = self._pending.pop(message["id"], None) if type(message["id"]) is int else None
        if settle is not None:
            settle(message)

    # -- what the host sends ------------------------------------------------------------------

    def update_context(self, changes: Mapping[str, Any]) -> None:
        """Change the host context (theme, displayMode, containerDimensions, ...): the view
        gets `ui/notifications/host-context-changed` with `changes` (once it is ready; before
        `ui/initialize`, the context it will be given holds them)."""
        self.context.update(changes)
        if self.answered_initialize:
            self._notify("ui/notifications/host-context-changed", dict(changes))

    def tool_input(self, arguments: Mapping[str, Any]) -> None:
        """The arguments of the tool call the view shows (`ui/notifications/tool-input`)."""
        self._notify("ui/notifications/tool-input", {"arguments": dict(arguments)})

    def tool_result(self, result: Mapping[str, Any]) -> None:
        """The CallToolResult (wire form) of that call (`ui/notifications/tool-result`)."""
        self._notify("ui/notifications/tool-result", dict(result))

    def tool_cancelled(self, reason: str = "") -> None:
        """That call was cancelled (`ui/notifications/tool-cancelled`)."""
        self._notify("ui/notifications/tool-cancelled", {"reason": reason})

    async def teardown(self, reason: str = "") -> JSONObject | None:
        """Tell a ready view it is going away (`ui/resource-teardown`); the view's answer, or
        None when it was never ready (nothing may be sent to it). It waits for the answer:
        bound it with `asyncio.timeout` (the spec: a host SHOULD wait)."""
        if not self.initialized:
            return None
        self._next_id += 1
        request_id = self._next_id
        answered: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answered.set_result
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "ui/resource-teardown",
            "params": {"reason": reason},
        }
        self._post(message)
        return await answered

    def _notify(self, method: str, params: JSONObject) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if self.initialized:
            self._post(message)
        else:
            self._waiting.append(message)

    def _post(self, message: JSONObject) -> None:
        self._send(message)


def _link(params: JSONObject) -> str | None:
    """An http(s) URL with a host (never javascript:, data:, file: ...), or None."""
    url = params.get("url")
    if type(url) is not str:
        return None
    parts = urlsplit(url)
    return url if parts.scheme in ("http", "https") and parts.netloc else None


def _user_message(params: JSONObject) -> JSONObject | None:
    content = params.get("content")
    if params.get("role") != "user" or type(content) is not dict:
        return None
    return params if content.get("type") == "text" and type(content.get("text")) is str else None


def _model_context(params: JSONObject) -> JSONObject | None:
    content, structured = params.get("content"), params.get("structuredContent")
    if content is not None and type(content) is not list:
        return None
    if structured is not None and type(structured) is not dict:
        return None
    return params


# method -> (the ViewRequests field deciding it, the check of its params)
_VIEW_REQUESTS: dict[str, tuple[str, Callable[[JSONObject], Any]]] = {
    "ui/open-link": ("open_link", _link),
    "ui/message": ("message", _user_message),
    "ui/update-model-context": ("model_context", _model_context),
}


def _error(request_id: Any, code: int, message: str) -> JSONObject:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _dimension(value: Any) -> TypeGuard[float]:
    return type(value) in (int, float) and math.isfinite(value) and value >= 0


def _version() -> str:
    from mcpkit._version import __version__

    return __version__
