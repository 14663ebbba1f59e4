"""`server.run(max_message_size=...)` over stdio, with a real server process: a line over the
limit is refused with -32700 naming the limit, however small the line, and the next request
is answered (docs/limits.md)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import orjson

SERVER = """
from mcpkit import Server

server = Server("small")

@server.tool()
def echo(text: str) -> str:
    return text

server.run(max_message_size=1024)
"""


async def test_a_line_over_a_small_limit_is_refused_naming_the_limit(tmp_path: Path) -> None:
    script = tmp_path / "small.py"
    script.write_text(SERVER)
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        big = {**ping, "id": 2, "params": {"pad": "x" * 4000}}  # 4 KB: one pipe read, whole
        lines = [orjson.dumps(m) + b"\n" for m in (big, {**ping, "id": 3})]
        process.stdin.write(b"".join(lines))
        refused = orjson.loads(await asyncio.wait_for(process.stdout.readline(), 10))
        assert refused["id"] is None and refused["error"]["code"] == -32700
        assert "size limit (1024 bytes)" in refused["error"]["message"]
        answered = orjson.loads(await asyncio.wait_for(process.stdout.readline(), 10))
        assert answered == {"jsonrpc": "2.0", "id": 3, "result": {}}
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 10)
