"""The HTTP front door is typed: `server.http_app(...)` and `server.run(transport="http", ...)`
name every keyword with its type and return the app's own class, so mypy refuses a keyword
that does not exist or a value of the wrong type (issue 23, "the front door is typed")."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpkit import Server
from mcpkit.transports.http.app import MCPHTTPApp
from tests.typecheck import mypy_strict

TYPED_SNIPPET = """
from mcpkit import Server
from mcpkit.transports.http.app import MCPHTTPApp
from mcpkit.transports.http.event_store import MemoryEventStore
from mcpkit.transports.http.security import Security

server = Server("typed")

app: MCPHTTPApp = server.http_app(
    path="/mcp",
    stateless=False,
    response_mode="json",
    max_sessions=10,
    idle_timeout=None,
    event_store=MemoryEventStore(10),
    security=Security(allowed_hosts=("mcp.example",)),
    http_sse=True,
    max_body=1000,
    body_timeout=None,
)
flat = server.http_app(allowed_hosts=["mcp.example"], trusted_proxies=["10.0.0.1"])
sessions: int = len(flat.sessions)

# Each line below is an error mypy must report: --strict fails on an ignore not needed.
server.http_app(max_session=10)  # type: ignore[call-arg]
server.http_app(max_sessions="10")  # type: ignore[arg-type]
server.http_app(response_mode="xml")  # type: ignore[arg-type]
server.http_app().no_such_attribute  # type: ignore[attr-defined]


def serve() -> None:
    server.run(transport="http", host="0.0.0.0", port=8000, max_sessions=5, log_level="info")
    server.run()
    server.run("stdio", max_message_size=1 << 20)
    server.run(transport="http", port="8000")  # type: ignore[call-overload]
    server.run(transport="http", idle_timeot=5)  # type: ignore[call-overload]
    server.run(port=8000)  # type: ignore[call-overload]
"""


def test_mypy_catches_a_wrong_keyword_or_value(tmp_path: Path) -> None:
    checked = mypy_strict(TYPED_SNIPPET, tmp_path)
    assert checked.returncode == 0, checked.stdout


def test_the_app_is_its_own_class_and_refuses_unknown_keywords_at_run_time() -> None:
    server = Server("typed")
    assert type(server.http_app()) is MCPHTTPApp
    with pytest.raises(TypeError, match="max_session"):
        server.http_app(max_session=10)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="response_mode"):
        server.http_app(response_mode="xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not both"):
        server.http_app(allowed_hosts=["a"], security=server.http_app().config.security)
