"""W8: the raw reference over HTTP with the `add` tool: the W6 raw ASGI app (orjson, no
sessions, no validation, no envelope checks) answering a 2026-07-28 `tools/call add` with the
result a per-request server sends (`resultType: "complete"`, text and structured content, serverInfo
in `_meta`), on the same uvicorn settings (one worker, asyncio loop, httptools unless
BENCH_UVICORN_HTTP=h11).

    python raw_add_http.py MODE PORT     (MODE ignored: every mode is the same JSON answer)
"""

import os
import sys

import orjson
import uvicorn

HEADERS = [(b"content-type", b"application/json")]
META = {"io.modelcontextprotocol/serverInfo": {"name": "bench-add", "version": "1.0.0"}}

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
    arguments = request["params"]["arguments"]
    total = arguments["a"] + arguments["b"]
    result = {
        "content": [{"type": "text", "text": str(total)}],
        "structuredContent": {"result": total},
        "isError": False,
        "resultType": "complete",
        "_meta": META,
    }
    reply = orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": reply})


if __name__ == "__main__":
    port = int(sys.argv[2])
    uvicorn.run(
        app, host="127.0.0.1", port=port, loop="asyncio", http=HTTP_PARSER, log_level="warning"
    )
