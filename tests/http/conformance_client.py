"""An mcpkit client program for the official conformance suite's client scenarios.

    npx @modelcontextprotocol/conformance@0.1.16 client \
        --command "python tests/http/conformance_client.py" --scenario sse-retry

The suite appends the server URL and names the scenario in `MCP_CONFORMANCE_SCENARIO`. The
program connects over Streamable HTTP, lists the tools and calls the ones each scenario
watches for: `add_numbers` (tools_call), `test_reconnection` (sse-retry) and
`test_client_elicitation_defaults` (elicitation-sep1034-client-defaults, answered by accepting
with no content, so the client must fill in the schema's defaults).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from mcpkit import Client
from mcpkit.client import Elicitation

CALLS: dict[str, dict[str, Any]] = {
    "add_numbers": {"a": 5, "b": 3},
    "test_reconnection": {},
    "test_client_elicitation_defaults": {},
}


async def main(url: str) -> None:
    options: dict[str, Any] = {}
    if os.environ.get("MCP_CONFORMANCE_SCENARIO", "").startswith("elicitation"):
        options["elicitation"] = Elicitation(lambda params: {"action": "accept", "content": {}})
    async with Client(url, timeout=20, **options) as client:
        if not client.supports("tools"):
            return
        for tool in await client.list_all_tools():
            if tool.name in CALLS:
                print(await client.call_tool(tool.name, CALLS[tool.name]))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[-1]))
