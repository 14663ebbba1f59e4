"""FastMCP 4.1.6's client (run with tests/peers.py: fastmcp_python) against a URL: lists the
tools, calls `add` and prints what it got as one JSON line."""

import asyncio
import json
import sys

from fastmcp import Client


async def main(url: str) -> None:
    async with Client(url) as client:
        tools = await client.list_tools()
        result = await client.call_tool("add", {"a": 20, "b": 22})
        print(
            json.dumps({"tools": sorted(t.name for t in tools), "add": result.structured_content})
        )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
