"""What a peer client sent through haproxy, seen from its own HTTP client: an httpx2 response
hook records, for every exchange, the HTTP method, what the body was (a JSON-RPC method, or
"answer" for the client's reply to a server-to-client request), the worker that answered
(haproxy's `X-Worker` header) and whether it resumed a stream (`Last-Event-ID`).

Imported by the tests (our venv) and by tests/scaleout/fastmcp_client.py (FastMCP's venv):
it needs only httpx2, which both have."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx2


@dataclass(frozen=True)
class Exchange:
    verb: str  # GET, POST, DELETE
    kind: str  # the JSON-RPC method POSTed, "answer", or "" (GET, DELETE)
    worker: str  # haproxy's server name: w1, w2, w3
    status: int
    resumed: bool  # sent with Last-Event-ID


@dataclass
class Traffic:
    exchanges: list[Exchange] = field(default_factory=list)
    session_id: str | None = None
    get_open: asyncio.Event = field(default_factory=asyncio.Event)

    async def on_response(self, response: httpx2.Response) -> None:
        request = response.request
        kind = ""
        if request.method == "POST":
            body: Any = json.loads(request.content)
            kind = body.get("method", "answer") if isinstance(body, dict) else "batch"
        resumed = "last-event-id" in request.headers
        worker = response.headers.get("x-worker", "")
        self.exchanges.append(Exchange(request.method, kind, worker, response.status_code, resumed))
        self.session_id = response.headers.get("mcp-session-id", self.session_id)
        if request.method == "GET" and response.status_code == 200 and not resumed:
            self.get_open.set()

    def client(self, **kwargs: Any) -> httpx2.AsyncClient:
        """An httpx2 client recording into this (the MCP clients' default timeouts)."""
        kwargs.setdefault("timeout", httpx2.Timeout(30.0, read=300.0))
        return httpx2.AsyncClient(**kwargs, event_hooks={"response": [self.on_response]})

    def workers(self, verb: str, kind: str = "") -> list[str]:
        """The workers that answered each `verb` exchange of `kind`, in order."""
        return [e.worker for e in self.exchanges if e.verb == verb and e.kind == kind]

    def last(self, kind: str) -> Exchange:
        return [e for e in self.exchanges if e.kind == kind][-1]

    def get_worker(self) -> str:
        """The worker holding the session's (first) GET stream."""
        return next(e.worker for e in self.exchanges if e.verb == "GET" and e.status == 200)

    def as_json(self) -> list[dict[str, Any]]:
        return [asdict(e) for e in self.exchanges]
