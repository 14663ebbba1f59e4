"""FastMCP 4.1.6's client (run with tests/peers.py: fastmcp_python) against an MCP Apps server
started as `argv` over stdio: reads every tool's and resource's `_meta.ui` through FastMCP's
own `AppConfig` (the model its app helpers write) and prints one JSON line of what it got."""

import asyncio
import json
import sys

from fastmcp import Client
from fastmcp.apps.config import UI_MIME_TYPE, AppConfig
from fastmcp.client.transports import StdioTransport


def app_config(meta: dict | None) -> dict | None:
    if not meta or "ui" not in meta:
        return None
    return AppConfig.model_validate(meta["ui"]).model_dump(by_alias=True, exclude_none=True)


async def main(argv: list[str]) -> None:
    async with Client(StdioTransport(argv[0], argv[1:])) as client:
        tools = {t.name: app_config(t.meta) for t in await client.list_tools()}
        resources = {}
        for resource in await client.list_resources():
            uri = str(resource.uri)
            (content,) = await client.read_resource(uri)
            resources[uri] = {
                "listed": app_config(resource.meta),
                "read": app_config(content.meta),
                "mimeType": content.mime_type,
                "is_app": content.mime_type == UI_MIME_TYPE,
            }
        linked = next(name for name, ui in tools.items() if ui and "resourceUri" in ui)
        shown = await client.call_tool(linked, {})
        print(
            json.dumps(
                {
                    "tools": tools,
                    "resources": resources,
                    "fallback": shown.content[0].text,
                }
            )
        )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
