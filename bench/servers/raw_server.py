"""Raw reference: the least a Python MCP echo server can do over stdio.

asyncio + orjson, newline-delimited JSON-RPC on stdin/stdout. stdin is read with
loop.connect_read_pipe + a StreamReader; replies are written straight through the
stdout pipe transport. Answers initialize, tools/list and tools/call (echo), ping;
ignores notifications. No validation beyond what the answer needs: this is the
floor the frameworks are compared against, not a framework.
"""

import asyncio
import sys

import orjson

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ECHO_TOOL = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}
SERVER_INFO = {"name": "bench-echo", "version": "1.0.0"}


def answer(message: dict) -> dict | None:
    """The response to one parsed message, or None for a notification."""
    if "id" not in message:
        return None
    msg_id = message["id"]
    method = message.get("method")
    params = message.get("params") or {}
    if method == "tools/call":
        if params.get("name") != "echo":
            return error(msg_id, -32602, "Unknown tool")
        text = (params.get("arguments") or {}).get("text", "")
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "initialize":
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else SUPPORTED_VERSIONS[-1]
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "tools/list":
        result = {"tools": [ECHO_TOOL]}
    elif method == "ping":
        result = {}
    else:
        return error(msg_id, -32601, "Method not found")
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error(msg_id: object, code: int, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}}


async def serve() -> None:
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
            reply = answer(message) if isinstance(message, dict) else None
        if reply is not None:
            writer.write(orjson.dumps(reply) + b"\n")
    writer.close()


if __name__ == "__main__":
    asyncio.run(serve())
