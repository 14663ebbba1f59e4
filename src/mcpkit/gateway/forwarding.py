"""`ForwardingServer`: what a proxy and a gateway do alike as servers of upstream servers.

A downstream session's upstream sessions end when it ends (`serve`), and over HTTP with a
shared state (several workers) they follow it from worker to worker (`share_upstreams`,
resume.py and home.py), whether the app is made with `http_app` or served by `run`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Unpack

from mcpkit.protocol.snapshot import SessionSnapshot
from mcpkit.runtime import MessageTransport
from mcpkit.server import Server

if TYPE_CHECKING:
    from mcpkit.gateway.upstreams import Upstreams
    from mcpkit.transports.http.app import MCPHTTPApp
    from mcpkit.transports.http.options import HTTPAppOptions


class ForwardingServer(Server):
    """A `Server` whose requests go to upstream servers (`ProxyServer`, `GatewayServer`)."""

    def upstream_sets(self) -> Iterable[Upstreams]:
        """The upstream clients of every server it forwards to."""
        raise NotImplementedError

    def share_upstreams(self, options: Mapping[str, Any]) -> None:
        """With a shared `state` in an HTTP app's `options`: upstream sessions and what one
        worker holds reached from every worker. Else nothing changes."""
        raise NotImplementedError

    def http_options(self, options: HTTPAppOptions) -> None:
        """Add what this server's HTTP endpoint needs to `options` (given ones win)."""

    async def serve(
        self, transport: MessageTransport, restored: SessionSnapshot | None = None
    ) -> None:
        """Serve one downstream connection; its upstream clients close when it ends."""
        try:
            await super().serve(transport, restored)
        finally:
            for upstreams in self.upstream_sets():
                await upstreams.close_ended()
                await upstreams.session_ended(transport)

    def http_app(self, **options: Unpack[HTTPAppOptions]) -> MCPHTTPApp:
        """As `Server.http_app`; with a shared `state`, as `share_upstreams` says."""
        self.http_options(options)
        app = super().http_app(**options)
        self.share_upstreams(options)
        return app

    def run(self, transport: str = "stdio", **options: Any) -> None:
        """As `Server.run`; over HTTP with a shared `state`, as `http_app`."""
        if transport == "http":
            self.http_options(options)  # type: ignore[arg-type]
            self.share_upstreams(options)
        super().run(transport, **options)  # type: ignore[call-overload]
