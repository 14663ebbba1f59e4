"""W6: the raw reference over HTTP: a plain ASGI app that parses the JSON-RPC body with
orjson and answers tools/call with the echo result as JSON (no sessions, no validation),
on the same uvicorn settings (one worker, asyncio loop, h11).

    python raw_http.py MODE PORT     (MODE ignored: every mode is the same JSON echo)
"""

import os
import sys

import orjson
import uvicorn

HEADERS = [(b"content-type", b"application/json")]
SESSION = [(b"mcp-session-id", b"raw-session")]
INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "bench-echo", "version": "1.0.0"},
}

# uvicorn's HTTP parser, the same for every system: "httptools" (C, what uvicorn[standard] and
# mcpkit[http] install) or "h11" (pure Python).
HTTP_PARSER = os.environ.get("BENCH_UVICORN_HTTP", "httptools")


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    request = orjson.loads(body)
    if "id" not in request:  # a notification
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    if request["method"] == "tools/call":
        text = request["params"]["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    else:
        result = INIT_RESULT
    reply = orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS + SESSION})
    await send({"type": "http.response.body", "body": reply})


if __name__ == "__main__":
    port = int(sys.argv[2])
    uvicorn.run(
        app, host="127.0.0.1", port=port, loop="asyncio", http=HTTP_PARSER, log_level="warning"
    )
