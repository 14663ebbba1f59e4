"""An MCP Apps server for the interop tests (stdio: `python tests/server/apps_fixture.py`):
a view declaring every `_meta.ui` field, a tool rendering in it, an app-only tool."""

from __future__ import annotations

from mcpkit import Server
from mcpkit.server.apps import Csp

server = Server("weather")
CSP = Csp(
    connect_domains=["https://api.weather.example", "wss://live.weather.example"],
    resource_domains=["https://cdn.example"],
    frame_domains=["https://video.example"],
    base_uri_domains=["https://base.example"],
)


@server.app(
    "ui://weather/dashboard",
    csp=CSP,
    permissions=["camera", "clipboard_write"],
    domain="weather.apps.example",
    prefers_border=False,
)
def dashboard() -> str:
    """The weather dashboard."""
    return "<!DOCTYPE html><html><body>dashboard</body></html>"


@server.tool(app="ui://weather/dashboard", visibility=["model", "app"])
def forecast(city: str = "Paris") -> str:
    """Tomorrow's weather."""
    return f"sunny in {city}"


@server.tool(visibility=["app"])
def refresh() -> str:
    """Refresh the dashboard."""
    return "refreshed"


if __name__ == "__main__":
    server.run()
