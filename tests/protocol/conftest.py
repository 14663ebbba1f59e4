"""A client and a server `Connection` joined in memory, with no event loop."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcpkit.protocol import Connection, ConnectionConfig, Event

CLIENT_INFO = {"name": "test-client", "version": "1.0"}
SERVER_INFO = {"name": "test-server", "version": "2.0"}


class Pair:
    def __init__(self, client: Connection, server: Connection) -> None:
        self.client = client
        self.server = server
        self.now = 0.0

    def to_server(self) -> list[Event]:
        return self._move(self.client, self.server)

    def to_client(self) -> list[Event]:
        return self._move(self.server, self.client)

    def _move(self, source: Connection, target: Connection) -> list[Event]:
        events: list[Event] = []
        for out in source.data_to_send():
            events.extend(target.receive(out.data, self.now))
        return events

    def handshake(self, version: str | None = None) -> None:
        self.client.start_initialize(now=self.now, version=version)
        assert self.to_server() == []
        [initialized] = self.to_client()
        assert type(initialized).__name__ == "Initialized"
        [server_ready] = self.to_server()
        assert type(server_ready).__name__ == "Initialized"


def make_pair(
    *,
    server_capabilities: dict[str, Any] | None = None,
    client_capabilities: dict[str, Any] | None = None,
    client_versions: tuple[str, ...] | None = None,
) -> Pair:
    client_config = ConnectionConfig(
        role="client", info=CLIENT_INFO, capabilities=client_capabilities or {}
    )
    if client_versions is not None:
        client_config = ConnectionConfig(
            role="client",
            info=CLIENT_INFO,
            capabilities=client_capabilities or {},
            versions=client_versions,
        )
    server_config = ConnectionConfig(
        role="server",
        info=SERVER_INFO,
        capabilities={"tools": {}} if server_capabilities is None else server_capabilities,
        instructions="be nice",
    )
    return Pair(Connection(client_config), Connection(server_config))


def sent(connection: Connection) -> list[Any]:
    """Everything the connection queued, decoded."""
    return [orjson.loads(out.data) for out in connection.data_to_send()]


def line(message: dict[str, Any]) -> bytes:
    return orjson.dumps(message)


@pytest.fixture
def pair() -> Pair:
    return make_pair()


@pytest.fixture
def ready(pair: Pair) -> Pair:
    pair.handshake()
    return pair
