"""What a client knows of the server's tools, kept from every `tools/list` it reads.

`call_tool` needs a tool's definition twice: its `outputSchema` to check the structured result,
and (2026-07-28 over HTTP) its `x-mcp-header` annotations to build the request's `Mcp-Param-*`
headers. The catalog keeps both per tool name, forgets them on `tools/list_changed` (a new
generation), and lists every tool at most once per generation when a call names a tool it has
not seen (`fetch`, shared by concurrent calls; a failure is logged and not retried until the
next list_changed). Tools whose header annotations are invalid are dropped from the listing,
as the spec requires, with a warning naming the tool.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcpkit.client._jsonschema import schema_errors
from mcpkit.protocol.http_headers import InvalidHeaderAnnotation, header_paths

if TYPE_CHECKING:
    from mcpkit.types import CallToolResult, ListToolsResult, Tool

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.client")


class ToolCatalog:
    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}  # every definition seen in tools/list
        self._output_schemas: dict[str, JSONObject] = {}  # their outputSchemas, as sent
        self._header_paths: dict[str, dict[str, tuple[str, ...]]] = {}  # x-mcp-header paths
        self.generation = 0  # bumped by tools/list_changed
        self.complete = False  # a full listing of this generation was seen (or tried)
        self._fetch: asyncio.Task[None] | None = None

    def remember(self, page: ListToolsResult, *, with_headers: bool) -> ListToolsResult:
        """Keep the page's definitions (and, `with_headers`, their header paths); the page,
        without tools whose header annotations are invalid."""
        if with_headers:
            page = self._with_header_paths(page)
        for tool in page.tools:
            self.tools[tool.name] = tool
            if tool.output_schema is not None:
                self._output_schemas[tool.name] = tool.output_schema.to_wire()
            else:
                self._output_schemas.pop(tool.name, None)
        return page

    def forget(self) -> None:
        """The server's tools changed: what was known belongs to the last generation."""
        self.tools.clear()
        self._output_schemas.clear()
        self._header_paths.clear()
        self.generation += 1
        self.complete = False

    def knows(self, name: str) -> bool:
        """Whether a call to `name` can be checked without listing first."""
        return name in self.tools or self.complete

    def header_paths_for(self, name: str) -> Mapping[str, tuple[str, ...]] | None:
        """The HTTP transport's callback: the headers a call to `name` carries."""
        return self._header_paths.get(name)

    def output_problems(self, name: str, result: CallToolResult) -> list[str]:
        """What is wrong with a result against its tool's outputSchema (nothing without one)."""
        schema = self._output_schemas.get(name)
        if schema is None:
            return []
        if result.structured_content is None:
            return ["the tool declares an outputSchema but returned no structuredContent"]
        return schema_errors(schema, result.structured_content)

    def fetch(self, list_all: Callable[[], Awaitable[Any]]) -> asyncio.Task[None]:
        """List every tool once for this generation (shared by concurrent calls)."""
        if self._fetch is None or self._fetch.done():
            self._fetch = asyncio.get_running_loop().create_task(self._list_quietly(list_all))
        return self._fetch

    def close(self) -> None:
        if self._fetch is not None:
            self._fetch.cancel()

    async def _list_quietly(self, list_all: Callable[[], Awaitable[Any]]) -> None:
        generation = self.generation
        try:
            await list_all()
        except Exception as exc:
            logger.debug("could not list tools to validate tool output: %s", exc)
            if generation == self.generation:
                self.complete = True  # tried once; again after the next list_changed

    def _with_header_paths(self, page: ListToolsResult) -> ListToolsResult:
        paths = self._header_paths
        kept = []
        for tool in page.tools:
            try:
                found = header_paths(tool.input_schema.to_wire())
            except InvalidHeaderAnnotation as exc:
                logger.warning(
                    "ignoring tool %r: invalid x-mcp-header annotation: %s", tool.name, exc
                )
                paths.pop(tool.name, None)
                continue
            if found:
                paths[tool.name] = found
            else:
                paths.pop(tool.name, None)
            kept.append(tool)
        if len(kept) == len(page.tools):
            return page
        return page.model_copy(update={"tools": kept})
