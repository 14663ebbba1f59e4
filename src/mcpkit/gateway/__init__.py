"""Proxy and gateway: servers whose tools, resources and prompts come from upstream servers.

`proxy(target)` is a `Server` forwarding every request to the server at `target` (docs/
gateway.md): put a stdio server on the network, or let a client of one protocol era reach a
server of the other. `gateway(config)` serves every server of an `mcpServers` configuration
behind one endpoint, named as the Host names them.
"""

from mcpkit.gateway.gateway import GatewayServer, gateway
from mcpkit.gateway.limits import UpstreamLimits
from mcpkit.gateway.proxy_server import ProxyServer, proxy

__all__ = ["GatewayServer", "ProxyServer", "UpstreamLimits", "gateway", "proxy"]
