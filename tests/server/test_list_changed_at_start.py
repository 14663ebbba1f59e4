"""A list that changes while a client's handshake is finishing is still announced.

An in-process client is ready as soon as it has sent notifications/initialized, before the
server has read it; a server that could only tell ready sessions about a change would tell
this client nothing about a tool added in that moment (found by the docs' listen example).
"""

from __future__ import annotations

import asyncio

from mcpkit import Client, Server


async def test_a_tool_added_right_after_connecting_is_announced() -> None:
    server = Server("late")
    server.add_tool(lambda: "a", name="first")
    heard: asyncio.Queue[str] = asyncio.Queue()
    async with Client(server, mode="handshake", on_list_changed=heard.put_nowait) as client:
        server.add_tool(lambda: "b", name="second")  # the server may not have read initialized
        assert await asyncio.wait_for(heard.get(), 5) == "tools"
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == {"first", "second"}


async def test_nothing_is_announced_when_nothing_changed() -> None:
    server = Server("quiet")
    server.add_tool(lambda: "a", name="first")
    heard: list[str] = []
    async with Client(server, mode="handshake", on_list_changed=heard.append) as client:
        await client.ping()  # the server has read initialized by the time it answers
        await client.ping()
    assert heard == []
