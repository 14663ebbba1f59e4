"""The socket `server.run("http")`, `mcpkit run`, `mcpkit proxy` and the inspector serve on
(transports/http/serving.py `listening_socket`): its connections send small answers at once.

It names IPPROTO_TCP: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets that
say they are TCP, and a socket made with protocol 0 does not. Without it each answer waited
about 40 ms for the client's delayed ACK (every sequential call through `mcpkit proxy` took
44 ms instead of 1)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from mcpkit.transports.http.serving import listening_socket


async def test_accepted_connections_have_nagle_off() -> None:
    accepted: asyncio.Future[asyncio.StreamWriter] = asyncio.get_running_loop().create_future()

    def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set_result(writer)

    server = await asyncio.start_server(on_connection, sock=listening_socket("127.0.0.1", 0))
    port = server.sockets[0].getsockname()[1]
    async with server:
        _, client = await asyncio.open_connection("127.0.0.1", port)
        served = await asyncio.wait_for(accepted, 10)
        nodelay = served.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        for writer in (served, client):
            writer.close()
            await writer.wait_closed()
        assert nodelay != 0


def test_a_port_in_use_is_one_clear_error() -> None:
    taken = listening_socket("127.0.0.1", 0)
    taken.listen()
    port = taken.getsockname()[1]
    with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}"):
        listening_socket("127.0.0.1", port)
    taken.close()
