"""Run by FastMCP's interpreter (tests/peers.py: fastmcp_python): FastMCP's client with its
OAuth helper calls `whoami` on URL and prints the text. Its browser is $BROWSER."""

import asyncio
import sys

from fastmcp import Client
from fastmcp.client.auth import OAuth


async def main(url: str) -> None:
    auth = OAuth(mcp_url=url, callback_host="127.0.0.1", callback_timeout=60)
    async with Client(url, auth=auth) as client:
        result = await client.call_tool("whoami", {})
        print(result.content[0].text)


asyncio.run(main(sys.argv[1]))
