"""An mcpkit client program for the official conformance suite's client scenarios.

    node conformance/dist/index.js client --requirements 2026-07-28 \
        --command "python tests/http/conformance_client.py"

The suite appends the server URL, names the scenario in `MCP_CONFORMANCE_SCENARIO` and may
give the tool calls it expects in `MCP_CONFORMANCE_CONTEXT` (`toolCalls`). The program is a
plain user of `Client` in its default mode (the era comes from the probe). It calls every
listed tool, with the context's arguments, `add_numbers` with 5 and 3, and `json_schema_echo`
with the input schema it saw for `json_schema_2020_12_tool` (the suite checks nothing was
stripped); then it reads every resource and gets every prompt. Servers that ask for input get
a sampling answer, an accepted form, and one root. In the `elicitation-*` scenarios the form
is accepted with no content, so the client must fill in the schema's defaults (SEP-1034).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable
from typing import Any

from mcpkit import Client
from mcpkit.errors import ProtocolError

JSONObject = dict[str, Any]
ARGUMENTS: dict[str, JSONObject] = {"add_numbers": {"a": 5, "b": 3}}


async def sample(params: Any) -> JSONObject:
    return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}


async def elicit(params: Any) -> JSONObject:
    if os.environ.get("MCP_CONFORMANCE_SCENARIO", "").startswith("elicitation"):
        return {"action": "accept", "content": {}}
    fields = params.requested_schema.to_wire().get("properties", {})
    content = {k: True if v.get("type") == "boolean" else "x" for k, v in fields.items()}
    return {"action": "accept", "content": content}


def expected_calls() -> dict[str, JSONObject]:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    calls = dict(ARGUMENTS)
    calls.update({c["name"]: c.get("arguments", {}) for c in context.get("toolCalls", [])})
    return calls


async def main(url: str) -> None:
    calls = expected_calls()
    async with Client(
        url, timeout=20, sampling=sample, elicitation=elicit, roots=["file:///tmp"]
    ) as client:
        print("era:", client.era, client.protocol_version, file=sys.stderr)
        if client.supports("tools"):
            await call_tools(client, calls)
        if client.supports("resources"):
            for resource in await client.list_all_resources():
                await attempt(client.read_resource(resource.uri))
        if client.supports("prompts"):
            for prompt in await client.list_all_prompts():
                arguments = {a.name: "x" for a in prompt.arguments or [] if a.required}
                await attempt(client.get_prompt(prompt.name, arguments))


async def call_tools(client: Client, calls: dict[str, JSONObject]) -> None:
    tools = await client.list_all_tools()
    schemas = {tool.name: tool.input_schema.to_wire() for tool in tools}
    if "json_schema_2020_12_tool" in schemas:
        calls["json_schema_echo"] = {"schema": schemas["json_schema_2020_12_tool"]}
    for tool in tools:
        await attempt(client.call_tool(tool.name, calls.get(tool.name, {})))


async def attempt(request: Awaitable[Any]) -> None:
    try:
        print(await request)
    except ProtocolError as exc:  # some scenarios' servers answer only the list requests
        print(exc, file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[-1]))
