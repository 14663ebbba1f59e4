"""`Server`: register tools with decorators, then serve them over any transport."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcpkit.errors import INVALID_PARAMS, MethodNotFound, ProtocolError
from mcpkit.protocol import Connection, ConnectionConfig, RequestReceived
from mcpkit.runtime import MessageTransport, Session
from mcpkit.server.tools import Tool

JSONObject = dict[str, Any]
F = TypeVar("F", bound=Callable[..., Any])
Handler = Callable[[Session, RequestReceived], "JSONObject | Awaitable[JSONObject]"]


class Server:
    """An MCP server: tools today; resources, prompts and the rest grow on the same registries."""

    def __init__(
        self,
        name: str,
        version: str = "0.0.0",
        *,
        instructions: str | None = None,
        title: str | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.instructions = instructions
        self.title = title
        self._tools: dict[str, Tool] = {}
        self._tools_list: JSONObject | None = None
        self._handlers: dict[str, Handler] = {
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
        }

    # -- registration ------------------------------------------------------------------------

    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: JSONObject | None = None,
    ) -> Callable[[F], F]:
        """Register the decorated function as a tool; its signature becomes the inputSchema."""

        def register(fn: F) -> F:
            self.add_tool(
                fn, name=name, title=title, description=description, annotations=annotations
            )
            return fn

        return register

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: JSONObject | None = None,
    ) -> Tool:
        tool = Tool(fn, name=name, title=title, description=description, annotations=annotations)
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._tools_list = None
        return tool

    def remove_tool(self, name: str) -> None:
        """Raises KeyError for an unknown name."""
        del self._tools[name]
        self._tools_list = None

    # -- serving -----------------------------------------------------------------------------

    def capabilities(self) -> JSONObject:
        return {"tools": {}} if self._tools else {}

    def connection_config(self) -> ConnectionConfig:
        info: JSONObject = {"name": self.name, "version": self.version}
        if self.title is not None:
            info["title"] = self.title
        return ConnectionConfig(
            role="server",
            info=info,
            capabilities=self.capabilities(),
            instructions=self.instructions,
        )

    async def serve(self, transport: MessageTransport) -> None:
        """Serve one connection until the peer goes away."""
        session = Session(
            Connection(self.connection_config()), transport, on_request=self._handle_request
        )
        await session.run()

    def run(self, transport: str = "stdio", **options: Any) -> None:
        """Serve from the command line: `transport="stdio"` (the default)."""
        from mcpkit.server._run import run

        run(self, transport, **options)

    def _handle_request(
        self, session: Session, request: RequestReceived
    ) -> JSONObject | Awaitable[JSONObject]:
        handler = self._handlers.get(request.method)
        if handler is None:
            raise MethodNotFound(request.method)
        return handler(session, request)

    # -- tools -------------------------------------------------------------------------------

    def _list_tools(self, session: Session, request: RequestReceived) -> JSONObject:
        if self._tools_list is None:
            self._tools_list = {"tools": [tool.definition for tool in self._tools.values()]}
        return self._tools_list

    def _call_tool(
        self, session: Session, request: RequestReceived
    ) -> JSONObject | Awaitable[JSONObject]:
        params = request.params or {}
        name = params.get("name")
        tool = self._tools.get(name) if type(name) is str else None
        if tool is None:
            raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}", {"name": name})
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise ProtocolError(INVALID_PARAMS, "tools/call arguments must be an object")
        return tool.call(arguments, session.connection.protocol_version)
