"""The `Mcp-Param-*` headers of the upstream's tools, for the proxy's own HTTP endpoint.

A 2026-07-28 server must refuse a `tools/call` whose `Mcp-Param-*` headers do not match its
arguments (SEP-2243: 400, -32020), and the proxy is that server to its clients: the upstream
cannot check headers it never sees (the upstream client writes its own from the arguments).
The proxy learns each tool's header annotations (`x-mcp-header` in its inputSchema) from the
upstream's tools/list answers (listed when the proxy starts, and every listing it forwards)
and its HTTP transport checks downstream requests against them as our server does its own.
What the upstream's tools/list_changed makes stale is forgotten until the next listing.
"""

from __future__ import annotations

from typing import Any

from mcpkit.protocol.http_headers import HeaderPaths, InvalidHeaderAnnotation, header_paths


class ToolHeaders:
    """Tool name -> its Mcp-Param headers (the HTTP transport's `tool_headers` callback)."""

    def __init__(self) -> None:
        self._paths: dict[str, HeaderPaths] = {}

    def __call__(self, name: str) -> HeaderPaths | None:
        return self._paths.get(name)

    def learn(self, tools: Any) -> None:
        """Keep the header annotations of `tools` (a tools/list answer's list, as sent)."""
        if type(tools) is not list:
            return
        for tool in tools:
            name = tool.get("name") if type(tool) is dict else None
            if type(name) is not str:
                continue
            try:
                found = header_paths(tool.get("inputSchema"))
            except InvalidHeaderAnnotation:  # clients drop such a tool: nothing to check
                found = {}
            if found:
                self._paths[name] = found
            else:
                self._paths.pop(name, None)

    def forget(self) -> None:
        """The upstream's tools changed."""
        self._paths.clear()
