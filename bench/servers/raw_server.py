"""Raw reference: the least a Python MCP echo server can do over stdio.

asyncio + orjson, newline-delimited JSON-RPC on stdin/stdout. stdin is read with
loop.connect_read_pipe + a StreamReader; replies are written straight through the
stdout pipe transport. Answers initialize, tools/list and tools/call, ping; ignores
notifications. No validation beyond what the answer needs: this is the floor the
frameworks are compared against, not a framework.

raw_order.py (W4) and raw_tools100.py (W5) serve other tool tables with the same loop.
"""

import asyncio
import sys
from collections.abc import Callable

import orjson

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
SERVER_INFO = {"name": "bench-echo", "version": "1.0.0"}

# name -> (definition as tools/list shows it, function from arguments to the call result)
Tools = dict[str, tuple[dict, Callable[[dict], dict]]]


def echo(arguments: dict) -> dict:
    return {"content": [{"type": "text", "text": arguments.get("text", "")}], "isError": False}


ECHO_TOOL = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}
TOOLS: Tools = {"echo": (ECHO_TOOL, echo)}


def answer(message: dict, tools: Tools, listing: dict) -> dict | None:
    """The response to one parsed message, or None for a notification."""
    if "id" not in message:
        return None
    msg_id = message["id"]
    method = message.get("method")
    params = message.get("params") or {}
    if method == "tools/call":
        tool = tools.get(params.get("name"))
        if tool is None:
            return error(msg_id, -32602, "Unknown tool")
        result = tool[1](params.get("arguments") or {})
    elif method == "initialize":
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else SUPPORTED_VERSIONS[-1]
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "tools/list":
        result = listing
    elif method == "ping":
        result = {}
    else:
        return error(msg_id, -32601, "Method not found")
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error(msg_id: object, code: int, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}}


async def serve(tools: Tools = TOOLS) -> None:
    listing = {"tools": [definition for definition, _ in tools.values()]}
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    writer, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout)
    while line := await reader.readline():
        if not line.strip():
            continue
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            reply = error(None, -32700, "Parse error")
        else:
            reply = answer(message, tools, listing) if isinstance(message, dict) else None
        if reply is not None:
            writer.write(orjson.dumps(reply) + b"\n")
    writer.close()


if __name__ == "__main__":
    asyncio.run(serve())
