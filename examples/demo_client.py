"""Start the demo server as a subprocess and call its tools: `python examples/demo_client.py`."""

import asyncio
import sys
from pathlib import Path

from mcpkit import Client

SERVER = Path(__file__).with_name("demo_server.py")


async def main() -> None:
    async with Client([sys.executable, str(SERVER)]) as client:
        print(f"connected to {client.server_info['name']} ({client.protocol_version})")
        tools = await client.list_tools()
        print("tools:", ", ".join(tool.name for tool in tools.tools))
        result = await client.call_tool("add", {"a": 2, "b": 3})
        print("add(2, 3) =", result.content[0].text)
        result = await client.call_tool("greet", {"name": "world"})
        print("greet:", result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
